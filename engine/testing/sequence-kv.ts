// Block tables for tests and benchmarks that call a runner's forward pass directly: each sequence's KV through the
// model's cache manager (no prefix caching), so that sliding-window layers whose KV is freed get their slots too.
import { KvCacheManager, SequenceKv } from "../kv/kv-cache.js";
import type { LoadedModel } from "../load.js";

/** One sequence's tables for SequenceChunk: blockTable and, where the runner frees window KV, localBlockTable. */
export interface ChunkTables {
  blockTable: readonly number[];
  localBlockTable?: Int32Array;
}

/** Sequences' KV on `model`'s pool, for direct runner.forward calls. */
export class TestSequences {
  private readonly manager: KvCacheManager;
  private readonly sequences: SequenceKv[] = [];

  constructor(model: LoadedModel) {
    this.manager = new KvCacheManager(model.kvPool, { prefixCaching: false }, model.localKv);
  }

  /** A new sequence with room for `positions` positions; returns its index. @throws when the cache cannot hold it. */
  add(positions: number): number {
    const sequence = new SequenceKv();
    if (!this.manager.reserve(sequence, positions)) throw new Error(`the KV cache cannot hold ${positions} more positions`);
    this.sequences.push(sequence);
    return this.sequences.length - 1;
  }

  /** The tables of sequence `index` for a chunk. */
  tables(index: number): ChunkTables {
    const sequence = this.sequences[index]!;
    return { blockTable: sequence.blocks, localBlockTable: this.manager.localTable(sequence) };
  }

  /** Lets sequence `index` drop the window KV no position from `next` on reads (as the engine does after a step). */
  trim(index: number, next: number): void {
    this.manager.trim(this.sequences[index]!, next);
  }

  /** Returns every sequence's blocks to the pool. */
  releaseAll(): void {
    for (const sequence of this.sequences) this.manager.release(sequence);
    this.sequences.length = 0;
  }
}
