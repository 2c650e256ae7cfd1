// The prefix cache index: a tree of full KV blocks in which a node's identity is its parent plus its block's tokens,
// so every path from the root is a cached token chain (a radix tree at block granularity; exact, no hash collisions).
// The index holds one pool reference per cached block; a block nobody else references is evictable, leaves first,
// least recently used first. Mechanism only: the KV manager decides when to look up, insert and evict.
import type { BlockPool } from "./block-pool.js";
import { chainHash } from "./block-hash.js";

/** One cached full block: `tokens` at positions depth * blockSize .. (depth + 1) * blockSize of its chain. */
export interface CachedBlock {
  /** Physical KV block. */
  readonly blockId: number;
  readonly parent: CachedBlock | null;
  /** Logical block index in the chain (0 for a child of the root). */
  readonly depth: number;
  readonly tokens: Int32Array;
  /** The chain hash of the blocks from the root to this one (block-hash.ts). */
  readonly hash: string;
}

/** What changed in the index since the last look: chains (by hash) now cached, and chains no longer cached. */
export interface PrefixCacheChange {
  added: string[];
  removed: string[];
}

interface Node extends CachedBlock {
  readonly parent: Node | null;
  readonly key: string;
  readonly children: Map<string, Node>;
  lastUsed: number;
}

/** Map key of a block's tokens among its siblings. */
function keyOf(tokens: ArrayLike<number>, start: number, length: number): string {
  let key = "";
  for (let i = 0; i < length; i++) key += `${tokens[start + i]},`;
  return key;
}

/** The block-granular radix tree of cached token chains. */
export class PrefixIndex {
  private readonly roots = new Map<string, Node>();
  /** Every node, least recently used first. NOTE: touching a chain leaf-first keeps leaves ahead of their parents. */
  private readonly lru = new Map<Node, true>();
  private clock = 0;
  /** Each chain's latest state since takeChanges() (true: cached), in the order of the changes. */
  private readonly changes = new Map<string, boolean>();

  constructor(private readonly pool: BlockPool) {}

  /** Cached blocks. */
  get size(): number {
    return this.lru.size;
  }

  /** Cached blocks only the index references (they would be freed by eviction). */
  get evictableCount(): number {
    let count = 0;
    for (const node of this.lru.keys()) if (this.pool.refCount(node.blockId) === 1) count++;
    return count;
  }

  /** The longest chain of cached blocks equal to the leading full blocks of `tokens`; marks it recently used. */
  match(tokens: ArrayLike<number>): CachedBlock[] {
    const blockSize = this.pool.blockSize;
    const chain: Node[] = [];
    let siblings = this.roots;
    for (let start = 0; start + blockSize <= tokens.length; start += blockSize) {
      const node = siblings.get(keyOf(tokens, start, blockSize));
      if (!node) break;
      chain.push(node);
      siblings = node.children;
    }
    this.touch(chain);
    return chain;
  }

  /**
   * Records that physical block `blockId` holds `tokens` (one full block, KV computed) right after `parent`
   * (null: the chain's first block) and retains it. If that chain position is already cached the existing block is
   * kept and returned instead, and `blockId` is not retained.
   */
  insert(parent: CachedBlock | null, tokens: ArrayLike<number>, blockId: number): CachedBlock {
    const blockSize = this.pool.blockSize;
    if (tokens.length !== blockSize) throw new RangeError(`a cached block holds ${blockSize} tokens, got ${tokens.length}`);
    const parentNode = parent as Node | null;
    const siblings = parentNode ? parentNode.children : this.roots;
    const key = keyOf(tokens, 0, blockSize);
    const existing = siblings.get(key);
    if (existing) {
      this.touch([existing]);
      return existing;
    }
    const node: Node = {
      blockId, parent: parentNode, depth: parentNode ? parentNode.depth + 1 : 0, tokens: Int32Array.from(tokens),
      hash: chainHash(parentNode?.hash ?? null, tokens, 0, blockSize), key, children: new Map(), lastUsed: 0,
    };
    this.pool.retain(blockId);
    this.changes.delete(node.hash);
    this.changes.set(node.hash, true);
    siblings.set(key, node);
    this.touch([node]);
    return node;
  }

  /**
   * Token chains continuing below `from` (null: the root), most recently used first: each is the list of blocks
   * from a child of `from` down to a leaf. Stops after `maxChains` chains or `maxBlocks` blocks visited.
   */
  continuations(from: CachedBlock | null, maxChains = 16, maxBlocks = 4096): CachedBlock[][] {
    const chains: CachedBlock[][] = [];
    let visited = 0;
    const walk = (siblings: Map<string, Node>, path: Node[]): void => {
      const ordered = [...siblings.values()].sort((a, b) => b.lastUsed - a.lastUsed);
      for (const node of ordered) {
        if (chains.length >= maxChains || visited >= maxBlocks) return;
        visited++;
        path.push(node);
        if (node.children.size === 0) chains.push([...path]);
        else walk(node.children, path);
        path.pop();
      }
    };
    walk(from ? (from as Node).children : this.roots, []);
    return chains;
  }

  /** Frees up to `count` blocks by dropping least recently used cached leaves nobody else references. */
  evict(count: number): number {
    let freed = 0;
    while (freed < count) {
      let progress = false;
      for (const node of this.lru.keys()) {
        if (freed >= count) break;
        if (node.children.size > 0 || this.pool.refCount(node.blockId) !== 1) continue;
        this.remove(node);
        freed++;
        progress = true;
      }
      if (!progress) break;
    }
    return freed;
  }

  /** Drops every cached block nobody else references (all of them when no sequence holds blocks). */
  clear(): number {
    return this.evict(Number.POSITIVE_INFINITY);
  }

  /** Each chain's latest state since the last call: cached now, or not (a chain cached and dropped in between is among the removed). */
  takeChanges(): PrefixCacheChange {
    const change: PrefixCacheChange = { added: [], removed: [] };
    for (const [hash, cached] of this.changes) (cached ? change.added : change.removed).push(hash);
    this.changes.clear();
    return change;
  }

  /** The hash of every cached chain (a full picture, for a newcomer that then follows takeChanges()). */
  hashes(): string[] {
    return [...this.lru.keys()].map((node) => node.hash);
  }

  private remove(node: Node): void {
    (node.parent ? node.parent.children : this.roots).delete(node.key);
    this.changes.delete(node.hash);
    this.changes.set(node.hash, false);
    this.lru.delete(node);
    this.pool.release(node.blockId);
  }

  /** Marks blocks recently used: deepest first, so that a chain's leaf is evicted before its ancestors. */
  private touch(chain: readonly Node[]): void {
    const now = ++this.clock;
    for (let i = chain.length - 1; i >= 0; i--) {
      const node = chain[i];
      node.lastUsed = now;
      this.lru.delete(node);
      this.lru.set(node, true);
    }
  }
}
