// Writes a GGUF v3 file whose tensor bytes are produced lazily, one chunk at a time, so a generator never holds
// a whole model in memory (engine/model/gguf/writer.ts takes every tensor's bytes up front).
// The header comes from engine/model/gguf/writer.ts's encodeGgufHeader, so both writers produce one layout.
import { closeSync, openSync, writeSync } from "node:fs";
import { type GgmlType, tensorByteLength } from "../kernels/formats/types.js";
import { type GgufTypedValue, encodeGgufHeader } from "../engine/model/gguf/writer.js";

/** A tensor whose GGML bytes are produced when it is written. */
export interface StreamedGgufTensor {
  name: string;
  /** GGML order: shape[0] is the row length. */
  shape: number[];
  type: GgmlType;
  /** Yields the tensor's bytes in order; called once. */
  chunks: () => Iterable<Uint8Array>;
}

/** Total bytes of the tensor data section, for progress reports. */
export function ggufDataBytes(tensors: readonly Pick<StreamedGgufTensor, "shape" | "type">[]): number {
  return tensors.reduce((sum, t) => sum + tensorByteLength(t.type, t.shape.reduce((a, b) => a * b, 1)), 0);
}

/**
 * Writes a GGUF v3 file, pulling each tensor's bytes from its `chunks()` in order.
 * Throws if a tensor yields more or fewer bytes than its shape and type need.
 */
export function writeGgufStreaming(
  path: string,
  metadata: ReadonlyArray<[string, GgufTypedValue]>,
  tensors: readonly StreamedGgufTensor[],
  onTensorWritten?: (name: string, bytes: number) => void,
): void {
  const { header, offsets, sizes } = encodeGgufHeader(metadata, tensors);
  const fd = openSync(path, "w");
  try {
    writeSync(fd, header);
    let position = 0;
    tensors.forEach((tensor, i) => {
      if (offsets[i] > position) writeSync(fd, Buffer.alloc(offsets[i] - position));
      let written = 0;
      for (const chunk of tensor.chunks()) {
        written += chunk.length;
        if (written > sizes[i]) break;
        writeSync(fd, chunk);
      }
      if (written !== sizes[i]) {
        throw new RangeError(`GGUF tensor '${tensor.name}' produced ${written > sizes[i] ? `more than ${sizes[i]}` : written} bytes; shape [${tensor.shape}] needs ${sizes[i]}`);
      }
      position = offsets[i] + sizes[i];
      onTensorWritten?.(tensor.name, sizes[i]);
    });
  } finally {
    closeSync(fd);
  }
}
