// Q5_0 (GGML type 6): blocks of 32 values, 22 bytes each: an f16 scale d, 4 bytes qh (a little-endian u32 whose bit j
// is the fifth bit of value j), then 16 bytes of low nibbles (byte j holds value j's in its low nibble and value
// j + 16's in its high nibble); value = (q - 16) * d with q = nibble | fifth bit << 4.
import { f16ToF32, f32ToF16 } from "./f16.js";

const QK = 32; // elements per Q5_0 block (BLOCK_LAYOUT in types.ts)
const BYTES = 22;

/** The 5-bit quants (0..31) of one Q5_0 / Q5_1 block: qh at `qhAt` (u32 LE), nibbles at `qsAt`. */
export function unpack5(bytes: Uint8Array, qhAt: number, qsAt: number, out: Int32Array = new Int32Array(QK)): Int32Array {
  const qh = (bytes[qhAt] | (bytes[qhAt + 1] << 8) | (bytes[qhAt + 2] << 16) | (bytes[qhAt + 3] << 24)) >>> 0;
  for (let j = 0; j < QK / 2; j++) {
    const byte = bytes[qsAt + j];
    out[j] = (byte & 0xf) | (((qh >>> j) & 1) << 4);
    out[j + QK / 2] = (byte >> 4) | (((qh >>> (j + 16)) & 1) << 4);
  }
  return out;
}

/** Packs 32 quants (0..31) into qh at `qhAt` and nibbles at `qsAt`, as GGML lays them out. */
export function pack5(quants: ArrayLike<number>, out: Uint8Array, qhAt: number, qsAt: number): void {
  let qh = 0;
  for (let j = 0; j < QK / 2; j++) {
    const q0 = quants[j], q1 = quants[j + QK / 2];
    out[qsAt + j] = (q0 & 0xf) | ((q1 & 0xf) << 4);
    qh |= ((q0 >> 4) & 1) << j;
    qh |= ((q1 >> 4) & 1) << (j + 16);
  }
  out[qhAt] = qh & 0xff; out[qhAt + 1] = (qh >>> 8) & 0xff; out[qhAt + 2] = (qh >>> 16) & 0xff; out[qhAt + 3] = qh >>> 24;
}

/** Encodes floats as Q5_0 blocks (absmax fit), as GGML's reference quantizer (quantize_row_q5_0_ref) does. */
export function quantizeQ5_0(values: Float32Array): Uint8Array {
  if (values.length % QK !== 0) throw new RangeError(`Q5_0 needs a multiple of ${QK} values, got ${values.length}`);
  const blocks = values.length / QK;
  const out = new Uint8Array(blocks * BYTES);
  const view = new DataView(out.buffer);
  const quants = new Int32Array(QK);
  for (let b = 0; b < blocks; b++) {
    let amax = 0;
    let max = 0;
    for (let i = 0; i < QK; i++) {
      const v = values[b * QK + i];
      if (Math.abs(v) > amax) { amax = Math.abs(v); max = v; }
    }
    const d = Math.fround(max / -16);
    const id = d !== 0 ? Math.fround(1 / d) : 0;
    view.setUint16(b * BYTES, f32ToF16(d), true);
    for (let i = 0; i < QK; i++) {
      const x = Math.fround(values[b * QK + i] * id);
      quants[i] = Math.min(31, Math.trunc(Math.fround(x + 16.5)));
    }
    pack5(quants, out, b * BYTES + 2, b * BYTES + 6);
  }
  return out;
}

/**
 * Decodes `count` values (a multiple of 32) from Q5_0 blocks into `out`. Unchecked: `bytes` must hold count / 32
 * blocks (`dequantize` in quantize.ts checks).
 */
export function dequantizeQ5_0(bytes: Uint8Array, count: number, out: Float32Array): Float32Array {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const quants = new Int32Array(QK);
  for (let b = 0; b < count / QK; b++) {
    const d = f16ToF32(view.getUint16(b * BYTES, true));
    unpack5(bytes, b * BYTES + 2, b * BYTES + 6, quants);
    for (let i = 0; i < QK; i++) out[b * QK + i] = Math.fround((quants[i] - 16) * d);
  }
  return out;
}
