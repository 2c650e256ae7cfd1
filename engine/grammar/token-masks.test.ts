// maskLogits on sparse and dense masks, against a plain per-token reference.
import { describe, expect, it } from "vitest";
import { seededRandom } from "../testing/seeded-random.js";
import { maskHas, maskLogits } from "./token-masks.js";

function reference(logits: Float32Array, mask: Uint32Array): Float32Array {
  return logits.map((value, id) => (maskHas(mask, id) ? value : -Infinity));
}

describe("maskLogits", () => {
  for (const [label, density] of [["sparse", 0.01], ["half", 0.5], ["dense", 0.99], ["empty", 0], ["full", 1]] as const) {
    it(`keeps exactly the allowed logits (${label} mask), with a vocabulary that is not a multiple of 32`, () => {
      const random = seededRandom(label.length);
      const size = 151_936 + 7;
      const logits = Float32Array.from({ length: size }, () => random() * 10 - 5);
      const mask = new Uint32Array((size + 31) >>> 5);
      for (let id = 0; id < size; id++) if (random() < density) mask[id >>> 5]! |= 1 << (id & 31);
      const out = new Float32Array(size).fill(42);
      maskLogits(logits, mask, out);
      expect(out).toEqual(reference(logits, mask));
    });
  }

  it("treats logits past the mask's words as disallowed", () => {
    const out = new Float32Array(70);
    maskLogits(new Float32Array(70).fill(1), Uint32Array.of(0xffffffff), out);
    expect([...out.subarray(0, 32)].every((v) => v === 1) && [...out.subarray(32)].every((v) => v === -Infinity)).toBe(true);
  });
});
