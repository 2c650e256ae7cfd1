// Reads one tensor's values back from a generated GGUF file or Hugging Face directory (dequantized to f32), for tests
// that compare the two formats. Plain code: no test-runner imports.
import { closeSync, openSync, readSync } from "node:fs";
import type { GgufHeader } from "../engine/model/gguf/reader.js";
import { readSafetensorsDirectory } from "../engine/model/safetensors/reader.js";
import { dequantize } from "../kernels/formats/quantize.js";
import type { GgmlType } from "../kernels/formats/types.js";

function readBytes(path: string, offset: number, length: number): Buffer {
  const fd = openSync(path, "r");
  try {
    const bytes = Buffer.alloc(length);
    readSync(fd, bytes, 0, length, offset);
    return bytes;
  } finally {
    closeSync(fd);
  }
}

/** A GGUF tensor's GGML shape, type and dequantized values; throws naming the file when it has no such tensor. */
export function readGgufTensor(header: GgufHeader, name: string): { shape: number[]; type: GgmlType; values: Float32Array } {
  const info = header.tensors.find((t) => t.name === name);
  if (!info) throw new Error(`no tensor ${name} in ${header.path}`);
  const count = info.shape.reduce((a, b) => a * b, 1);
  return { shape: info.shape, type: info.type, values: dequantize(info.type, readBytes(header.path, info.fileOffset, info.byteLength), count) };
}

/** A safetensors tensor's shape and values from a Hugging Face directory; throws naming the directory when it has no such tensor. */
export function readHuggingFaceTensor(dir: string, name: string): { shape: number[]; values: Float32Array } {
  const info = readSafetensorsDirectory(dir).find((t) => t.name === name);
  if (!info) throw new Error(`no tensor ${name} in ${dir}`);
  const count = info.shape.reduce((a, b) => a * b, 1);
  return { shape: info.shape, values: dequantize(info.type, readBytes(info.path, info.fileOffset, info.byteLength), count) };
}
