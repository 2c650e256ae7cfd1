import { describe, expect, it } from "vitest";
import { BlockPool, BlockTable, OutOfKvBlocksError } from "./block-pool.js";

describe("BlockPool", () => {
  it("hands out each block once and takes it back when the last reference goes", () => {
    const pool = new BlockPool(4, 16);
    const [a, b] = pool.allocate(2);
    expect(a).not.toBe(b);
    pool.retain(a);
    pool.release(a);
    expect(pool.freeCount).toBe(2);
    pool.release(a);
    expect(pool.freeCount).toBe(3);
    expect(() => pool.release(a)).toThrow(/released twice/);
  });

  it("fails without side effects when full", () => {
    const pool = new BlockPool(2, 16);
    pool.allocate(1);
    expect(() => pool.allocate(2)).toThrow(OutOfKvBlocksError);
    expect(pool.freeCount).toBe(1);
  });

  it("keeps reference counts consistent under random table growth and release", () => {
    const pool = new BlockPool(64, 4);
    const tables = Array.from({ length: 8 }, () => new BlockTable(pool));
    let seed = 7;
    const random = () => ((seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) / 2 ** 32);
    for (let step = 0; step < 5000; step++) {
      const table = tables[Math.floor(random() * tables.length)];
      if (random() < 0.3) table.releaseAll();
      else {
        try {
          table.reserve(table.capacity + Math.ceil(random() * 10));
        } catch (error) {
          expect(error).toBeInstanceOf(OutOfKvBlocksError);
        }
      }
      const used = tables.reduce((sum, t) => sum + t.ids.length, 0);
      expect(used + pool.freeCount).toBe(64);
    }
    for (const table of tables) table.releaseAll();
    expect(pool.freeCount).toBe(64);
  });
});
