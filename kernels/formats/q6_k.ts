// Q6_K (GGML type 14): super-blocks of 256 values, 210 bytes each: 128 bytes of low 4 bits, 64 bytes of high 2 bits,
// sixteen int8 sub-block scales, then the f16 d; value = d * scale * (q - 32), per 16-value sub-block.
import { f16ToF32, f32ToF16 } from "./f16.js";
import { type KQuantBlock, QK_K } from "./k-quant.js";

/** Encodes floats as Q6_K super-blocks with a simple absmax fit (valid GGML layout; not llama.cpp's optimiser). */
export function quantizeQ6_K(values: Float32Array): Uint8Array {
  if (values.length % QK_K !== 0) throw new RangeError(`Q6_K needs a multiple of ${QK_K} values, got ${values.length}`);
  const blocks = values.length / QK_K;
  const out = new Uint8Array(blocks * 210);
  const view = new DataView(out.buffer);
  for (let b = 0; b < blocks; b++) {
    const x = values.subarray(b * QK_K, (b + 1) * QK_K);
    const subScales: number[] = [];
    for (let j = 0; j < 16; j++) {
      let amax = 0;
      for (let i = 0; i < 16; i++) amax = Math.max(amax, Math.abs(x[j * 16 + i]));
      subScales.push(amax / 31);
    }
    const d = Math.max(...subScales) / 127;
    const dBits = f32ToF16(d);
    const dq = f16ToF32(dBits);
    const base = b * 210;
    const ql = out.subarray(base, base + 128);
    const qh = out.subarray(base + 128, base + 192);
    const sc = new Int8Array(out.buffer, out.byteOffset + base + 192, 16);
    view.setUint16(base + 208, dBits, true);
    const q = new Int32Array(QK_K);
    for (let j = 0; j < 16; j++) {
      sc[j] = dq > 0 ? Math.min(127, Math.round(subScales[j] / dq)) : 0;
      const step = dq * sc[j];
      for (let i = 0; i < 16; i++) q[j * 16 + i] = step > 0 ? Math.max(-32, Math.min(31, Math.round(x[j * 16 + i] / step))) + 32 : 32;
    }
    for (let half = 0; half < 2; half++) {
      const y = half * 128;
      for (let l = 0; l < 32; l++) {
        const q1 = q[y + l], q2 = q[y + l + 32], q3 = q[y + l + 64], q4 = q[y + l + 96];
        ql[half * 64 + l] = (q1 & 0xf) | ((q3 & 0xf) << 4);
        ql[half * 64 + l + 32] = (q2 & 0xf) | ((q4 & 0xf) << 4);
        qh[half * 32 + l] = (q1 >> 4) | ((q2 >> 4) << 2) | ((q3 >> 4) << 4) | ((q4 >> 4) << 6);
      }
    }
  }
  return out;
}

/**
 * Decodes `count` values (a multiple of 256) from Q6_K super-blocks into `out`. Unchecked: `bytes` must hold
 * count / 256 super-blocks (`dequantize` in quantize.ts checks).
 */
export function dequantizeQ6_K(bytes: Uint8Array, count: number, out: Float32Array): Float32Array {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  for (let b = 0; b < count / QK_K; b++) dequantizeQ6_KBlock(bytes, view, b * 210, out, b * QK_K);
  return out;
}

function dequantizeQ6_KBlock(bytes: Uint8Array, view: DataView, base: number, out: Float32Array, o: number): void {
  const d = f16ToF32(view.getUint16(base + 208, true));
  for (let half = 0; half < 2; half++) {
    const ql = base + half * 64;
    const qh = base + 128 + half * 32;
    const sc = base + 192 + half * 8;
    const y = o + half * 128;
    for (let l = 0; l < 32; l++) {
      const is = l >> 4;
      const high = bytes[qh + l];
      const q1 = ((bytes[ql + l] & 0xf) | ((high & 3) << 4)) - 32;
      const q2 = ((bytes[ql + l + 32] & 0xf) | (((high >> 2) & 3) << 4)) - 32;
      const q3 = ((bytes[ql + l] >> 4) | (((high >> 4) & 3) << 4)) - 32;
      const q4 = ((bytes[ql + l + 32] >> 4) | (((high >> 6) & 3) << 4)) - 32;
      out[y + l] = Math.fround(Math.fround(d * view.getInt8(sc + is)) * q1);
      out[y + l + 32] = Math.fround(Math.fround(d * view.getInt8(sc + is + 2)) * q2);
      out[y + l + 64] = Math.fround(Math.fround(d * view.getInt8(sc + is + 4)) * q3);
      out[y + l + 96] = Math.fround(Math.fround(d * view.getInt8(sc + is + 6)) * q4);
    }
  }
}

/** The integer view of the Q6_K super-block at byte `base` (see KQuantBlock; no mins, quants offset by -32). */
export function unpackQ6_K(bytes: Uint8Array, base: number): KQuantBlock {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const scales = new Int32Array(16);
  const quants = new Int32Array(QK_K);
  for (let g = 0; g < 16; g++) scales[g] = view.getInt8(base + 192 + g);
  for (let half = 0; half < 2; half++) {
    for (let l = 0; l < 32; l++) {
      const high = bytes[base + 128 + half * 32 + l];
      const low = bytes[base + half * 64 + l];
      const low32 = bytes[base + half * 64 + l + 32];
      const y = half * 128;
      quants[y + l] = ((low & 0xf) | ((high & 3) << 4)) - 32;
      quants[y + l + 32] = ((low32 & 0xf) | (((high >> 2) & 3) << 4)) - 32;
      quants[y + l + 64] = ((low >> 4) | (((high >> 4) & 3) << 4)) - 32;
      quants[y + l + 96] = ((low32 >> 4) | (((high >> 6) & 3) << 4)) - 32;
    }
  }
  return { d: f16ToF32(view.getUint16(base + 208, true)), dmin: 0, subBlockSize: 16, scales, mins: new Int32Array(16), quants };
}
