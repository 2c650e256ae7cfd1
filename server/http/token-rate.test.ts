// The per-model token rate: counts within the last ten seconds only, per model, a slot reused after a whole window.
import { describe, expect, it } from "vitest";
import { TOKEN_RATE_WINDOW_SECONDS, TokenRate } from "./token-rate.js";

describe("TokenRate", () => {
  it("averages the tokens of the last ten seconds, per model", () => {
    const rate = new TokenRate();
    const t0 = 1_700_000_000_000;
    rate.record("a", 50, t0);
    rate.record("a", 30, t0 + 4_500);
    rate.record("b", 7, t0 + 4_500);
    rate.record("a", 0, t0 + 4_600);
    expect(rate.perSecond("a", t0 + 5_000)).toBe(80 / TOKEN_RATE_WINDOW_SECONDS);
    expect(rate.perSecond("b", t0 + 5_000)).toBe(0.7);
    expect(rate.perSecond("never", t0)).toBe(0);
    // Ten seconds on, the first second has left the window; fifteen on, both have.
    expect(rate.perSecond("a", t0 + 10_000)).toBe(3);
    expect(rate.perSecond("a", t0 + 15_000)).toBe(0);
  });

  it("starts a slot afresh when its second comes round again, however long after", () => {
    const rate = new TokenRate();
    const t0 = 1_700_000_000_000;
    rate.record("a", 100, t0);
    rate.record("a", 1, t0 + 20_000); // the same slot, two windows later
    expect(rate.perSecond("a", t0 + 20_000)).toBe(0.1);
  });
});
