// Seed reads: concurrent callers of one counter share one seed() call, a finished read is not reused, and a seed that
// is not a number >= 0 is refused by name.
import { describe, expect, it } from "vitest";
import { SeedReads } from "./seeds.js";

describe("SeedReads", () => {
  it("shares a running read among callers of one counter, and reads again once it has ended", async () => {
    const seeds = new SeedReads();
    let calls = 0;
    const seed = async () => ++calls * 10;
    expect(await Promise.all([seeds.read("daily:a:2025-01-15", seed), seeds.read("daily:a:2025-01-15", seed), seeds.read("daily:b:2025-01-15", seed)])).toEqual([10, 10, 20]);
    expect(await seeds.read("daily:a:2025-01-15", seed)).toBe(30);
  });

  it("refuses a seed that is negative, not finite or not a number, and reads again after a failure", async () => {
    const seeds = new SeedReads();
    for (const value of [-1, Number.NaN, Number.POSITIVE_INFINITY, "5"]) {
      await expect(seeds.read("daily:k:2025-01-15", async () => value as number)).rejects.toThrow(
        new RangeError(`daily seed for daily:k:2025-01-15 must be a number >= 0, got ${String(value)}`),
      );
    }
    await expect(seeds.read("daily:k:2025-01-15", async () => { throw new Error("database down"); })).rejects.toThrow("database down");
    expect(await seeds.read("daily:k:2025-01-15", async () => 0)).toBe(0);
  });
});
