// The section-pruning match: how much of a new input can reuse one cached token chain when the input is the chain
// with one span pruned. The chain splits into A B C and the input into A C D; A is reused in place, C is reused by
// relocating its KV right after A. Pure token arithmetic: no blocks, no KV.

/** How an input relates to a cached chain. Positions are relative to the start of both arrays. */
export interface SectionMatch {
  /** Length of A: the input and the chain agree on their first `prefixLength` tokens. */
  prefixLength: number;
  /** Length of C (0: no suffix reuse): input[prefixLength, +suffixLength) equals chain[suffixSource, +suffixLength). */
  suffixLength: number;
  /** Where C starts in the chain (after the pruned span B); meaningful when suffixLength > 0. */
  suffixSource: number;
  /** Why a candidate C was not used, if one was found: too short, or a second pruned span follows it. */
  rejected?: "suffix-at-or-below-threshold" | "two-pruned-spans";
}

/** Length of the longest common run of a from i and b from j. */
function commonRun(a: ArrayLike<number>, i: number, b: ArrayLike<number>, j: number): number {
  let n = 0;
  while (i + n < a.length && j + n < b.length && a[i + n] === b[j + n]) n++;
  return n;
}

/** The longest run of `input` from `from` found in `chain` at or after `searchStart` (first such place on ties). */
function longestRunIn(input: ArrayLike<number>, from: number, chain: ArrayLike<number>, searchStart: number): { at: number; length: number } {
  let best = { at: -1, length: 0 };
  if (from >= input.length) return best;
  const first = input[from];
  for (let j = searchStart; j < chain.length; j++) {
    if (chain[j] !== first) continue;
    const length = commonRun(input, from, chain, j);
    if (length > best.length) best = { at: j, length };
  }
  return best;
}

/**
 * Matches `input` against `chain`: A is their common prefix; C is the longest run of the input right after A that
 * appears later in the chain (after a non-empty pruned span B), used only if it is longer than `threshold` tokens and
 * no second pruned span follows it (a run longer than the threshold of the input right after C, found later in the
 * chain past C: two pruned spans fall back to the prefix alone). At most `maxReuse` tokens are reused in all.
 */
export function matchSections(input: ArrayLike<number>, chain: ArrayLike<number>, threshold: number, maxReuse: number): SectionMatch {
  const common = commonRun(input, 0, chain, 0);
  const prefixLength = Math.max(0, Math.min(common, maxReuse));
  const prefixOnly: SectionMatch = { prefixLength, suffixLength: 0, suffixSource: 0 };
  if (prefixLength < common || common >= input.length || common >= chain.length) return prefixOnly;

  const section = longestRunIn(input, common, chain, common + 1);
  if (section.length === 0) return prefixOnly;
  const usable = Math.min(section.length, maxReuse - prefixLength);
  if (usable <= threshold) return { ...prefixOnly, rejected: "suffix-at-or-below-threshold" };
  const second = longestRunIn(input, common + section.length, chain, section.at + section.length + 1);
  if (second.length > threshold) return { ...prefixOnly, rejected: "two-pruned-spans" };
  return { prefixLength, suffixLength: usable, suffixSource: section.at };
}
