import { mkdtempSync, readFileSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { GgmlType } from "../../../kernels/formats/types.js";
import { quantize } from "../../../kernels/formats/quantize.js";
import { readSafetensorsDirectory, readSafetensorsHeader } from "./reader.js";
import { type SafetensorsTensorInput, encodeSafetensorsHeader, writeSafetensors, writeSafetensorsModel } from "./writer.js";

const dir = mkdtempSync(join(tmpdir(), "loom-safetensors-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Parses a safetensors file by hand: header JSON and the data section. */
function parse(path: string): { header: Record<string, { dtype: string; shape: number[]; data_offsets: [number, number] }>; metadata: unknown; data: Buffer; headerLength: number } {
  const file = readFileSync(path);
  const headerLength = Number(file.readBigUInt64LE(0));
  const { __metadata__: metadata, ...header } = JSON.parse(file.toString("utf8", 8, 8 + headerLength));
  return { header, metadata, data: file.subarray(8 + headerLength), headerLength };
}

const values = (n: number, scale: number) => Float32Array.from({ length: n }, (_, i) => (i - n / 2) * scale);

describe("writeSafetensors", () => {
  it("round-trips F32, F16 and BF16 tensors with offsets, metadata and an 8-byte aligned data section", () => {
    const a = values(6, 0.25);
    const b = values(12, 0.5);
    const c = values(5, 1.5);
    const tensors: SafetensorsTensorInput[] = [
      { name: "a", dtype: "F32", shape: [2, 3], data: new Uint8Array(a.buffer) },
      { name: "b", dtype: "F16", shape: [3, 4], data: quantize(GgmlType.F16, b) },
      // produced lazily, in two chunks
      { name: "c", dtype: "BF16", shape: [5], data: () => [quantize(GgmlType.BF16, c.subarray(0, 2)), quantize(GgmlType.BF16, c.subarray(2))] },
    ];
    const path = join(dir, "three.safetensors");
    writeSafetensors(path, tensors, { format: "pt", note: "x" });
    const { header, metadata, data, headerLength } = parse(path);
    expect((8 + headerLength) % 8).toBe(0);
    expect(metadata).toEqual({ format: "pt", note: "x" });
    expect(header.a).toEqual({ dtype: "F32", shape: [2, 3], data_offsets: [0, 24] });
    expect(header.b).toEqual({ dtype: "F16", shape: [3, 4], data_offsets: [24, 48] });
    expect(header.c).toEqual({ dtype: "BF16", shape: [5], data_offsets: [48, 58] });
    expect(data.length).toBe(58);
    expect(new Float32Array(data.buffer.slice(data.byteOffset, data.byteOffset + 24))).toEqual(a);
    expect(Buffer.from(data.subarray(24, 48))).toEqual(Buffer.from(quantize(GgmlType.F16, b)));
    expect(Buffer.from(data.subarray(48, 58))).toEqual(Buffer.from(quantize(GgmlType.BF16, c)));

    // and loom's own reader agrees
    const read = readSafetensorsHeader(path);
    expect(read.map((t) => [t.name, t.type, t.shape, t.fileOffset - (8 + headerLength), t.byteLength])).toEqual([
      ["a", GgmlType.F32, [2, 3], 0, 24],
      ["b", GgmlType.F16, [3, 4], 24, 24],
      ["c", GgmlType.BF16, [5], 48, 10],
    ]);
  });

  it("refuses tensors whose bytes do not match their shape", () => {
    const path = join(dir, "bad.safetensors");
    expect(() => writeSafetensors(path, [{ name: "t", dtype: "F32", shape: [4], data: new Uint8Array(12) }])).toThrow(/'t' produced 12 bytes.*needs 16/);
    expect(() => writeSafetensors(path, [{ name: "t", dtype: "F16", shape: [2], data: () => [new Uint8Array(4), new Uint8Array(2)] }])).toThrow(/more than 4/);
  });

  it("pads the header JSON with spaces", () => {
    const header = encodeSafetensorsHeader([{ name: "x", dtype: "F32", shape: [1] }]);
    expect(header.length % 8).toBe(0);
    const json = header.toString("utf8", 8);
    expect(json.trimEnd()).toBe(JSON.stringify({ __metadata__: { format: "pt" }, x: { dtype: "F32", shape: [1], data_offsets: [0, 4] } }));
  });
});

describe("writeSafetensorsModel", () => {
  const tensors: SafetensorsTensorInput[] = ["w0", "w1", "w2", "w3"].map((name, i) => ({
    name,
    dtype: "F32",
    shape: [4, 8],
    data: new Uint8Array(values(32, i + 1).buffer),
  }));

  it("writes one model.safetensors without a shard size", () => {
    const out = mkdtempSync(join(dir, "single-"));
    const result = writeSafetensorsModel(out, tensors);
    expect(result).toEqual({ files: ["model.safetensors"], indexFile: null, totalBytes: 512 });
    expect(readdirSync(out)).toEqual(["model.safetensors"]);
    expect(readSafetensorsDirectory(out).map((t) => t.name)).toEqual(["w0", "w1", "w2", "w3"]);
  });

  it("shards at the byte limit and writes the index with every tensor's file", () => {
    const out = mkdtempSync(join(dir, "sharded-"));
    const progress: number[] = [];
    const result = writeSafetensorsModel(out, tensors, { shardBytes: 300, onTensorWritten: (_, done) => progress.push(done) });
    expect(result.files).toEqual(["model-00001-of-00002.safetensors", "model-00002-of-00002.safetensors"]);
    expect(progress).toEqual([128, 256, 384, 512]);
    const index = JSON.parse(readFileSync(join(out, "model.safetensors.index.json"), "utf8"));
    expect(index).toEqual({
      metadata: { total_size: 512 },
      weight_map: { w0: result.files[0], w1: result.files[0], w2: result.files[1], w3: result.files[1] },
    });
    const read = readSafetensorsDirectory(out);
    expect(read.map((t) => t.name).sort()).toEqual(["w0", "w1", "w2", "w3"]);
    const w3 = read.find((t) => t.name === "w3")!;
    const bytes = readFileSync(w3.path).subarray(w3.fileOffset, w3.fileOffset + w3.byteLength);
    expect(new Float32Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.length))).toEqual(values(32, 4));
  });
});
