// Sets of code points as sorted lists of inclusive ranges, and the ECMAScript character class sets.

/** A set of code points: sorted, disjoint, non-adjacent inclusive ranges. */
export type Ranges = ReadonlyArray<readonly [lo: number, hi: number]>;

/** The largest Unicode code point. */
export const MAX_CODE_POINT = 0x10ffff;

/** Sorts and merges overlapping or adjacent ranges; ranges with lo > hi are ignored. */
export function normalise(list: Iterable<readonly [number, number]>): Ranges {
  const sorted = [...list].filter(([lo, hi]) => lo <= hi).sort((a, b) => a[0] - b[0]);
  const out: [number, number][] = [];
  for (const [lo, hi] of sorted) {
    const last = out[out.length - 1];
    if (last !== undefined && lo <= last[1] + 1) last[1] = Math.max(last[1], hi);
    else out.push([lo, hi]);
  }
  return out;
}

/** Every code point not in `set` (`set` must be normalised). */
export function complement(set: Ranges): Ranges {
  const out: [number, number][] = [];
  let next = 0;
  for (const [lo, hi] of set) {
    if (lo > next) out.push([next, lo - 1]);
    next = hi + 1;
  }
  if (next <= MAX_CODE_POINT) out.push([next, MAX_CODE_POINT]);
  return out;
}

/** The code points of `set` that are not in `removed` (both normalised). */
export function subtract(set: Ranges, removed: Ranges): Ranges {
  if (removed.length === 0) return set;
  return complement(normalise([...complement(set), ...removed]));
}

/** Every code point ([\s\S]). */
export const ANY: Ranges = [[0, MAX_CODE_POINT]];
/** \d */
export const DIGIT: Ranges = [[0x30, 0x39]];
/** \w: ASCII letters, digits and underscore (no i/u case folding applies without the i flag). */
export const WORD: Ranges = normalise([[0x30, 0x39], [0x41, 0x5a], [0x5f, 0x5f], [0x61, 0x7a]]);
/** \s: ECMAScript WhiteSpace and LineTerminator. */
export const SPACE: Ranges = normalise([
  [0x09, 0x0d], [0x20, 0x20], [0xa0, 0xa0], [0x1680, 0x1680], [0x2000, 0x200a],
  [0x2028, 0x2029], [0x202f, 0x202f], [0x205f, 0x205f], [0x3000, 0x3000], [0xfeff, 0xfeff],
]);
/** `.` without the s flag: everything but the line terminators \n, \r, U+2028 and U+2029. */
export const DOT: Ranges = complement(normalise([[0x0a, 0x0a], [0x0d, 0x0d], [0x2028, 0x2029]]));

/** `set` with the other case of every ASCII letter in it added (the i flag, for patterns that are ASCII). */
export function foldAsciiCase(set: Ranges): Ranges {
  const added: [number, number][] = [];
  for (const [lo, hi] of set) {
    for (const [from, to, shift] of [[0x41, 0x5a, 0x20], [0x61, 0x7a, -0x20]] as const) {
      const a = Math.max(lo, from);
      const b = Math.min(hi, to);
      if (a <= b) added.push([a + shift, b + shift]);
    }
  }
  return added.length === 0 ? set : normalise([...set, ...added]);
}
