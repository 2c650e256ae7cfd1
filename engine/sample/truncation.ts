// The truncating samplers (top_p, min_p) over a candidate set, with llama.cpp's keep rules.

import type { CandidateSet } from "./candidates.js";

/**
 * Nucleus truncation of sorted candidates: keeps the shortest best-first prefix whose probability
 * (softmax over the live candidates at temperature 1) reaches `topP`; always keeps at least one.
 */
export function truncateTopP(candidates: CandidateSet, topP: number): void {
  if (topP >= 1 || candidates.size === 0) return;
  if (!candidates.sorted) throw new Error("truncateTopP needs candidates sorted best first");
  const { logits, size } = candidates;
  const max = logits[0];
  let sum = 0;
  for (let i = 0; i < size; i++) sum += Math.exp(logits[i] - max);
  const target = topP * sum;
  let cumulative = 0;
  for (let i = 0; i < size; i++) {
    cumulative += Math.exp(logits[i] - max);
    if (cumulative >= target) {
      candidates.size = i + 1;
      return;
    }
  }
}

/**
 * min_p truncation: keeps the candidates whose probability is at least `minP` times the best one's
 * (logit >= max + ln(minP)), preserving order. The best candidate always survives.
 */
export function truncateMinP(candidates: CandidateSet, minP: number): void {
  if (minP <= 0 || candidates.size === 0) return;
  const { ids, logits, size } = candidates;
  let max = -Infinity;
  for (let i = 0; i < size; i++) if (logits[i] > max) max = logits[i];
  const threshold = max + Math.log(minP);
  let kept = 0;
  for (let i = 0; i < size; i++) {
    if (logits[i] >= threshold) {
      ids[kept] = ids[i];
      logits[kept] = logits[i];
      kept++;
    }
  }
  candidates.size = kept;
}

