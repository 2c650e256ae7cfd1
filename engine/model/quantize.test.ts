import { describe, expect, it } from "vitest";
import { GgmlType, f16ToF32, f32ToF16 } from "./dtypes.js";
import { dequantize, quantize } from "./quantize.js";

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
    [GgmlType.Q4_0, 0.12], [GgmlType.Q4_K, 0.12], [GgmlType.Q6_K, 0.04],
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
});
