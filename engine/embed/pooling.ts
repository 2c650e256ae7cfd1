// How a model that produces embeddings turns its final-normed hidden states into one vector per input: the pooling its
// GGUF declares (`<arch>.pooling_type`, as llama.cpp reads it), the running pool of an input's rows, and L2 norming.

/** Pooling a model declares, by llama.cpp's names (enum llama_pooling_type: 1 mean, 2 cls, 3 last, 4 rank). */
export type PoolingType = "mean" | "cls" | "last" | "rank";

/** llama_pooling_type's values in GGUF files (0 is none: no pooling, a generation-only model). */
const POOLING_BY_ID: Readonly<Record<number, PoolingType | null>> = { 0: null, 1: "mean", 2: "cls", 3: "last", 4: "rank" };

/**
 * The pooling `<arch>.pooling_type` declares in a GGUF's metadata: undefined when the key is absent or 0 (none).
 * @throws RangeError for a value llama.cpp does not define.
 */
export function poolingFromGguf(metadata: ReadonlyMap<string, unknown>): PoolingType | undefined {
  const arch = metadata.get("general.architecture");
  const value = metadata.get(`${String(arch)}.pooling_type`);
  if (value === undefined) return undefined;
  const id = typeof value === "bigint" ? Number(value) : value;
  const pooling = typeof id === "number" ? POOLING_BY_ID[id] : undefined;
  if (pooling === undefined) throw new RangeError(`${String(arch)}.pooling_type is ${String(value)}, not one of llama.cpp's pooling types (0 none, 1 mean, 2 cls, 3 last, 4 rank)`);
  return pooling ?? undefined;
}

/** Which rows [start, start + count) of an input of `length` tokens the pooling reads (false: none of them). */
export function poolingReads(pooling: PoolingType, start: number, count: number, length: number): boolean {
  if (pooling === "mean") return count > 0;
  if (pooling === "cls") return start === 0 && count > 0;
  return start + count === length; // last
}

/**
 * One input's pool, fed the final-normed hidden states of its rows as steps compute them. A row computed twice (the
 * input was preempted and recomputed) counts once: each position is pooled the first time it is seen.
 */
export class RowPool {
  private readonly sum: Float64Array;
  private readonly seen: Uint8Array;
  private seenCount = 0;
  private picked: Float32Array | undefined;

  constructor(readonly pooling: Exclude<PoolingType, "rank">, readonly length: number, readonly width: number) {
    this.sum = new Float64Array(pooling === "mean" ? width : 0);
    this.seen = new Uint8Array(pooling === "mean" ? length : 0);
  }

  /** Takes rows [start, start + count) of the input: `rows` is [count, width]. */
  add(start: number, rows: Float32Array): void {
    const { width } = this;
    const count = rows.length / width;
    if (this.pooling === "cls") {
      if (start === 0) this.picked = rows.slice(0, width);
      return;
    }
    if (this.pooling === "last") {
      if (start + count === this.length) this.picked = rows.slice((count - 1) * width, count * width);
      return;
    }
    for (let r = 0; r < count; r++) {
      const position = start + r;
      if (this.seen[position]) continue;
      this.seen[position] = 1;
      this.seenCount++;
      for (let i = 0; i < width; i++) this.sum[i] += rows[r * width + i];
    }
  }

  /** Whether every row the pooling needs has been seen. */
  get complete(): boolean {
    return this.pooling === "mean" ? this.seenCount === this.length : this.picked !== undefined;
  }

  /** The pooled vector (not normed). @throws Error while rows are missing. */
  result(): Float32Array {
    if (!this.complete) throw new Error(`the ${this.pooling} pool of an input of ${this.length} tokens is missing rows`);
    if (this.pooling !== "mean") return this.picked!;
    return Float32Array.from(this.sum, (value) => value / this.length);
  }
}

/** `vector` scaled to unit Euclidean length (as llama.cpp's common_embd_normalize with norm 2); zeros stay zeros. */
export function l2Normalize(vector: Float32Array): Float32Array {
  let squares = 0;
  for (const value of vector) squares += value * value;
  const norm = Math.sqrt(squares);
  const scale = norm > 0 ? 1 / norm : 0;
  return Float32Array.from(vector, (value) => value * scale);
}
