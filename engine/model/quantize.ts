// Reference (plain TypeScript) encoders and decoders for every tensor type loom reads.
// These are the definitions the WebAssembly and WGSL kernels are checked against, and what the
// random-model generator uses to write files. Layouts follow GGML's block structs byte for byte.
import { BLOCK_LAYOUT, GgmlType, bf16ToF32, f16ToF32, f32BitsToBf16, f32BitsToF16, f32ToF16, ggmlTypeName } from "./dtypes.js";

const QK = 32; // elements per Q8_0 / Q4_0 block
const QK_K = 256; // elements per K-quant super-block

// (x + 1.5 * 2^52) - 1.5 * 2^52 rounds a double to the nearest integer, ties to even (for |x| well below 2^51).
const ROUND_MAGIC = 6755399441055744;

/** Little-endian F16 bytes of `values`, rounding to nearest even. Typed-array loops: generators encode billions. */
function encodeF16(values: Float32Array): Uint8Array {
  const bits = new Uint32Array(Float32Array.from(values).buffer);
  const out = new Uint16Array(values.length);
  for (let i = 0; i < bits.length; i++) out[i] = f32BitsToF16(bits[i]);
  return new Uint8Array(out.buffer);
}

/** Little-endian BF16 bytes of `values`, rounding to nearest even, NaN kept NaN. */
function encodeBf16(values: Float32Array): Uint8Array {
  const bits = new Uint32Array(Float32Array.from(values).buffer);
  const out = new Uint16Array(values.length);
  for (let i = 0; i < bits.length; i++) out[i] = f32BitsToBf16(bits[i]);
  return new Uint8Array(out.buffer);
}

/**
 * Encodes floats as Q8_0 blocks (f16 scale + 32 int8). Uses GGML's AVX rounding: q = nearest-even(x * 127/amax),
 * scale = amax/127 stored as f16, so activations quantized here match llama.cpp's CPU path exactly.
 */
export function quantizeQ8_0(values: Float32Array): Uint8Array {
  if (values.length % QK !== 0) throw new RangeError(`Q8_0 needs a multiple of ${QK} values, got ${values.length}`);
  const blocks = values.length / QK;
  const out = new Uint8Array(blocks * 34);
  const signed = new Int8Array(out.buffer);
  for (let b = 0; b < blocks; b++) {
    const base = b * QK;
    let amax = 0;
    for (let i = 0; i < QK; i++) amax = Math.max(amax, Math.abs(values[base + i]));
    const scale = f32ToF16(Math.fround(amax / 127));
    out[b * 34] = scale & 0xff;
    out[b * 34 + 1] = scale >>> 8;
    const id = amax !== 0 ? Math.fround(127 / amax) : 0;
    for (let i = 0; i < QK; i++) signed[b * 34 + 2 + i] = Math.fround(values[base + i] * id) + ROUND_MAGIC - ROUND_MAGIC;
  }
  return out;
}

/** Encodes floats as Q4_0 blocks (f16 scale + 16 bytes of nibbles), as GGML's reference quantizer does. */
export function quantizeQ4_0(values: Float32Array): Uint8Array {
  if (values.length % QK !== 0) throw new RangeError(`Q4_0 needs a multiple of ${QK} values, got ${values.length}`);
  const blocks = values.length / QK;
  const out = new Uint8Array(blocks * 18);
  const view = new DataView(out.buffer);
  for (let b = 0; b < blocks; b++) {
    let amax = 0;
    let max = 0;
    for (let i = 0; i < QK; i++) {
      const v = values[b * QK + i];
      if (Math.abs(v) > amax) { amax = Math.abs(v); max = v; }
    }
    const d = Math.fround(max / -8);
    const id = d !== 0 ? Math.fround(1 / d) : 0;
    view.setUint16(b * 18, f32ToF16(d), true);
    for (let j = 0; j < QK / 2; j++) {
      const x0 = Math.fround(values[b * QK + j] * id);
      const x1 = Math.fround(values[b * QK + QK / 2 + j] * id);
      const q0 = Math.min(15, Math.trunc(Math.fround(x0 + 8.5)));
      const q1 = Math.min(15, Math.trunc(Math.fround(x1 + 8.5)));
      out[b * 18 + 2 + j] = q0 | (q1 << 4);
    }
  }
  return out;
}

/** Packs the 6-bit scale and min of sub-block j into Q4_K's 12-byte scales array. */
function setScaleMinK4(scales: Uint8Array, j: number, scale: number, min: number): void {
  if (j < 4) {
    scales[j] = (scales[j] & 0xc0) | scale;
    scales[j + 4] = (scales[j + 4] & 0xc0) | min;
  } else {
    scales[j + 4] = (scale & 0xf) | ((min & 0xf) << 4);
    scales[j - 4] = (scales[j - 4] & 0x3f) | ((scale >> 4) << 6);
    scales[j] = (scales[j] & 0x3f) | ((min >> 4) << 6);
  }
}

/** Unpacks sub-block j's 6-bit scale and min from Q4_K's scales array (GGML's get_scale_min_k4). */
function getScaleMinK4(scales: Uint8Array, j: number): [number, number] {
  if (j < 4) return [scales[j] & 63, scales[j + 4] & 63];
  return [(scales[j + 4] & 0xf) | ((scales[j - 4] >> 6) << 4), (scales[j + 4] >> 4) | ((scales[j] >> 6) << 4)];
}

/** Encodes floats as Q4_K super-blocks with a simple min/max fit (valid GGML layout; not llama.cpp's optimiser). */
export function quantizeQ4_K(values: Float32Array): Uint8Array {
  if (values.length % QK_K !== 0) throw new RangeError(`Q4_K needs a multiple of ${QK_K} values, got ${values.length}`);
  const blocks = values.length / QK_K;
  const out = new Uint8Array(blocks * 144);
  const view = new DataView(out.buffer);
  for (let b = 0; b < blocks; b++) {
    const x = values.subarray(b * QK_K, (b + 1) * QK_K);
    const subScales: number[] = [];
    const subMins: number[] = [];
    for (let j = 0; j < 8; j++) {
      let lo = 0;
      let hi = 0;
      for (let i = 0; i < 32; i++) { lo = Math.min(lo, x[j * 32 + i]); hi = Math.max(hi, x[j * 32 + i]); }
      subScales.push((hi - lo) / 15);
      subMins.push(-lo);
    }
    const d = Math.max(...subScales) / 63;
    const dmin = Math.max(...subMins) / 63;
    const dBits = f32ToF16(d);
    const dminBits = f32ToF16(dmin);
    view.setUint16(b * 144, dBits, true);
    view.setUint16(b * 144 + 2, dminBits, true);
    const scales = out.subarray(b * 144 + 4, b * 144 + 16);
    const qs = out.subarray(b * 144 + 16, b * 144 + 144);
    const dq = f16ToF32(dBits);
    const dminq = f16ToF32(dminBits);
    for (let j = 0; j < 8; j++) {
      const sc = dq > 0 ? Math.min(63, Math.round(subScales[j] / dq)) : 0;
      const m = dminq > 0 ? Math.min(63, Math.round(subMins[j] / dminq)) : 0;
      setScaleMinK4(scales, j, sc, m);
      const step = dq * sc;
      for (let i = 0; i < 32; i++) {
        const q = step > 0 ? Math.max(0, Math.min(15, Math.round((x[j * 32 + i] + dminq * m) / step))) : 0;
        const byte = (j >> 1) * 32 + i; // pairs of sub-blocks share 32 bytes: low nibbles first, then high
        qs[byte] = j % 2 === 0 ? (qs[byte] & 0xf0) | q : (qs[byte] & 0x0f) | (q << 4);
      }
    }
  }
  return out;
}

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
      for (let b = 0; b < count / QK; b++) {
        const d = f16ToF32(view.getUint16(b * 34, true));
        for (let i = 0; i < QK; i++) out[b * QK + i] = Math.fround(view.getInt8(b * 34 + 2 + i) * d);
      }
      return out;
    case GgmlType.Q4_0:
      for (let b = 0; b < count / QK; b++) {
        const d = f16ToF32(view.getUint16(b * 18, true));
        for (let j = 0; j < QK / 2; j++) {
          const byte = bytes[b * 18 + 2 + j];
          out[b * QK + j] = Math.fround(((byte & 0xf) - 8) * d);
          out[b * QK + j + QK / 2] = Math.fround(((byte >> 4) - 8) * d);
        }
      }
      return out;
    case GgmlType.Q4_K:
      for (let b = 0; b < count / QK_K; b++) dequantizeQ4_KBlock(bytes, view, b * 144, out, b * QK_K);
      return out;
    case GgmlType.Q6_K:
      for (let b = 0; b < count / QK_K; b++) dequantizeQ6_KBlock(bytes, view, b * 210, out, b * QK_K);
      return out;
  }
}

function dequantizeQ4_KBlock(bytes: Uint8Array, view: DataView, base: number, out: Float32Array, o: number): void {
  const d = f16ToF32(view.getUint16(base, true));
  const dmin = f16ToF32(view.getUint16(base + 2, true));
  const scales = bytes.subarray(base + 4, base + 16);
  let q = base + 16;
  for (let j = 0, is = 0; j < QK_K; j += 64, is += 2, q += 32) {
    const [sc1, m1] = getScaleMinK4(scales, is);
    const [sc2, m2] = getScaleMinK4(scales, is + 1);
    const d1 = Math.fround(d * sc1), min1 = Math.fround(dmin * m1);
    const d2 = Math.fround(d * sc2), min2 = Math.fround(dmin * m2);
    for (let l = 0; l < 32; l++) out[o + j + l] = Math.fround(Math.fround(d1 * (bytes[q + l] & 0xf)) - min1);
    for (let l = 0; l < 32; l++) out[o + j + 32 + l] = Math.fround(Math.fround(d2 * (bytes[q + l] >> 4)) - min2);
  }
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

/** Encodes floats in any writable type (F32, F16, BF16, Q8_0, Q4_0, Q4_K, Q6_K) as raw GGML bytes. */
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
    case GgmlType.Q4_K:
      return quantizeQ4_K(values);
    case GgmlType.Q6_K:
      return quantizeQ6_K(values);
  }
}
