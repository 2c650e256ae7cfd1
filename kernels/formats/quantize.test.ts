import { describe, expect, it } from "vitest";
import { GgmlType } from "./types.js";
import { f16ToF32, f32ToF16 } from "./f16.js";
import { f32ToBf16 } from "./bf16.js";
import { dequantize, quantize } from "./quantize.js";
import { quantizeQ8_K } from "./q8_k.js";
import { quantizeQ8_0 } from "./q8_0.js";
import { quantizeQ8_1 } from "./q8_1.js";
import { firstNonFiniteScale } from "./block-scales.js";
import { MXFP4_KVALUES, e8m0Half } from "./mxfp4.js";

function randomValues(n: number, seed = 1): Float32Array {
  let s = seed >>> 0;
  const out = new Float32Array(n);
  for (let i = 0; i < n; i++) {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    out[i] = (s / 2 ** 32 - 0.5) * 2;
  }
  return out;
}

function relativeError(a: Float32Array, b: Float32Array): number {
  let num = 0, den = 0;
  for (let i = 0; i < a.length; i++) { num += (a[i] - b[i]) ** 2; den += a[i] ** 2; }
  return Math.sqrt(num / den);
}

describe("reference quantizers", () => {
  it("round-trips f16 conversion exactly for representable values, with nearest-even rounding", () => {
    for (const bits of [0, 1, 0x3ff, 0x400, 0x3c00, 0x7bff, 0x8001, 0xfbff]) expect(f32ToF16(f16ToF32(bits))).toBe(bits);
    expect(f32ToF16(1 + 2 ** -11)).toBe(0x3c00); // tie goes to even
    expect(f32ToF16(1 + 3 * 2 ** -11)).toBe(0x3c02);
    expect(f32ToF16(70000)).toBe(0x7c00);
  });

  const cases: Array<[GgmlType, number]> = [
    [GgmlType.F32, 0], [GgmlType.F16, 1e-3], [GgmlType.BF16, 5e-3], [GgmlType.Q8_0, 1e-2],
    [GgmlType.Q4_0, 0.12], [GgmlType.Q4_1, 0.1], [GgmlType.Q5_0, 0.06], [GgmlType.Q5_1, 0.05], [GgmlType.Q4_K, 0.12], [GgmlType.Q5_K, 0.06], [GgmlType.Q6_K, 0.04],
    [GgmlType.MXFP4, 0.2],
  ];
  for (const [type, tolerance] of cases) {
    it(`dequantize(quantize(x)) stays close to x for ${GgmlType[type]}`, () => {
      const x = randomValues(1024, type + 7);
      const y = dequantize(type, quantize(type, x), x.length);
      expect(relativeError(x, y)).toBeLessThanOrEqual(tolerance);
    });
  }

  it("quantizes Q8_0 exactly: scale amax/127, values rounded", () => {
    const x = new Float32Array(32);
    x[0] = 127; x[1] = -63.5; x[2] = 1.5;
    const bytes = quantize(GgmlType.Q8_0, x);
    expect(f16ToF32(bytes[0] | (bytes[1] << 8))).toBe(1);
    expect(new Int8Array(bytes.buffer, 2, 3)).toEqual(new Int8Array([127, -64, 2]));
  });

  it("encodes F16 and BF16 exactly as the scalar conversions do, including ties, subnormals, overflow and NaN", () => {
    const bits = new Uint32Array(20000);
    let state = 12345;
    for (let i = 0; i < bits.length; i++) {
      state = (Math.imul(state, 1103515245) + 12345) >>> 0;
      bits[i] = state;
    }
    const special = [0, -0, 1, -1, 65504, 65520, 1e6, -1e6, 6.1e-5, 5.96e-8, 2.98e-8, 1e-10, Infinity, -Infinity, NaN, 1 + 2 ** -11, 1 + 3 * 2 ** -11, 3.3895e38];
    const values = new Float32Array(bits.length + special.length);
    values.set(new Float32Array(bits.buffer));
    values.set(special, bits.length);
    const ties = Float32Array.from({ length: 4096 }, (_, i) => (i - 2048) * 2 ** -14 + 2 ** -25);
    for (const input of [values, ties]) {
      expect(Buffer.from(quantize(GgmlType.F16, input)).equals(Buffer.from(new Uint16Array(Array.from(input, f32ToF16)).buffer))).toBe(true);
      expect(Buffer.from(quantize(GgmlType.BF16, input)).equals(Buffer.from(new Uint16Array(Array.from(input, f32ToBf16)).buffer))).toBe(true);
    }
  });

  it("quantizes Q8_0 as its definition says on random, tied, zero and extreme blocks", () => {
    const q8 = new Float32Array(32 * 600);
    for (let i = 0; i < q8.length; i++) q8[i] = Math.sin(i * 0.37) * 10 ** ((i >> 5) % 7 - 3);
    for (let i = 0; i < 32; i++) q8[32 * 10 + i] = (i - 16) * 0.5 + (i === 0 ? 63.5 : 0);
    for (let i = 0; i < 32; i++) q8[32 * 11 + i] = 0;
    for (let i = 0; i < 32; i++) q8[32 * 12 + i] = i % 2 ? 127 : 0.5;
    const bytes = quantize(GgmlType.Q8_0, q8);
    const view = new DataView(bytes.buffer);
    for (let b = 0; b < q8.length / 32; b++) {
      const block = q8.subarray(b * 32, b * 32 + 32);
      const amax = Math.max(...Array.from(block, Math.abs));
      expect(view.getUint16(b * 34, true)).toBe(f32ToF16(Math.fround(amax / 127)));
      const id = amax !== 0 ? Math.fround(127 / amax) : 0;
      for (let i = 0; i < 32; i++) {
        const scaled = Math.fround(block[i] * id);
        const nearest = Math.round(scaled);
        const evenTie = nearest - scaled === 0.5 && nearest % 2 !== 0 ? nearest - 1 : nearest;
        expect(view.getInt8(b * 34 + 2 + i)).toBe(evenTie | 0); // | 0: an int8 has no -0
      }
    }
  });
});

describe("Q8_K (the activation format of K-quant dot products)", () => {
  it("maps the first value of largest magnitude to -127, rounds ties to even, clamps at 127 and sums groups of 16", () => {
    const x = new Float32Array(256);
    x[0] = 2; x[1] = -4; x[2] = 4; x[3] = 1.007874; x[4] = -1; // -4 is the first of largest magnitude: iscale 31.75
    x[5] = 0.5 / 31.75; x[6] = 1.5 / 31.75;
    const bytes = quantizeQ8_K(x);
    const view = new DataView(bytes.buffer);
    const iscale = Math.fround(-127 / -4);
    expect(view.getFloat32(0, true)).toBe(Math.fround(1 / iscale));
    const q = new Int8Array(bytes.buffer, 4, 256);
    expect(Array.from(q.subarray(0, 7))).toEqual([64, -127, 127, 32, -32, 0, 2]);
    expect(view.getInt16(4 + 256, true)).toBe(64 - 127 + 127 + 32 - 32 + 0 + 2);
    for (let g = 1; g < 16; g++) expect(view.getInt16(4 + 256 + g * 2, true)).toBe(0);
  });

  it("leaves an all-zero block all zero (d, quants and sums)", () => {
    const bytes = quantizeQ8_K(new Float32Array(512).fill(1, 256));
    expect(bytes.subarray(0, 292).every((byte) => byte === 0)).toBe(true);
    expect(new DataView(bytes.buffer).getFloat32(292, true)).toBeCloseTo(-1 / 127, 6);
  });
});

describe("Q4_1, Q5_0 and Q5_1 (GGML's legacy 32-value blocks)", () => {
  it("lays out Q5_0 as ggml: qh bit j is value j's fifth bit, byte j's low nibble value j, high nibble value j + 16", () => {
    const x = new Float32Array(32);
    for (let i = 0; i < 32; i++) x[i] = i - 16; // max |x| = 16 at i = 0: d = -1, q = 16 - x
    x[0] = -16;
    const bytes = quantize(GgmlType.Q5_0, x);
    expect(f16ToF32(bytes[0] | (bytes[1] << 8))).toBe(1); // d = max / -16 = 1
    const qh = (bytes[2] | (bytes[3] << 8) | (bytes[4] << 16) | (bytes[5] << 24)) >>> 0;
    for (let j = 0; j < 16; j++) {
      const q0 = j, q1 = j + 16; // q = x / d + 16 = i
      expect(bytes[6 + j]).toBe((q0 & 0xf) | ((q1 & 0xf) << 4));
      expect((qh >>> j) & 1).toBe(q0 >> 4);
      expect((qh >>> (j + 16)) & 1).toBe(q1 >> 4);
    }
    expect(Array.from(dequantize(GgmlType.Q5_0, bytes, 32))).toEqual(Array.from(x));
  });

  it("decodes Q4_1 and Q5_1 as d * q + m, the minimum exact", () => {
    const x = Float32Array.from({ length: 32 }, (_, i) => 2 + i * 0.5); // min 2, range 15.5
    const q4 = quantize(GgmlType.Q4_1, x);
    expect(f16ToF32(q4[2] | (q4[3] << 8))).toBe(2);
    expect(dequantize(GgmlType.Q4_1, q4, 32)[0]).toBe(2);
    const q5 = quantize(GgmlType.Q5_1, x);
    expect(f16ToF32(q5[0] | (q5[1] << 8))).toBe(0.5); // (max - min) / 31
    expect(Array.from(dequantize(GgmlType.Q5_1, q5, 32))).toEqual(Array.from(x));
  });

  it("finds non-finite d and m scales", () => {
    for (const [type, bytes, at] of [[GgmlType.Q4_1, 20, 2], [GgmlType.Q5_0, 22, 0], [GgmlType.Q5_1, 24, 2]] as const) {
      const block = quantize(type, randomValues(64, 3));
      expect(firstNonFiniteScale(type, block)).toBeUndefined();
      block[bytes + at] = 0x00; block[bytes + at + 1] = 0x7c;
      expect(firstNonFiniteScale(type, block)).toEqual({ block: 1, blocks: 2, bits: 0x7c00 });
    }
  });
});

describe("Q8_1 (the activation format of Q4_1 / Q5_1 dot products)", () => {
  it("holds Q8_0's scale and quants, and s = d * sum(q) in f16", () => {
    const x = randomValues(32 * 50, 9);
    for (let i = 0; i < 32; i++) x[i] = 0;
    const q8_0 = quantizeQ8_0(x);
    const q8_1 = quantizeQ8_1(x);
    const v = new DataView(q8_1.buffer);
    for (let b = 0; b < 50; b++) {
      expect(v.getUint16(b * 36, true)).toBe(q8_0[b * 34] | (q8_0[b * 34 + 1] << 8));
      const quants = new Int8Array(q8_1.buffer, b * 36 + 4, 32);
      expect(Array.from(quants)).toEqual(Array.from(new Int8Array(q8_0.buffer, b * 34 + 2, 32)));
      const sum = quants.reduce((a, q) => a + q, 0);
      const amax = Math.max(...Array.from(x.subarray(b * 32, b * 32 + 32), Math.abs));
      expect(v.getUint16(b * 36 + 2, true)).toBe(f32ToF16(Math.fround(Math.fround(amax / 127) * sum)));
    }
  });
});

// Expected bytes below are what ggml's own quantize_row_mxfp4_ref (node-llama-cpp's libggml-base, x86-64) wrote for
// the same inputs; the reasons are in each comment.
describe("MXFP4 (E8M0 exponent + e2m1 codes, gpt-oss's experts)", () => {
  const block = (...head: number[]) => Float32Array.from({ length: 32 }, (_, i) => head[i] ?? 0);
  const hex = (bytes: Uint8Array) => Buffer.from(bytes).toString("hex");

  it("lays out a block as ggml: e, then byte j holds value j's code low and value j + 16's high", () => {
    // amax 6: e = floor(log2 6) - 2 + 127 = 127, d = 2^-1, so x = kvalue / 2 is exact for every code.
    const codes = Array.from({ length: 32 }, (_, i) => (i * 7 + 3) % 16);
    const x = Float32Array.from(codes, (c) => MXFP4_KVALUES[c] / 2);
    x[0] = 6; codes[0] = 7;
    const bytes = quantize(GgmlType.MXFP4, x);
    expect(bytes.length).toBe(17);
    expect(bytes[0]).toBe(127);
    // Codes 0 and 8 both decode to 0; ggml's search keeps the first, 0.
    const kept = codes.map((c) => (c === 8 ? 0 : c));
    for (let j = 0; j < 16; j++) expect(bytes[1 + j]).toBe(kept[j] | (kept[j + 16] << 4));
    expect(Array.from(dequantize(GgmlType.MXFP4, bytes, 32))).toEqual(Array.from(x));
  });

  it("decodes e = 0, 1, 2, 254 and 255 as 2^(e - 128) times the doubled e2m1 value (12 * 2^127 overflows f32)", () => {
    expect([0, 1, 2, 128, 254, 255].map(e8m0Half)).toEqual([2 ** -128, 2 ** -127, 2 ** -126, 1, 2 ** 126, 2 ** 127]);
    for (const e of [0, 1, 2, 254, 255]) {
      const bytes = new Uint8Array(17);
      bytes[0] = e;
      for (let j = 0; j < 16; j++) bytes[1 + j] = j | ((15 - j) << 4);
      const values = dequantize(GgmlType.MXFP4, bytes, 32);
      for (let j = 0; j < 16; j++) {
        expect(values[j]).toBe(Math.fround(MXFP4_KVALUES[j] * 2 ** (e - 128)));
        expect(values[j + 16]).toBe(Math.fround(MXFP4_KVALUES[15 - j] * 2 ** (e - 128)));
      }
    }
    const top = new Uint8Array(17);
    top[0] = 255; top[1] = 7 | (15 << 4); top[2] = 1;
    const values = dequantize(GgmlType.MXFP4, top, 32);
    expect([values[0], values[16], values[1]]).toEqual([Infinity, -Infinity, 2 ** 127]);
  });

  it("picks e as ggml does at the edges: 0 for a zero block, wrapping below 2^-125, log2f's rounding near powers of two", () => {
    expect(hex(quantize(GgmlType.MXFP4, block()))).toBe("00".repeat(17));
    expect(hex(quantize(GgmlType.MXFP4, block(2 ** -125)))).toBe("0006" + "00".repeat(15)); // e 0, 8 * 2^-128
    expect(hex(quantize(GgmlType.MXFP4, block(2 ** -124)))).toBe("0106" + "00".repeat(15)); // e 1
    expect(hex(quantize(GgmlType.MXFP4, block(2 ** -126)))).toBe("ff" + "00".repeat(16)); // -1 as u8: e 255
    expect(hex(quantize(GgmlType.MXFP4, block(1e-45)))).toBe("e8" + "00".repeat(16)); // -149 - 2 + 127 = -24: 232
    expect(hex(quantize(GgmlType.MXFP4, block(3.4e38)))).toBe("fc07" + "00".repeat(15)); // e 252, 15.98 -> 12
    // 16 - 2^-20: log2f rounds 3.99999991 up to 4, so e = 129 (not 128); 1 / d = 0.5 ties 0 and 1: the first, 0.
    expect(hex(quantize(GgmlType.MXFP4, block(16 - 2 ** -20, 1)))).toBe("8106" + "00".repeat(15));
    expect(hex(quantize(GgmlType.MXFP4, block(3.9999998, 1)))).toBe("7e0704" + "00".repeat(14)); // 2 - 1 ulp: e 126
  });

  it("quantizes NaN and infinite inputs as ggml: NaN skipped by amax and coded 0; an infinity makes e = 0 and every code 0", () => {
    // amax = inf: (uint8_t)(float)inf is x86's 0x80000000 truncated, e = 0; at d = 2^-128 every |k d - x| rounds to |x|.
    expect(hex(quantize(GgmlType.MXFP4, block(0.3, -0.3, 1, Infinity, NaN, -2, 0, 0.25)))).toBe("00".repeat(17));
    expect(hex(quantize(GgmlType.MXFP4, block(-Infinity, 5)))).toBe("00".repeat(17));
    // amax 1.5 (the NaN skipped): e = 0 - 2 + 127 = 125, d = 2^-3: 0.75 -> 6 (code 5), -1.5 -> -12 (code 15).
    expect(hex(quantize(GgmlType.MXFP4, block(NaN, 0.75, -1.5)))).toBe("7d00050f" + "00".repeat(13));
  });
});
