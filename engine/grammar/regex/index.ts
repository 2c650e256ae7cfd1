// Compiles a JSON Schema `pattern` into a DFA over Unicode code points, for constraining generated strings.
//
// Supported subset (ECMA-262 regular expressions, read as with the u flag and no other flags: case-sensitive,
// code points rather than UTF-16 units, so `.` and `[^a]` match one astral character):
// - Literal characters, including astral ones; escaped punctuation (`\.` `\*` `\\` `\/` `\-` ...: any ASCII
//   punctuation, a little more than the u flag's syntax characters); `\t \n \r \f \v \0`, `\xHH`, `\uHHHH`
//   (an escaped surrogate pair is one code point), `\u{H...}`.
// - `.`: any code point except the line terminators \n, \r, U+2028 and U+2029 (no s flag).
// - Classes `[...]` and `[^...]` with ranges and escapes (`\b` inside a class is backspace); `\d \D \w \W
//   \s \S` inside and outside classes, as ECMAScript defines them: \d = [0-9], \w = [A-Za-z0-9_],
//   \s = \t \n \v \f \r, space, U+00A0, U+1680, U+2000-U+200A, U+2028, U+2029, U+202F, U+205F, U+3000, U+FEFF.
// - Groups `(...)`, `(?:...)` and `(?<name>...)` (all just grouping), alternation `|`, quantifiers
//   `* + ? {n} {n,} {n,m}` and their lazy forms (same language); counts above 1000 are unsupported.
// - Anchors: `^` only at the start of the pattern or of a top-level alternative, `$` only at the end of
//   the pattern or of a top-level alternative. With search semantics (the default, as JSON Schema) a pattern
//   matches anywhere: an alternative without `^` may be preceded by anything, one without `$` followed by
//   anything, so `^a|b$` means "starts with a, or ends with b".
// - Lookaheads `(?=...)` and `(?!...)`, whose alternatives may end with `$`, anywhere but inside a repetition
//   other than `?`: resolved into intersections (see lookahead.ts), so each costs a DFA product.
// - Unsupported, rejected with UnsupportedPatternError naming the feature: backreferences (`\1`, `\k<name>`),
//   lookbehind (`(?<=` `(?<!`), lookaheads inside `*`, `+` or counted repetitions, word boundaries (`\b` `\B`),
//   unicode property escapes (`\p{...}` `\P{...}`), inline flags (`(?i)`, `(?i:...)`), control escapes (`\c`),
//   anchors anywhere else, and patterns that expand past 100000 NFA states or `maxStates` DFA states (counted
//   per DFA built: the pattern's, and each lookahead's).
//   Malformed patterns (`(a`, `[a-`, `a{2,1}`, `*a`, lone `{`, unknown escapes like `\q`) are rejected
//   with a feature starting "syntax:".

import { type CharDfa, determinise, type PatternWork, spend, trimDeadStates } from "./dfa.js";
import { minimise } from "./minimise.js";
import { resolveLookaheads } from "./lookahead.js";
import { buildNfa } from "./nfa.js";
import { parsePattern } from "./parse.js";
import { normalise } from "./ranges.js";

export type { CharDfa, PatternWork } from "./dfa.js";
export { trimDeadStates } from "./dfa.js";
export { UnsupportedPatternError } from "./error.js";

/** Options for {@link compilePattern}. */
export interface PatternOptions {
  /**
   * JSON Schema semantics (default true): a pattern matches if it matches anywhere in the string, i.e. unless
   * it starts with ^ it behaves as if prefixed by [\s\S]*, and unless it ends with $ as if suffixed by
   * [\s\S]*. With false, the whole string must match (as for format regexes written by us).
   */
  search?: boolean;
  /**
   * Code points that must never appear in generated strings: transitions on them are removed from the DFA
   * (default: none). The caller passes `"`, `\\` and U+0000..U+001F.
   */
  excluded?: ReadonlyArray<readonly [lo: number, hi: number]>;
  /** ASCII letters match either case, as with the i flag (default false; exact for patterns written in ASCII). */
  ignoreCase?: boolean;
  /**
   * Most DFA states before giving up with UnsupportedPatternError("more than N DFA states") (default 5000);
   * counted during subset construction, before minimisation.
   */
  maxStates?: number;
  /** Incremented by every DFA state built (the pattern's, its lookaheads' and their intersections'). */
  work?: PatternWork;
}

/**
 * Compiles `pattern` into a minimal DFA with no dead states (state 0 is the start; every state can still
 * reach acceptance). Throws UnsupportedPatternError for anything outside the subset above, and one whose
 * feature starts with "syntax:" for malformed patterns.
 */
export function compilePattern(pattern: string, options: PatternOptions = {}): CharDfa {
  const nfaOptions = { search: options.search ?? true, excluded: normalise(options.excluded ?? []) };
  const maxStates = options.maxStates ?? 5000;
  const alternatives = resolveLookaheads(parsePattern(pattern, options.ignoreCase ?? false), nfaOptions, maxStates, pattern, options.work);
  const nfa = buildNfa(alternatives, nfaOptions, pattern);
  spend(options.work, nfa.epsilon.length, pattern);
  const dfa = determinise(nfa, maxStates, pattern, options.work);
  // Minimisation already drops dead states; trimming again is one cheap pass that makes the contract explicit.
  return trimDeadStates(minimise(dfa));
}
