// The prefix index matches a block only on all of its tokens: two chains that differ at any one position of a block,
// its first and its last included, share the blocks before it and never that block or any after it. And its
// bookkeeping: depths, duplicate inserts, what is evictable, eviction order and the continuations it lists.
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

describe("PrefixIndex bookkeeping", () => {
  const BLOCK = 4;
  /** Block `n` of a test chain: four tokens of its own. */
  const block = (n: number) => [n * 10, n * 10 + 1, n * 10 + 2, n * 10 + 3];
  /** A fresh index over a pool of 16 blocks of 4 tokens. */
  const fresh = () => {
    const pool = new BlockPool(16, BLOCK);
    return { pool, index: new PrefixIndex(pool) };
  };
  /** Inserts `tokens` after `parent` in a new block, and drops the allocation's own reference (the index's stays). */
  const cached = (pool: BlockPool, index: PrefixIndex, parent: CachedBlock | null, tokens: number[]) => {
    const inserted = index.insert(parent, tokens, pool.allocate(1)[0]!);
    pool.release(inserted.blockId);
    return inserted;
  };

  it("matches a prompt of exactly whole blocks to its last block, and reports each block's depth", () => {
    const { pool, index } = fresh();
    const chain = cacheChain(pool, index, [...block(1), ...block(2), ...block(3)]);
    expect(chain.map((cachedBlock) => cachedBlock.depth)).toEqual([0, 1, 2]);
    expect(chain.map((cachedBlock) => cachedBlock.parent)).toEqual([null, chain[0], chain[1]]);
    expect(index.match([...block(1), ...block(2), ...block(3)])).toEqual(chain);
    expect(index.match([...block(1), ...block(2), ...block(3).slice(0, 3)])).toEqual(chain.slice(0, 2));
  });

  it("refuses to cache a block of any other length than the pool's", () => {
    const { pool, index } = fresh();
    for (const tokens of [block(1).slice(0, 3), [...block(1), 99]]) {
      expect(() => index.insert(null, tokens, pool.allocate(1)[0]!)).toThrow(new RangeError(`a cached block holds 4 tokens, got ${tokens.length}`));
    }
    expect(index.size).toBe(0);
  });

  it("keeps the block already cached at a chain position, retaining nothing more, and marks it recently used", () => {
    const { pool, index } = fresh();
    const first = cached(pool, index, null, block(1));
    cached(pool, index, null, block(2));
    const duplicate = pool.allocate(1)[0]!;
    expect(index.insert(null, block(1), duplicate)).toBe(first);
    expect([pool.refCount(first.blockId), pool.refCount(duplicate), index.size]).toEqual([1, 1, 2]);
    // Used again by that insert, block 1 is now newer than block 2: eviction takes block 2 first.
    expect(index.evict(1)).toBe(1);
    expect(index.match(block(1))).toEqual([first]);
    expect(index.match(block(2))).toEqual([]);
  });

  it("counts as evictable the blocks only the index references", () => {
    const { pool, index } = fresh();
    const chain = cacheChain(pool, index, [...block(1), ...block(2), ...block(3)]);
    expect(index.evictableCount).toBe(0); // the allocations still hold every block
    pool.release(chain[0]!.blockId);
    pool.release(chain[2]!.blockId);
    expect(index.evictableCount).toBe(2);
    pool.release(chain[1]!.blockId);
    expect(index.evictableCount).toBe(3);
  });

  it("evicts exactly as many blocks as asked, least recently used leaves first", () => {
    const { pool, index } = fresh();
    const [a, , c] = [cached(pool, index, null, block(1)), cached(pool, index, null, block(2)), cached(pool, index, null, block(3))];
    index.match(block(1)); // a is now the most recently used, b the least
    expect(index.evict(1)).toBe(1);
    expect(index.hashes().sort()).toEqual([c.hash, a.hash].sort());
    expect(index.evict(1)).toBe(1);
    expect(index.hashes()).toEqual([a.hash]);
    expect(index.evict(5)).toBe(1);
    expect(index.evict(1)).toBe(0);
  });

  it("lists the chains below a block most recently used first, within maxChains and maxBlocks", () => {
    const { pool, index } = fresh();
    const root = cached(pool, index, null, block(1));
    // Three chains below root: x (two blocks), y and z (one each), used z, x, y from newest to oldest.
    const x1 = cached(pool, index, root, block(2));
    const x2 = cached(pool, index, x1, block(3));
    const y = cached(pool, index, root, block(4));
    const z = cached(pool, index, root, block(5));
    index.match([...block(1), ...block(4)]);
    index.match([...block(1), ...block(2), ...block(3)]);
    index.match([...block(1), ...block(5)]);
    expect(index.continuations(root)).toEqual([[z], [x1, x2], [y]]);
    expect(index.continuations(null)).toEqual([[root, z], [root, x1, x2], [root, y]]);
    // At most two chains; at most three blocks visited (z, x1, x2: y is not reached).
    expect(index.continuations(root, 2)).toEqual([[z], [x1, x2]]);
    expect(index.continuations(root, 16, 3)).toEqual([[z], [x1, x2]]);
    expect(index.continuations(root, 16, 2)).toEqual([[z]]);
    expect(index.continuations(root, 1)).toEqual([[z]]);
    expect(index.continuations(z)).toEqual([]);
  });
});
