// The reference (plain TypeScript) encoders and decoders of every tensor type loom reads, by type: the definitions
// the WebAssembly and WGSL kernels are checked against, and what the random-model generator uses to write files.
// Each block type's layout and code is in its own file (q8_0.ts, q4_0.ts, q4_1.ts, q5_0.ts, q5_1.ts, q4_k.ts, q5_k.ts, q6_k.ts, mxfp4.ts,
// f16.ts, bf16.ts); layouts follow GGML's block structs byte for byte.
import { bf16ToF32, encodeBf16 } from "./bf16.js";
import { encodeF16, f16ToF32 } from "./f16.js";
import { dequantizeQ4_0, quantizeQ4_0 } from "./q4_0.js";
import { dequantizeQ4_1, quantizeQ4_1 } from "./q4_1.js";
import { dequantizeQ5_0, quantizeQ5_0 } from "./q5_0.js";
import { dequantizeQ5_1, quantizeQ5_1 } from "./q5_1.js";
import { dequantizeQ4_K, quantizeQ4_K } from "./q4_k.js";
import { dequantizeQ5_K, quantizeQ5_K } from "./q5_k.js";
import { dequantizeQ6_K, quantizeQ6_K } from "./q6_k.js";
import { dequantizeQ8_0, quantizeQ8_0 } from "./q8_0.js";
import { dequantizeMxfp4, quantizeMxfp4 } from "./mxfp4.js";
import { BLOCK_LAYOUT, GgmlType, ggmlTypeName } from "./types.js";

/** Decodes `count` values of any readable type from raw GGML bytes into floats (the reference dequantizer). */
export function dequantize(type: GgmlType, bytes: Uint8Array, count: number, out: Float32Array = new Float32Array(count)): Float32Array {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const { blockElements, blockBytes } = BLOCK_LAYOUT[type];
  if (count % blockElements !== 0 || bytes.byteLength < (count / blockElements) * blockBytes) {
    throw new RangeError(`${ggmlTypeName(type)}: ${bytes.byteLength} bytes cannot hold ${count} values`);
  }
  switch (type) {
    case GgmlType.F32:
      for (let i = 0; i < count; i++) out[i] = view.getFloat32(i * 4, true);
      return out;
    case GgmlType.F16:
      for (let i = 0; i < count; i++) out[i] = f16ToF32(view.getUint16(i * 2, true));
      return out;
    case GgmlType.BF16:
      for (let i = 0; i < count; i++) out[i] = bf16ToF32(view.getUint16(i * 2, true));
      return out;
    case GgmlType.Q8_0:
      return dequantizeQ8_0(bytes, count, out);
    case GgmlType.Q4_0:
      return dequantizeQ4_0(bytes, count, out);
    case GgmlType.Q4_1:
      return dequantizeQ4_1(bytes, count, out);
    case GgmlType.Q5_0:
      return dequantizeQ5_0(bytes, count, out);
    case GgmlType.Q5_1:
      return dequantizeQ5_1(bytes, count, out);
    case GgmlType.Q4_K:
      return dequantizeQ4_K(bytes, count, out);
    case GgmlType.Q5_K:
      return dequantizeQ5_K(bytes, count, out);
    case GgmlType.Q6_K:
      return dequantizeQ6_K(bytes, count, out);
    case GgmlType.MXFP4:
      return dequantizeMxfp4(bytes, count, out);
  }
}

/** Encodes floats in any writable type (F32, F16, BF16, Q8_0, Q4_0, Q4_1, Q5_0, Q5_1, Q4_K, Q5_K, Q6_K, MXFP4) as raw GGML bytes. */
export function quantize(type: GgmlType, values: Float32Array): Uint8Array {
  switch (type) {
    case GgmlType.F32:
      return new Uint8Array(Float32Array.from(values).buffer);
    case GgmlType.F16:
      return encodeF16(values);
    case GgmlType.BF16:
      return encodeBf16(values);
    case GgmlType.Q8_0:
      return quantizeQ8_0(values);
    case GgmlType.Q4_0:
      return quantizeQ4_0(values);
    case GgmlType.Q4_1:
      return quantizeQ4_1(values);
    case GgmlType.Q5_0:
      return quantizeQ5_0(values);
    case GgmlType.Q5_1:
      return quantizeQ5_1(values);
    case GgmlType.Q4_K:
      return quantizeQ4_K(values);
    case GgmlType.Q5_K:
      return quantizeQ5_K(values);
    case GgmlType.Q6_K:
      return quantizeQ6_K(values);
    case GgmlType.MXFP4:
      return quantizeMxfp4(values);
  }
}
