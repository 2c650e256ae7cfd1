// The prefix index's reports for routers that mirror it: each chain's hash equals chainHashes() of its tokens, and
// takeChanges() gives each chain's latest state since the last call, evictions included.
import { describe, expect, it } from "vitest";
import { BlockPool } from "./block-pool.js";
import { chainHashes } from "./block-hash.js";
import { PrefixIndex } from "./prefix-index.js";

describe("PrefixIndex changes", () => {
  it("names chains as chainHashes does and reports additions and evictions once", () => {
    const pool = new BlockPool(8, 4);
    const index = new PrefixIndex(pool);
    const tokens = [1, 2, 3, 4, 5, 6, 7, 8, 9];
    const expected = chainHashes(tokens, 4);
    expect(expected).toHaveLength(2);
    const first = index.insert(null, tokens.slice(0, 4), pool.allocate(1)[0]!);
    const second = index.insert(first, tokens.slice(4, 8), pool.allocate(1)[0]!);
    expect([first.hash, second.hash]).toEqual(expected);
    // The same tokens after another first block are another chain.
    expect(chainHashes([0, 2, 3, 4, 5, 6, 7, 8], 4)[1]).not.toBe(expected[1]);
    expect(index.takeChanges()).toEqual({ added: expected, removed: [] });
    expect(index.takeChanges()).toEqual({ added: [], removed: [] });
    expect(index.hashes().sort()).toEqual([...expected].sort());

    // Held only by the index (the allocations' own references dropped): evictable, leaf first.
    pool.release(first.blockId);
    pool.release(second.blockId);
    expect(index.evict(1)).toBe(1);
    expect(index.takeChanges()).toEqual({ added: [], removed: [expected[1]] });
    // Cached again, then dropped, between two looks: its latest state, removed.
    const again = index.insert(first, tokens.slice(4, 8), pool.allocate(1)[0]!);
    pool.release(again.blockId);
    index.clear();
    expect(index.takeChanges()).toEqual({ added: [], removed: [expected[1], expected[0]] });
    expect(index.hashes()).toEqual([]);
  });
});
