import { describe, expect, it } from "vitest";
import { GgmlType } from "../engine/model/dtypes.js";
import { quantize } from "../engine/model/quantize.js";
import { encodeTensor } from "./tensor-encode.js";

describe("encodeTensor", () => {
  it("matches quantize() byte for byte on F32, F16 and BF16, including ties, subnormals, overflow and NaN", () => {
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
      for (const type of [GgmlType.F32, GgmlType.F16, GgmlType.BF16]) {
        expect(Buffer.from(encodeTensor(type, input)).equals(Buffer.from(quantize(type, input))), `type ${type}`).toBe(true);
      }
    }
    // Q8_0: random magnitudes, exact .5 ties after scaling, an all-zero block, tiny and huge blocks
    const q8 = new Float32Array(32 * 600);
    for (let i = 0; i < q8.length; i++) q8[i] = Math.sin(i * 0.37) * 10 ** ((i >> 5) % 7 - 3);
    for (let i = 0; i < 32; i++) q8[32 * 10 + i] = (i - 16) * 0.5 + (i === 0 ? 63.5 : 0);
    for (let i = 0; i < 32; i++) q8[32 * 11 + i] = 0;
    for (let i = 0; i < 32; i++) q8[32 * 12 + i] = i % 2 ? 127 : 0.5;
    for (const type of [GgmlType.Q8_0, GgmlType.Q4_0]) {
      expect(Buffer.from(encodeTensor(type, q8)).equals(Buffer.from(quantize(type, q8))), `type ${type}`).toBe(true);
    }
  });
});
