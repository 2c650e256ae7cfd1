// KV storage for sliding-window layers (Gemma 3's local layers, gpt-oss's windowed ones): they read only the last
// `window` positions, so their KV need not live as long as the full layers'. Each KV block of the main pool may have a
// slot of this smaller pool, which holds the local layers' K/V of that block's positions. A running sequence holds the
// slots of the blocks its window can still reach and lets go of the others as it moves on; a finished sequence leaves
// its last window's slots with its cached blocks (idle), so that a later prompt continuing it can resume there. Idle
// slots are reclaimed, least recently left first, when a sequence needs one; a slot goes when its block is freed.
import type { BlockPool } from "./block-pool.js";

/** Slots of local-layer KV, one per main-pool block at most. */
export class SlidingWindowKv {
  /** Slot of each main-pool block, -1 for none. */
  private readonly slotOf: Int32Array;
  /** Running sequences (and pinned copies) that need each block's slot. */
  private readonly holders: Uint32Array;
  private readonly freeSlots: number[] = [];
  /** Blocks whose slot nobody holds, least recently left first: reclaimable. */
  private readonly idle = new Map<number, true>();

  /**
   * @param pool the main block pool (its freed blocks drop their slots)
   * @param capacity slots (local-layer KV blocks) in the runner's local caches
   * @param window positions a sliding-window layer sees, its own included
   */
  constructor(pool: BlockPool, readonly capacity: number, readonly window: number) {
    if (!Number.isInteger(capacity) || capacity <= 0) throw new RangeError(`local KV capacity must be a positive integer, got ${capacity}`);
    if (!Number.isInteger(window) || window <= 0) throw new RangeError(`sliding window must be a positive integer, got ${window}`);
    this.slotOf = new Int32Array(pool.capacity).fill(-1);
    this.holders = new Uint32Array(pool.capacity);
    for (let slot = capacity - 1; slot >= 0; slot--) this.freeSlots.push(slot);
    pool.onFree = (block) => this.drop(block);
  }

  /** Slots not attached to any block. */
  get freeCount(): number {
    return this.freeSlots.length;
  }

  /** Slots attached to a block but held by nobody (reclaimable). */
  get idleCount(): number {
    return this.idle.size;
  }

  /** The slot of `block`, or -1. */
  slot(block: number): number {
    return this.slotOf[block]!;
  }

  /** Whether `block` has its local-layer KV. */
  has(block: number): boolean {
    return this.slotOf[block]! >= 0;
  }

  /**
   * Holds `block`'s slot, attaching a fresh one (reclaiming an idle slot if none is free) when it has none; false
   * when no slot can be had (nothing changes then).
   */
  hold(block: number): boolean {
    if (this.slotOf[block]! < 0) {
      if (this.freeSlots.length === 0) {
        const oldest = this.idle.keys().next();
        if (oldest.done) return false;
        this.drop(oldest.value);
      }
      this.slotOf[block] = this.freeSlots.pop()!;
    }
    this.holders[block]!++;
    this.idle.delete(block);
    return true;
  }

  /**
   * Lets go of `block`'s slot. When nobody holds it any more it is kept idle (`keep`: a cached block a later prompt may
   * resume after) or freed.
   */
  unhold(block: number, keep: boolean): void {
    if (this.holders[block] === 0) throw new Error(`local KV of block ${block} is not held`);
    if (--this.holders[block]! > 0) return;
    if (keep) this.idle.set(block, true);
    else this.drop(block);
  }

  /** Frees `block`'s slot (its block was freed, or nobody needs it). */
  private drop(block: number): void {
    const slot = this.slotOf[block]!;
    if (slot < 0) return;
    this.holders[block] = 0;
    this.slotOf[block] = -1;
    this.idle.delete(block);
    this.freeSlots.push(slot);
  }

  /** The local block table of a main block table: each block's slot, -1 where it has none. */
  table(blocks: readonly number[]): Int32Array {
    return Int32Array.from(blocks, (block) => this.slotOf[block]!);
  }

  /** The first position a sequence whose next position is `next` still reads in a window layer. */
  firstVisible(next: number): number {
    return Math.max(0, next - this.window + 1);
  }
}

/**
 * Slots enough for every sequence of a step to hold its window while it runs: per sequence the blocks that its window
 * reaches and its chunk spans, plus a block its admission copies from, and the step's tokens spread over blocks.
 */
export function localKvSlots(window: number, blockSize: number, maxSequences: number, maxBatchTokens: number): number {
  return maxSequences * (Math.ceil((window - 1) / blockSize) + 4) + Math.ceil(maxBatchTokens / blockSize);
}
