import { describe, expect, it } from "vitest";
import { BlockPool } from "./block-pool.js";
import { KvCacheManager, SequenceKv } from "./kv-cache.js";

const BLOCK = 4;
const run = (from: number, n: number): number[] => Array.from({ length: n }, (_, i) => from + i);

/** Caches `tokens` as a finished sequence would leave them: every full block committed, the sequence released. */
function cacheChain(kv: KvCacheManager, tokens: number[]): void {
  const sequence = new SequenceKv();
  kv.adopt(sequence, tokens);
  expect(kv.reserve(sequence, tokens.length)).toBe(true);
  kv.takeCopies(sequence).done();
  kv.commit(sequence, tokens, tokens.length);
  kv.release(sequence);
}

function admit(kv: KvCacheManager, tokens: number[]) {
  const sequence = new SequenceKv();
  const reuse = kv.adopt(sequence, tokens);
  const { copies, done } = kv.takeCopies(sequence);
  return { sequence, reuse, copies, done };
}

describe("KvCacheManager", () => {
  const A = run(100, 10); // ends mid-block (block size 4)
  const B = run(200, 6);
  const C = run(300, 13);
  const D = run(400, 5);

  it("no pruning: a prefix hit, full blocks shared and the partial block copied in place", () => {
    const kv = new KvCacheManager(new BlockPool(64, BLOCK));
    cacheChain(kv, [...A, ...B, ...C]);
    const { sequence, reuse, copies } = admit(kv, [...A, ...B, ...D]);
    expect(reuse).toEqual({ prefixTokens: 16, suffixTokens: 0, sectionRejected: undefined });
    expect(sequence.blocks.length).toBe(4);
    expect(copies).toEqual([]);
    const partial = admit(kv, [...A, ...run(900, 3)]);
    expect(partial.reuse.prefixTokens).toBe(10);
    expect(partial.copies).toMatchObject([{ sourceStart: 8, targetStart: 8, count: 2 }]);
  });

  it("one pruned span: A reused, C relocated right after A, only D left to compute", () => {
    const kv = new KvCacheManager(new BlockPool(64, BLOCK));
    cacheChain(kv, [...A, ...B, ...C, ...run(500, 3)]);
    const { sequence, reuse, copies, done } = admit(kv, [...A, ...C, ...D]);
    expect(reuse).toMatchObject({ prefixTokens: 10, suffixTokens: 13 });
    expect(copies).toMatchObject([
      { sourceStart: 8, targetStart: 8, count: 2 },
      { sourceStart: 16, targetStart: 10, count: 13 },
    ]);
    expect(sequence.blocks.length).toBe(Math.ceil(23 / BLOCK));
    done();
    kv.recordAdmission(28, reuse);
    expect(kv.counters).toMatchObject({ lookups: 1, sectionHits: 1, prefixHits: 1, prefixTokens: 10, suffixTokens: 13 });
  });

  it("two pruned spans: prefix only", () => {
    const kv = new KvCacheManager(new BlockPool(64, BLOCK));
    const C1 = run(300, 12);
    const C2 = run(600, 12);
    cacheChain(kv, [...A, ...B, ...C1, ...run(500, 5), ...C2]);
    const { reuse } = admit(kv, [...A, ...C1, ...C2, ...D]);
    expect(reuse).toMatchObject({ prefixTokens: 10, suffixTokens: 0, sectionRejected: "two-pruned-spans" });
  });

  it("a C at or below the threshold gives no suffix hit", () => {
    const kv = new KvCacheManager(new BlockPool(64, BLOCK), { sectionThreshold: 8 });
    cacheChain(kv, [...A, ...B, ...run(300, 8), ...run(700, 4)]);
    const { reuse } = admit(kv, [...A, ...run(300, 8), ...D]);
    expect(reuse).toMatchObject({ prefixTokens: 10, suffixTokens: 0, sectionRejected: "suffix-at-or-below-threshold" });
  });

  it("prefix-only and no caching modes", () => {
    const prefixOnly = new KvCacheManager(new BlockPool(64, BLOCK), { sectionCaching: false });
    cacheChain(prefixOnly, [...A, ...B, ...C]);
    expect(admit(prefixOnly, [...A, ...C, ...D]).reuse).toMatchObject({ prefixTokens: 10, suffixTokens: 0 });
    const none = new KvCacheManager(new BlockPool(64, BLOCK), { prefixCaching: false });
    cacheChain(none, [...A, ...B, ...C]);
    expect(none.index.size).toBe(0);
    expect(admit(none, [...A, ...B, ...C]).reuse).toMatchObject({ prefixTokens: 0, suffixTokens: 0 });
  });

  it("always leaves the last prompt token to compute", () => {
    const kv = new KvCacheManager(new BlockPool(64, BLOCK));
    cacheChain(kv, run(0, 16));
    const { sequence, reuse, copies } = admit(kv, run(0, 16));
    expect(reuse.prefixTokens).toBe(15);
    expect(sequence.blocks.length).toBe(4);
    expect(copies).toMatchObject([{ sourceStart: 12, targetStart: 12, count: 3 }]);
  });

  it("evicts least recently used unreferenced blocks and never a shared one", () => {
    const pool = new BlockPool(8, BLOCK);
    const kv = new KvCacheManager(pool);
    cacheChain(kv, run(0, 16)); // 4 cached blocks
    const held = admit(kv, run(0, 9)); // shares 2 of them
    held.done();
    const other = new SequenceKv();
    expect(kv.reserve(other, 6 * BLOCK)).toBe(true); // 4 free + 2 evicted
    expect(kv.reserve(other, 7 * BLOCK)).toBe(false); // the 2 shared blocks cannot go
    for (const id of held.sequence.blocks.slice(0, 2)) expect(pool.refCount(id)).toBe(2);
    kv.release(other);
    kv.release(held.sequence);
    kv.index.clear();
    expect(pool.freeCount).toBe(8);
  });
});
