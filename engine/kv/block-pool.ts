// The KV block pool: fixed-size blocks handed out by id, with reference counts so blocks can be shared.
// Mechanism only: which blocks to keep or evict is decided by policy code elsewhere.

/** Thrown when the pool has no free block left. */
export class OutOfKvBlocksError extends Error {
  override readonly name = "OutOfKvBlocksError";
  constructor(readonly requested: number, readonly available: number) {
    super(`KV cache is full: ${requested} block(s) requested, ${available} free`);
  }
}

/** A pool of `capacity` KV blocks, each holding `blockSize` token positions for every layer. */
export class BlockPool {
  private readonly refCounts: Uint32Array;
  private readonly freeList: number[] = [];
  /** Called with each block that returns to the free list (sliding-window slots follow their blocks). */
  onFree?: (id: number) => void;

  constructor(readonly capacity: number, readonly blockSize: number) {
    if (!Number.isInteger(capacity) || capacity <= 0) throw new RangeError(`KV block capacity must be a positive integer, got ${capacity}`);
    this.refCounts = new Uint32Array(capacity);
    for (let id = capacity - 1; id >= 0; id--) this.freeList.push(id);
  }

  /** Blocks not referenced by anyone. */
  get freeCount(): number {
    return this.freeList.length;
  }

  /** Takes `count` free blocks (reference count 1 each), or throws {@link OutOfKvBlocksError} taking none. */
  allocate(count: number): number[] {
    if (count > this.freeList.length) throw new OutOfKvBlocksError(count, this.freeList.length);
    const ids = this.freeList.splice(this.freeList.length - count, count).reverse();
    for (const id of ids) this.refCounts[id] = 1;
    return ids;
  }

  /** Adds a reference to a block already in use (sharing it between sequences). */
  retain(id: number): void {
    if (this.refCounts[id] === 0) throw new Error(`KV block ${id} is not allocated`);
    this.refCounts[id]++;
  }

  /** Drops a reference; the block returns to the free list when none remain. */
  release(id: number): void {
    if (this.refCounts[id] === 0) throw new Error(`KV block ${id} released twice`);
    if (--this.refCounts[id] === 0) {
      this.freeList.push(id);
      this.onFree?.(id);
    }
  }

  /** Current reference count of a block (0 = free). */
  refCount(id: number): number {
    return this.refCounts[id];
  }
}

/** One sequence's block table: logical block i of the sequence lives in physical block `blocks[i]`. */
export class BlockTable {
  private readonly blocks: number[] = [];

  constructor(private readonly pool: BlockPool) {}

  /** Physical block ids in logical order. */
  get ids(): readonly number[] {
    return this.blocks;
  }

  /** Token positions this table can hold without allocating. */
  get capacity(): number {
    return this.blocks.length * this.pool.blockSize;
  }

  /** Grows the table to hold `tokens` positions; allocates nothing on failure. */
  reserve(tokens: number): void {
    const needed = Math.ceil(tokens / this.pool.blockSize) - this.blocks.length;
    if (needed > 0) this.blocks.push(...this.pool.allocate(needed));
  }

  /** Returns every block to the pool. */
  releaseAll(): void {
    for (const id of this.blocks) this.pool.release(id);
    this.blocks.length = 0;
  }
}
