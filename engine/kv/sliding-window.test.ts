// Sliding-window layers' KV slots under the cache manager: a running sequence holds only the blocks its window
// reaches, a finished one leaves its last window with its cached blocks, and a cached prefix is reused only up to a
// point whose window of local KV is still there.
import { describe, expect, it } from "vitest";
import { BlockPool } from "./block-pool.js";
import { KvCacheManager, SequenceKv } from "./kv-cache.js";
import { SlidingWindowKv, localKvSlots } from "./sliding-window.js";

const BLOCK = 4;
const WINDOW = 6; // a position sees itself and the 5 before it: at most 2-3 blocks of 4
const run = (from: number, n: number): number[] => Array.from({ length: n }, (_, i) => from + i);

function setup(slots = 32, blocks = 64) {
  const pool = new BlockPool(blocks, BLOCK);
  const window = new SlidingWindowKv(pool, slots, WINDOW);
  return { pool, window, kv: new KvCacheManager(pool, {}, window) };
}

/** Runs `tokens` as the engine would: admitted, reserved and computed `chunk` positions at a time, then released. */
function runSequence(kv: KvCacheManager, tokens: number[], chunk = 3): { sequence: SequenceKv; reused: number; heldAtMost: number } {
  const sequence = new SequenceKv();
  const reused = kv.adopt(sequence, tokens).prefixTokens;
  kv.takeCopies(sequence).done();
  let heldAtMost = 0;
  for (let computed = reused; computed < tokens.length;) {
    const end = Math.min(tokens.length, computed + chunk);
    expect(kv.reserve(sequence, end)).toBe(true);
    const local = kv.localTable(sequence)!;
    // Every position this chunk's rows can see has its local KV.
    for (let p = Math.max(0, computed - WINDOW + 1); p < end; p++) expect(local[Math.floor(p / BLOCK)], `position ${p}`).toBeGreaterThanOrEqual(0);
    heldAtMost = Math.max(heldAtMost, sequence.blocks.length - sequence.localFrom);
    computed = end;
    kv.commit(sequence, tokens, computed);
    kv.trim(sequence, computed);
  }
  return { sequence, reused, heldAtMost };
}

describe("sliding-window KV slots", () => {
  it("holds only the window's blocks while a sequence runs, and frees the rest", () => {
    const { kv, window } = setup();
    const { sequence, heldAtMost } = runSequence(kv, run(100, 40));
    // Window 6 after a chunk of 3: positions up to 5 back plus the chunk's blocks, never the whole sequence's 10 blocks.
    expect(heldAtMost).toBeLessThanOrEqual(Math.ceil((WINDOW - 1) / BLOCK) + 2);
    const table = kv.localTable(sequence)!;
    expect(Array.from(table.subarray(0, 8)).every((slot) => slot === -1)).toBe(true);
    kv.release(sequence);
    // The last window stays with the cached blocks, idle; nothing else is held.
    expect(window.idleCount).toBeGreaterThan(0);
    expect(window.idleCount).toBeLessThanOrEqual(Math.ceil((WINDOW - 1) / BLOCK) + 1);
    expect(window.freeCount + window.idleCount).toBe(32);
  });

  it("reuses a finished conversation when the next prompt continues it, resuming after its last window", () => {
    const { kv } = setup();
    const first = run(100, 30);
    kv.release(runSequence(kv, first).sequence);
    const next = runSequence(kv, [...first, ...run(500, 9)]);
    expect(next.reused).toBe(28); // every full cached block: its window (positions 23..27) still has local KV
    kv.release(next.sequence);
  });

  it("does not reuse a shared prefix whose window was freed, and reuses nothing it cannot resume after", () => {
    const { kv } = setup();
    const system = run(100, 24);
    kv.release(runSequence(kv, [...system, ...run(300, 20)]).sequence);
    // The system prompt's blocks are cached, but their local KV went as the first sequence moved on.
    const other = runSequence(kv, [...system, ...run(700, 10)]);
    expect(other.reused).toBe(0);
    kv.release(other.sequence);
  });

  it("keeps every block's local KV when the prefix is reused by a sequence still in its window", () => {
    const { kv } = setup();
    const shared = run(100, 8);
    // A sequence that stops at the end of the shared prefix leaves its window there: a later one resumes at 8.
    kv.release(runSequence(kv, [...shared, 9]).sequence);
    const b = runSequence(kv, [...shared, ...run(800, 5)]);
    expect(b.reused).toBe(8);
    kv.release(b.sequence);
  });

  it("reclaims idle slots for new sequences, and refuses (taking nothing) when every slot is held", () => {
    const { kv, window, pool } = setup(4, 64);
    kv.release(runSequence(kv, run(100, 12)).sequence);
    expect(window.idleCount).toBeGreaterThan(0);
    // A new sequence takes slots, reclaiming the idle ones once the free ones are gone.
    const a = new SequenceKv();
    expect(kv.reserve(a, 16)).toBe(true);
    expect(window.freeCount).toBe(0);
    expect(window.idleCount).toBe(0);
    // Another cannot get a slot: nothing is taken from the pool either.
    const free = pool.freeCount;
    const b = new SequenceKv();
    expect(kv.reserve(b, 4)).toBe(false);
    expect(pool.freeCount).toBe(free);
    expect(b.blocks).toEqual([]);
    kv.release(a);
    expect(kv.reserve(b, 4)).toBe(true);
    kv.release(b);
  });

  it("drops a block's slot when the block itself is evicted", () => {
    const { kv, window } = setup(32, 8);
    kv.release(runSequence(kv, run(100, 12)).sequence);
    const idle = window.idleCount;
    expect(idle).toBeGreaterThan(0);
    kv.index.clear();
    expect(window.idleCount).toBe(0);
    expect(window.freeCount).toBe(32);
  });

  it("sizes the slots for every sequence's window and chunk", () => {
    // Gemma 3: window 1024 in blocks of 16, 32 sequences, 512-token steps.
    expect(localKvSlots(1024, 16, 32, 512)).toBe(32 * (64 + 4) + 32);
    expect(localKvSlots(8, 16, 1, 16)).toBe(6);
  });
});
