// The KV cache manager: per-sequence block tables over the block pool, the prefix index (shared full blocks), and
// the section-pruning reuse (KV copied, and re-rotated, out of a cached chain). It says what to copy; the engine
// runs the copies on the model runner before the sequence's first forward pass. With sliding-window layers whose KV
// is freed (sliding-window.ts), it also holds each sequence's window of local-layer slots, and reuses a cached
// prefix only up to a point whose window of local KV is still there.
import { type BlockPool, OutOfKvBlocksError } from "./block-pool.js";
import { type CachedBlock, PrefixIndex } from "./prefix-index.js";
import { type SectionMatch, matchSections } from "./section-match.js";
import type { SlidingWindowKv } from "./sliding-window.js";

/** What the cache may reuse. */
export interface KvCacheOptions {
  /** Share cached full blocks of a matching prompt prefix (default true). */
  prefixCaching?: boolean;
  /** Also reuse a section after one pruned span (default true; needs prefixCaching). */
  sectionCaching?: boolean;
  /** A reused section must be longer than this many tokens (default 8). */
  sectionThreshold?: number;
}

/**
 * A copy of `count` KV positions from `sourceStart` of a cached chain (its block table `sourceBlocks`) to
 * `targetStart` of the sequence, with keys re-rotated by `targetStart - sourceStart` positions.
 */
export interface KvCopy {
  sourceBlocks: readonly number[];
  sourceStart: number;
  targetStart: number;
  count: number;
}

/** KV reused by a sequence when it was admitted. */
export interface KvReuse {
  /** Prompt tokens reused in place (shared blocks plus a copied partial block). */
  prefixTokens: number;
  /** Prompt tokens reused from after a pruned span (relocated). */
  suffixTokens: number;
  /** Why a section was not reused, when one was considered. */
  sectionRejected?: SectionMatch["rejected"];
  /** Of `prefixTokens`, those taken from a running member of the request's fork group (fork()), not the prefix cache. */
  forkedTokens?: number;
}

/** One sequence's KV: its block table and what it still owes the index and the copy queue. */
export class SequenceKv {
  /** Physical block of each logical block. */
  readonly blocks: number[] = [];
  /** Leading blocks registered in the prefix index, and the last of them. */
  committedBlocks = 0;
  lastCommitted: CachedBlock | null = null;
  /** Copies to run before the next forward pass; their source blocks are pinned until then. */
  pendingCopies: KvCopy[] = [];
  pinned: number[] = [];
  /** With freed sliding windows: blocks[localFrom..] hold local-layer slots for this sequence; earlier ones not. */
  localFrom = 0;
}

/** Cache-wide counters for stats. */
export interface KvCacheCounters {
  lookups: number;
  prefixHits: number;
  sectionHits: number;
  promptTokens: number;
  prefixTokens: number;
  suffixTokens: number;
}

/** Owns the block tables of every sequence and the prefix index over the shared pool. */
export class KvCacheManager {
  readonly index: PrefixIndex;
  readonly counters: KvCacheCounters = { lookups: 0, prefixHits: 0, sectionHits: 0, promptTokens: 0, prefixTokens: 0, suffixTokens: 0 };
  private readonly prefixCaching: boolean;
  private readonly sectionCaching: boolean;
  private readonly sectionThreshold: number;

  /**
   * @param window the local-layer slots when sliding-window layers free their KV behind the window. Section reuse is
   *   off then: resuming after a relocated section would need the local KV of the window before it, which is gone.
   */
  constructor(readonly pool: BlockPool, options: KvCacheOptions = {}, readonly window?: SlidingWindowKv) {
    this.index = new PrefixIndex(pool);
    this.prefixCaching = options.prefixCaching ?? true;
    this.sectionCaching = this.prefixCaching && (options.sectionCaching ?? true) && window === undefined;
    this.sectionThreshold = options.sectionThreshold ?? 8;
    if (!Number.isInteger(this.sectionThreshold) || this.sectionThreshold < 0) {
      throw new RangeError(`sectionThreshold must be a non-negative integer, got ${options.sectionThreshold}`);
    }
  }

  get blockSize(): number {
    return this.pool.blockSize;
  }

  /**
   * Adopts whatever cached KV `tokens` (a prompt, with `tokens.length - 1` at most reusable: the last token must be
   * computed for its logits) can reuse: shares cached full blocks and queues copies for the rest. Call on a sequence
   * that holds nothing; allocates the blocks the copies write to, or reuses less if they cannot be had.
   * `options.sections: false` reuses only a prefix (KV computed for these very tokens), never a relocated section,
   * whose KV was computed after other text: for a request that must equal a computation from scratch.
   */
  adopt(sequence: SequenceKv, tokens: readonly number[], options: { sections?: boolean } = {}): KvReuse {
    if (sequence.blocks.length > 0) throw new Error("adopt() needs a sequence that holds no blocks");
    if (!this.prefixCaching || tokens.length < 2) return { prefixTokens: 0, suffixTokens: 0 };
    const blockSize = this.blockSize;
    const maxReuse = tokens.length - 1;
    const path = this.index.match(tokens);
    const pathBlocks = path.map((block) => block.blockId);
    const pathTokens = path.length * blockSize;

    // The best continuation: the chain below the matched path that reuses the most.
    let best: { match: SectionMatch; chain: readonly CachedBlock[] } | undefined;
    if (pathTokens < maxReuse) {
      const rest = tokens.slice(pathTokens);
      for (const chain of this.index.continuations(path.at(-1) ?? null)) {
        const chainTokens = concatTokens(chain);
        const found = matchSections(rest, chainTokens, this.sectionThreshold, maxReuse - pathTokens);
        const match: SectionMatch = this.sectionCaching && options.sections !== false ? found : { prefixLength: found.prefixLength, suffixLength: 0, suffixSource: 0 };
        const reuse = match.prefixLength + match.suffixLength;
        if (!best || reuse > best.match.prefixLength + best.match.suffixLength) best = { match, chain };
      }
    }
    const sourceBlocks = [...pathBlocks, ...(best?.chain.map((block) => block.blockId) ?? [])];
    let prefixTokens = Math.min(pathTokens + (best?.match.prefixLength ?? 0), maxReuse);
    const suffixTokens = best?.match.suffixLength ?? 0;
    if (this.window) prefixTokens = this.resumablePrefix(sourceBlocks, prefixTokens);
    const shared = Math.min(path.length, Math.floor(prefixTokens / blockSize));

    const copies: KvCopy[] = [];
    if (prefixTokens > shared * blockSize) copies.push({ sourceBlocks, sourceStart: shared * blockSize, targetStart: shared * blockSize, count: prefixTokens - shared * blockSize });
    if (suffixTokens > 0) copies.push({ sourceBlocks, sourceStart: pathTokens + best!.match.suffixSource, targetStart: prefixTokens, count: suffixTokens });
    const reused = prefixTokens + suffixTokens;
    const ownBlocks = Math.ceil(reused / blockSize) - shared;

    // Pin what the copies read before allocating, so that allocation cannot evict it.
    const pinned = copies.length > 0 ? sourceBlocks.slice(shared, Math.ceil(Math.max(...copies.map((c) => c.sourceStart + c.count)) / blockSize)) : [];
    for (const id of pinned) this.pool.retain(id);
    for (const id of pathBlocks.slice(0, shared)) this.pool.retain(id);
    sequence.blocks.push(...pathBlocks.slice(0, shared));
    sequence.committedBlocks = shared;
    sequence.lastCommitted = shared > 0 ? path[shared - 1] : null;
    if (this.window) {
      // The shared blocks the first new position's window reaches, and the copies' sources, keep their local KV
      // (resumablePrefix checked they have it).
      sequence.localFrom = Math.min(Math.floor(this.window.firstVisible(reused) / blockSize), shared);
      for (let i = sequence.localFrom; i < shared; i++) this.window.hold(sequence.blocks[i]);
      for (const id of pinned) this.window.hold(id);
    }
    if (!this.allocate(sequence, ownBlocks)) {
      for (const id of pinned) {
        this.window?.unhold(id, true);
        this.pool.release(id);
      }
      if (this.window) {
        // What is shared alone may not leave a resumable window: start over.
        this.release(sequence);
        return { prefixTokens: 0, suffixTokens: 0 };
      }
      return { prefixTokens: shared * blockSize, suffixTokens: 0 };
    }
    sequence.pendingCopies = copies;
    sequence.pinned = pinned;
    return { prefixTokens, suffixTokens, sectionRejected: best?.match.rejected };
  }

  /**
   * Forks the first `positions` KV positions of a running sequence `source` into `sequence` (which holds nothing): its
   * full blocks are shared, the rest of the last one is queued as a copy (delta 0) into a fresh block, run like an
   * adoption's copies. With freed sliding windows, the source must still hold the local KV the window of position
   * `positions` reads (the shared blocks' slots are held, as adopt() holds them). Undefined, holding nothing, when it
   * cannot: the source does not hold those positions (yet, or any more), its window moved on, or no block is free.
   * NOTE: the caller guarantees that `source` has the same tokens at those positions and that its KV is computed there.
   */
  fork(sequence: SequenceKv, source: SequenceKv, positions: number): KvReuse | undefined {
    if (sequence.blocks.length > 0) throw new Error("fork() needs a sequence that holds no blocks");
    const blockSize = this.blockSize;
    if (positions < 1 || source.blocks.length < Math.ceil(positions / blockSize) || source.pendingCopies.length > 0) return undefined;
    if (this.window && this.resumablePrefix(source.blocks, positions) < positions) return undefined;
    const shared = Math.floor(positions / blockSize);
    const partial = positions - shared * blockSize;
    const copies: KvCopy[] = partial > 0 ? [{ sourceBlocks: source.blocks.slice(0, shared + 1), sourceStart: shared * blockSize, targetStart: shared * blockSize, count: partial }] : [];
    const pinned = partial > 0 ? [source.blocks[shared]] : [];
    const sharedBlocks = source.blocks.slice(0, shared);
    for (const id of pinned) this.pool.retain(id);
    for (const id of sharedBlocks) this.pool.retain(id);
    sequence.blocks.push(...sharedBlocks);
    // Committing registers nothing new for the shared blocks (the index keeps the chain's existing blocks).
    sequence.committedBlocks = 0;
    sequence.lastCommitted = null;
    if (this.window) {
      sequence.localFrom = Math.min(Math.floor(this.window.firstVisible(positions) / blockSize), shared);
      for (let i = sequence.localFrom; i < shared; i++) this.window.hold(sequence.blocks[i]);
      for (const id of pinned) this.window.hold(id);
    }
    if (!this.allocate(sequence, partial > 0 ? 1 : 0)) {
      for (const id of pinned) {
        this.window?.unhold(id, true);
        this.pool.release(id);
      }
      this.release(sequence);
      return undefined;
    }
    sequence.pendingCopies = copies;
    sequence.pinned = pinned;
    return { prefixTokens: positions, suffixTokens: 0, forkedTokens: positions };
  }

  /** Grows the sequence's table to hold `positions` positions, evicting cached blocks if needed; false if it cannot. */
  reserve(sequence: SequenceKv, positions: number): boolean {
    return this.allocate(sequence, Math.ceil(positions / this.blockSize) - sequence.blocks.length);
  }

  /** Hands the queued copies to the caller (who must run them now) and unpins their sources afterwards via done(). */
  takeCopies(sequence: SequenceKv): { copies: KvCopy[]; done: () => void } {
    const copies = sequence.pendingCopies;
    const pinned = sequence.pinned;
    sequence.pendingCopies = [];
    sequence.pinned = [];
    return {
      copies,
      done: () => {
        for (const id of pinned) {
          this.window?.unhold(id, true);
          this.pool.release(id);
        }
      },
    };
  }

  /**
   * Lets go of the local-layer slots of the sequence's blocks that no position from `next` on can see (a no-op without
   * freed sliding windows). Call after each forward pass with the positions now computed. The window is kept from
   * the last block boundary, not from `next`: a later prompt can then resume after the last full (cached) block.
   */
  trim(sequence: SequenceKv, next: number): void {
    if (!this.window) return;
    const firstVisible = this.window.firstVisible(Math.floor(next / this.blockSize) * this.blockSize);
    while (sequence.localFrom < sequence.blocks.length && (sequence.localFrom + 1) * this.blockSize <= firstVisible) {
      this.window.unhold(sequence.blocks[sequence.localFrom], false);
      sequence.localFrom++;
    }
  }

  /** The sequence's local-layer block table (-1 where its window no longer reaches); undefined without freed windows. */
  localTable(sequence: SequenceKv): Int32Array | undefined {
    return this.window?.table(sequence.blocks);
  }

  /**
   * The longest reuse of at most `tokens` positions (of the chain `blocks`) after which computing can resume: the
   * first new position's window must find every earlier position's local KV. Candidates are `tokens`, then block
   * boundaries downwards; 0 always resumes.
   */
  private resumablePrefix(blocks: readonly number[], tokens: number): number {
    const window = this.window!;
    const blockSize = this.blockSize;
    const resumable = (h: number) => {
      for (let i = Math.floor(window.firstVisible(h) / blockSize); i * blockSize < h; i++) if (!window.has(blocks[i])) return false;
      return true;
    };
    if (resumable(tokens)) return tokens;
    for (let h = Math.floor((tokens - 1) / blockSize) * blockSize; h > 0; h -= blockSize) if (resumable(h)) return h;
    return 0;
  }

  /** Registers the sequence's blocks that are full of computed KV: `tokens` of which the first `computed` are cached. */
  commit(sequence: SequenceKv, tokens: readonly number[], computed: number): void {
    if (!this.prefixCaching) return;
    const blockSize = this.blockSize;
    while ((sequence.committedBlocks + 1) * blockSize <= computed) {
      const i = sequence.committedBlocks;
      sequence.lastCommitted = this.index.insert(sequence.lastCommitted, tokens.slice(i * blockSize, (i + 1) * blockSize), sequence.blocks[i]);
      sequence.committedBlocks++;
    }
  }

  /**
   * Returns every block of the sequence (cached ones stay in the index) and drops its pending copies. Local-layer slots
   * of cached blocks stay with them (idle), so that a prompt continuing this one can resume at its end.
   */
  release(sequence: SequenceKv): void {
    if (this.window) {
      for (let i = sequence.localFrom; i < sequence.blocks.length; i++) this.window.unhold(sequence.blocks[i], i < sequence.committedBlocks);
      for (const id of sequence.pinned) this.window.unhold(id, true);
    }
    for (const id of sequence.blocks) this.pool.release(id);
    for (const id of sequence.pinned) this.pool.release(id);
    sequence.localFrom = 0;
    sequence.blocks.length = 0;
    sequence.committedBlocks = 0;
    sequence.lastCommitted = null;
    sequence.pendingCopies = [];
    sequence.pinned = [];
  }

  /**
   * Counts an admission that stuck (adopt() may run again for a request the scheduler could not admit yet, so it does
   * not count itself): `promptTokens` known tokens, of which `reuse` came from the cache.
   */
  recordAdmission(promptTokens: number, reuse: KvReuse): void {
    // A fork from a group member did not look the prompt up: the prefix cache's counters leave it out.
    if (reuse.forkedTokens) return;
    const { prefixTokens, suffixTokens } = reuse;
    const c = this.counters;
    c.lookups++;
    c.promptTokens += promptTokens;
    c.prefixTokens += prefixTokens;
    c.suffixTokens += suffixTokens;
    if (prefixTokens > 0) c.prefixHits++;
    if (suffixTokens > 0) c.sectionHits++;
  }

  private allocate(sequence: SequenceKv, count: number): boolean {
    if (count <= 0) return true;
    if (this.pool.freeCount < count) this.index.evict(count - this.pool.freeCount);
    let blocks: number[];
    try {
      blocks = this.pool.allocate(count);
    } catch (error) {
      if (error instanceof OutOfKvBlocksError) return false;
      throw error;
    }
    // New blocks get local-layer slots too (reclaiming idle ones); without enough, nothing is taken.
    const window = this.window;
    if (window) {
      const held = blocks.findIndex((block) => !window.hold(block));
      if (held >= 0) {
        for (const block of blocks.slice(0, held)) window.unhold(block, false);
        for (const block of blocks) this.pool.release(block);
        return false;
      }
    }
    sequence.blocks.push(...blocks);
    return true;
  }
}

function concatTokens(chain: readonly CachedBlock[]): Int32Array {
  const out = new Int32Array(chain.reduce((n, block) => n + block.tokens.length, 0));
  let at = 0;
  for (const block of chain) {
    out.set(block.tokens, at);
    at += block.tokens.length;
  }
  return out;
}
