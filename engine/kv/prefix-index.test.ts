// The prefix index matches a block only on all of its tokens: two chains that differ at any one position of a block,
// its first and its last included, share the blocks before it and never that block or any after it.
import { describe, expect, it } from "vitest";
import { BlockPool } from "./block-pool.js";
import { type CachedBlock, PrefixIndex } from "./prefix-index.js";

/** Caches `tokens`' full blocks as one chain, each in a block of its own; returns the chain. */
function cacheChain(pool: BlockPool, index: PrefixIndex, tokens: readonly number[]): CachedBlock[] {
  const chain: CachedBlock[] = [];
  for (let start = 0; start + pool.blockSize <= tokens.length; start += pool.blockSize) {
    chain.push(index.insert(chain.at(-1) ?? null, tokens.slice(start, start + pool.blockSize), pool.allocate(1)[0]!));
  }
  return chain;
}

describe.each([4, 16])("PrefixIndex with blocks of %i tokens", (blockSize) => {
  // Three full blocks and two tokens more.
  const base = Array.from({ length: 3 * blockSize + 2 }, (_, i) => 100 + i);

  it("matches an identical prompt's every full block", () => {
    const pool = new BlockPool(16, blockSize);
    const index = new PrefixIndex(pool);
    const chain = cacheChain(pool, index, base);
    expect(index.match([...base]).map((block) => block.blockId)).toEqual(chain.map((block) => block.blockId));
  });

  for (const depth of [0, 1, 2]) {
    it(`never hands block ${depth} to a prompt that differs from it at one position, whichever position`, () => {
      for (let position = 0; position < blockSize; position++) {
        const pool = new BlockPool(16, blockSize);
        const index = new PrefixIndex(pool);
        const chain = cacheChain(pool, index, base);
        const other = [...base];
        other[depth * blockSize + position] = 7; // a token found nowhere in `base`
        const where = `position ${position} of block ${depth}`;
        // Only the blocks before the one that differs are shared.
        expect(index.match(other).map((block) => block.blockId), where).toEqual(chain.slice(0, depth).map((block) => block.blockId));
        // Caching the other prompt's block there makes a block of its own beside the first, not the first again.
        const parent = chain[depth - 1] ?? null;
        const ownBlock = pool.allocate(1)[0]!;
        const inserted = index.insert(parent, other.slice(depth * blockSize, (depth + 1) * blockSize), ownBlock);
        expect(inserted.blockId, where).toBe(ownBlock);
        expect(inserted.hash, where).not.toBe(chain[depth]!.hash);
        expect(index.size, where).toBe(chain.length + 1);
        // Each prompt now finds its own block at that depth.
        expect(index.match(other)[depth]?.blockId, where).toBe(ownBlock);
        expect(index.match(base)[depth]?.blockId, where).toBe(chain[depth]!.blockId);
      }
    });
  }

  it("tells apart blocks whose tokens differ only in how their digits split (1, 23 against 12, 3)", () => {
    const pool = new BlockPool(16, blockSize);
    const index = new PrefixIndex(pool);
    const first = [1, 23, ...base.slice(2, blockSize)];
    const second = [12, 3, ...base.slice(2, blockSize)];
    cacheChain(pool, index, first);
    expect(index.match(second)).toEqual([]);
  });
});
