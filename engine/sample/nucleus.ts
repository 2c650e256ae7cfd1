// Nucleus (top_p) selection straight from a full row of logits, without sorting the row.

import type { CandidateSet } from "./candidates.js";

/** Histogram buckets over the top LOGIT_SPAN nats of the row; the last one also takes everything below. */
const BUCKETS = 1024;
const LOGIT_SPAN = 64;

/**
 * Selects the nucleus of a full row when no top_k came first: the same token set a full sort would give
 * (the shortest best-first prefix whose softmax mass reaches topP, ties broken by lower id), in O(n).
 *
 * It histograms the probability mass by logit, finds the bucket where the mass crosses topP, keeps every token
 * above that bucket and sorts only the tokens inside it. Keep one per sampler: the scratch buffers are reused.
 */
export class NucleusSelector {
  /** Bucket of each token, [vocabularySize]. */
  private bucketOf = new Uint16Array(0);
  /** Ids of the tokens in the boundary bucket, [vocabularySize]. */
  private boundaryIds = new Int32Array(0);
  private readonly bucketMass = new Float64Array(BUCKETS);

  /**
   * Fills `candidates` with the nucleus of `source` ([vocabularySize] logits by id), unsorted.
   * If the mass never reaches topP (NaN logits, rounding), every token stays a candidate.
   */
  select(source: Float32Array, topP: number, candidates: CandidateSet): void {
    const size = source.length;
    if (this.bucketOf.length < size) {
      this.bucketOf = new Uint16Array(size);
      this.boundaryIds = new Int32Array(size);
    }
    const { bucketOf, bucketMass, boundaryIds } = this;

    let max = -Infinity;
    let min = Infinity;
    for (let i = 0; i < size; i++) {
      const logit = source[i];
      if (logit > max) max = logit;
      if (logit < min && logit > -Infinity) min = logit;
    }
    const span = Math.min(max - min, LOGIT_SPAN);
    const scale = span > 0 ? (BUCKETS - 1) / span : 0;

    bucketMass.fill(0);
    let total = 0;
    for (let i = 0; i < size; i++) {
      const logit = source[i];
      const weight = Math.exp(logit - max);
      // NOTE: a higher logit never lands in a later bucket, so every bucket before the boundary is wholly in.
      const bucket = logit >= max - span ? Math.floor((max - logit) * scale) : BUCKETS - 1;
      bucketOf[i] = bucket;
      bucketMass[bucket] += weight;
      total += weight;
    }

    const target = topP * total;
    let massBefore = 0;
    let boundary = -1;
    for (let bucket = 0; bucket < BUCKETS; bucket++) {
      if (massBefore + bucketMass[bucket] >= target) {
        boundary = bucket;
        break;
      }
      massBefore += bucketMass[bucket];
    }
    if (boundary < 0) {
      candidates.fillAll(source);
      return;
    }

    candidates.reserve(size);
    const { ids, logits } = candidates;
    let kept = 0;
    let boundaryCount = 0;
    for (let i = 0; i < size; i++) {
      const bucket = bucketOf[i];
      if (bucket < boundary) {
        ids[kept] = i;
        logits[kept] = source[i];
        kept++;
      } else if (bucket === boundary) {
        boundaryIds[boundaryCount++] = i;
      }
    }
    const inBoundary = boundaryIds.subarray(0, boundaryCount);
    inBoundary.sort((a, b) => source[b] - source[a] || a - b);
    let cumulative = massBefore;
    for (let j = 0; j < boundaryCount; j++) {
      const id = inBoundary[j];
      ids[kept] = id;
      logits[kept] = source[id];
      kept++;
      cumulative += Math.exp(source[id] - max);
      if (cumulative >= target) break;
    }
    candidates.size = kept;
    candidates.sorted = false;
  }
}
