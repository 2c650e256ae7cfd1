// A reusable list of candidate tokens (ids with their logits) and the partial top-k selection that fills it.

/**
 * Candidate tokens for one sampling step, in buffers kept between steps ([capacity] each; `size` are live).
 *
 * NOTE: "better" means a higher logit, or the lower id on equal logits; when `sorted` is true the
 * live entries are ordered best first, so the order (and hence every draw) is a pure function of the logits.
 */
export class CandidateSet {
  /** Token ids, [capacity]. */
  ids: Int32Array;
  /** Logits of those tokens, [capacity]. */
  logits: Float32Array;
  /** Number of live entries. */
  size = 0;
  /** Whether the live entries are ordered best first. */
  sorted = false;

  constructor(capacity: number) {
    this.ids = new Int32Array(capacity);
    this.logits = new Float32Array(capacity);
  }

  /** Grows the buffers (dropping their contents) if they hold fewer than `capacity` entries. */
  reserve(capacity: number): void {
    if (this.ids.length >= capacity) return;
    this.ids = new Int32Array(capacity);
    this.logits = new Float32Array(capacity);
    this.size = 0;
  }

  /** Makes every token of `source` ([vocabularySize] logits by id) a candidate, in id order. */
  fillAll(source: Float32Array): void {
    this.reserve(source.length);
    for (let i = 0; i < source.length; i++) this.ids[i] = i;
    this.logits.set(source);
    this.size = source.length;
    this.sorted = false;
  }

  /**
   * Makes the `k` best tokens of `source` the candidates, sorted best first, without sorting all of `source`:
   * a bounded heap costs O(n) comparisons plus O(k log k) when most tokens lose to the current k-th best.
   */
  selectTop(source: Float32Array, k: number): void {
    const count = Math.min(k, source.length);
    this.reserve(count);
    const ids = this.ids;
    const logits = this.logits;
    // A min-heap on "better": the root is the worst of the k kept so far.
    for (let i = 0; i < count; i++) {
      ids[i] = i;
      logits[i] = source[i];
      siftUp(ids, logits, i);
    }
    for (let i = count; i < source.length; i++) {
      // NOTE: strict ">" suffices: an equal logit has a higher id than every kept token, so it is worse.
      if (source[i] > logits[0]) {
        ids[0] = i;
        logits[0] = source[i];
        siftDown(ids, logits, 0, count);
      }
    }
    // Heap sort: move the worst to the end repeatedly, leaving the best at index 0.
    for (let end = count - 1; end > 0; end--) {
      swap(ids, logits, 0, end);
      siftDown(ids, logits, 0, end);
    }
    this.size = count;
    this.sorted = true;
  }
}

function isWorse(ids: Int32Array, logits: Float32Array, a: number, b: number): boolean {
  return logits[a] < logits[b] || (logits[a] === logits[b] && ids[a] > ids[b]);
}

function swap(ids: Int32Array, logits: Float32Array, a: number, b: number): void {
  const id = ids[a];
  ids[a] = ids[b];
  ids[b] = id;
  const logit = logits[a];
  logits[a] = logits[b];
  logits[b] = logit;
}

function siftUp(ids: Int32Array, logits: Float32Array, index: number): void {
  while (index > 0) {
    const parent = (index - 1) >> 1;
    if (!isWorse(ids, logits, index, parent)) return;
    swap(ids, logits, index, parent);
    index = parent;
  }
}

function siftDown(ids: Int32Array, logits: Float32Array, index: number, size: number): void {
  for (;;) {
    const left = 2 * index + 1;
    if (left >= size) return;
    const right = left + 1;
    const worstChild = right < size && isWorse(ids, logits, right, left) ? right : left;
    if (!isWorse(ids, logits, worstChild, index)) return;
    swap(ids, logits, index, worstChild);
    index = worstChild;
  }
}
