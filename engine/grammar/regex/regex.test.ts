// Tests for the pattern compiler: every DFA is checked against JavaScript's own RegExp (u flag) on hand-picked,
// mutated and random strings, and on random patterns; plus excluded code points, dead-state trimming and errors.

import { describe, expect, it } from "vitest";
import { seededRandom } from "../../testing/seeded-random.js";
import { complement, dfaAccepts, intersect, restrict, stringsDfa } from "./dfa-ops.js";
import { type CharDfa, compilePattern, type PatternOptions, trimDeadStates, UnsupportedPatternError } from "./index.js";
import { ANY, complement as complementRanges, normalise } from "./ranges.js";

function pick<T>(random: () => number, items: readonly T[]): T {
  return items[Math.floor(random() * items.length)];
}

/** Runs the DFA over the code points of `text`. */
function run(dfa: CharDfa, text: string): boolean {
  let state = 0;
  for (const c of text) {
    state = dfa.next(state, c.codePointAt(0)!);
    if (state < 0) return false;
  }
  return dfa.accepting(state);
}

/** What the DFA should say: RegExp.test (search) or a whole-string match. */
function reference(pattern: string, search: boolean): RegExp {
  return new RegExp(search ? pattern : `^(?:${pattern})$`, "u");
}

/** Table shape, and (unless it is the one-state dead DFA) every state reachable from 0 and able to accept. */
function checkInvariants(dfa: CharDfa): void {
  const n = dfa.stateCount;
  const problems: string[] = [];
  const reverse: number[][] = Array.from({ length: n }, () => []);
  for (let s = 0; s < n; s++) {
    let previousHi = -1;
    for (const [lo, hi, t] of dfa.transitions(s)) {
      if (lo <= previousHi || hi < lo || hi > 0x10ffff) problems.push(`state ${s}: bad range ${lo}..${hi}`);
      if (!(t >= 0 && t < n)) problems.push(`state ${s}: bad target ${t}`);
      if (dfa.next(s, lo) !== t || dfa.next(s, hi) !== t) problems.push(`state ${s}: next disagrees on ${lo}..${hi}`);
      previousHi = hi;
      reverse[t]?.push(s);
    }
  }
  const reached = new Set<number>();
  const queue = [0];
  while (queue.length > 0) {
    const s = queue.pop()!;
    if (reached.has(s)) continue;
    reached.add(s);
    for (const [, , t] of dfa.transitions(s)) queue.push(t);
  }
  if (reached.size !== n) problems.push(`${n - reached.size} unreachable states`);
  const live = new Set<number>();
  for (let s = 0; s < n; s++) if (dfa.accepting(s)) queue.push(s);
  while (queue.length > 0) {
    const s = queue.pop()!;
    if (live.has(s)) continue;
    live.add(s);
    queue.push(...reverse[s]);
  }
  const deadStart = n === 1 && !dfa.accepting(0) && dfa.transitions(0).length === 0;
  if (live.size !== n && !deadStart) problems.push(`${n - live.size} states cannot reach acceptance`);
  expect(problems).toEqual([]);
}

/** Compares the compiled DFA with RegExp on `strings`; returns the disagreements (empty when all agree). */
function disagreements(pattern: string, strings: Iterable<string>, options: PatternOptions = {}): string[] {
  const dfa = compilePattern(pattern, options);
  checkInvariants(dfa);
  const regex = reference(pattern, options.search ?? true);
  const bad: string[] = [];
  for (const text of strings) if (run(dfa, text) !== regex.test(text)) bad.push(text);
  return bad;
}

const EXTRAS = Array.from("aAzZm059_-.@ \n\t\r\"\\é😀\u2028\u00a0\ufeff{}");

/** The pattern's own code points, their neighbours, and a few others. */
function alphabetOf(pattern: string): string[] {
  const chars = new Set(EXTRAS);
  for (const c of pattern) {
    const code = c.codePointAt(0)!;
    for (const d of [code - 1, code, code + 1]) if (d >= 0 && (d < 0xd800 || d > 0xdfff)) chars.add(String.fromCodePoint(d));
  }
  return [...chars];
}

/** Random strings over `alphabet`, and random edits of `samples` (which reach the interesting lengths). */
function fuzzStrings(seed: number, alphabet: readonly string[], samples: readonly string[], count: number): string[] {
  const random = seededRandom(seed);
  const out: string[] = [];
  for (let i = 0; i < count; i++) {
    if (samples.length > 0 && i % 2 === 1) {
      const chars = Array.from(pick(random, samples));
      for (let edits = 1 + Math.floor(random() * 3); edits > 0; edits--) {
        const at = Math.floor(random() * (chars.length + 1));
        const kind = random();
        if (kind < 0.35) chars.splice(at, 0, pick(random, alphabet));
        else if (kind < 0.6) chars.splice(at, 1);
        else if (kind < 0.85) chars.splice(at, 1, pick(random, alphabet));
        else chars.splice(at, 0, ...chars.slice(at, at + 3));
      }
      out.push(chars.join(""));
    } else {
      const length = Math.floor(random() * random() * 14);
      out.push(Array.from({ length }, () => pick(random, alphabet)).join(""));
    }
  }
  return out;
}

/** Hand-written patterns with strings worth trying (matching ones first). */
const CASES: ReadonlyArray<readonly [pattern: string, samples: readonly string[]]> = [
  ["^[a-z]+$", ["abc", "z", "", "A", "abc1", "ab c"]],
  ["^\\d{3}-\\d{4}$", ["555-1234", "55-1234", "5555-1234", "555-12345", "abc-defg", "x555-1234"]],
  ["ab|cd", ["ab", "xcdx", "acbd", "", "a"]],
  ["^(a|b)*c$", ["c", "abbac", "abca", "ab", "cc"]],
  ["colou?r", ["color", "colour", "my colour!", "colouur", "colr"]],
  ["^[^\"\\\\]*$", ["plain", "", "quo\"te", "back\\slash", "ünï😀"]],
  ["^\\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\\d|3[01])$", ["2024-02-29", "2024-13-01", "2024-00-10", "2024-12-31", "2024-12-32", "99-01-01"]],
  ["^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$", ["123e4567-e89b-12d3-a456-426614174000", "123e4567-e89b-12d3-a456-42661417400", "123e4567e89b12d3a456426614174000"]],
  ["^[\\w.+-]+@[\\w-]+(\\.[\\w-]+)*\\.[a-zA-Z]{2,}$", ["john.doe+x@mail.example.com", "a@b.co", "a@b.c", "@b.com", "a@b..com"]],
  ["[\\w.-]+@[\\w-]+\\.[a-z]{2,}", ["mail me at a.b@c-d.org today", "a@b.c", "x@y.zz", "@@", "a@b.C1"]],
  ["^😀+$", ["😀", "😀😀😀", "", "😀a", "\ud83d", "\ud83d\ude00\ude00"]],
  ["^.{2,4}$", ["ab", "😀😀", "a", "abcde", "a\nb", "a\u2028", "\ud83d\ude00x", "\ud800\udc00\ud800"]],
  ["^[😀-😎]{1,3}x$", ["😀x", "😎😁x", "😏x", "x", "😀😀😀😀x"]],
  ["\\u{1F600}|\\uD83D\\uDE01", ["a😀", "😁", "\ud83d", "\ude01"]],
  ["^[\\uD800-\\uDFFF]$", ["\ud800", "\udfff", "😀", "a"]],
  ["^$", ["", "a", "\n"]],
  ["", ["", "anything"]],
  ["a*", ["", "bbb"]],
  ["^a|b$", ["a", "ax", "xb", "b", "ba", "xa", ""]],
  ["^", ["", "x"]],
  ["$", ["", "x"]],
  ["^^a$$", ["a", "aa", ""]],
  ["x|^$", ["", "x", "axa", "y"]],
  ["^(?:abc)+$", ["abc", "abcabc", "ab", "abcab"]],
  ["^(?<year>\\d{4})-(?<mm>\\d\\d)$", ["2024-01", "202-01", "2024-1"]],
  ["a{2,}b", ["aab", "ab", "xaaaab", "aa"]],
  ["^a{0,3}?b+?$", ["b", "aaab", "aaaab", "abbb", "a"]],
  ["^[^a]$", ["b", "a", "😀", "\n", ""]],
  ["^[^]$", ["b", "\n", "😀", "", "ab"]],
  ["^[]$|q", ["", "q", "a"]],
  ["^\\s*\\S+\\s*$", ["  word  ", "two words", "\u2028x\ufeff", "", "\u00a0"]],
  ["^\\W\\D$", ["!x", "a!", "!1", "é😀"]],
  ["^[\\w-]+$", ["a-b_c9", "a b", "-", ""]],
  ["^[a-c-e]+$", ["abc-e", "d", "-"]],
  ["^[\\x41-\\x43\\u0061]+$", ["ABCa", "D", "b"]],
  ["^\\t\\n\\r\\f\\v\\0$", ["\t\n\r\f\v\0", "\t\n\r\f\v"]],
  ["^\\.\\*\\+\\?\\(\\)\\[\\]\\{\\}\\|\\/\\\\\\^\\$$", [".*+?()[]{}|/\\^$", "a*+?()[]{}|/\\^$"]],
  ["^[\\b][\\-\\]]$", ["\b-", "\b]", "b-"]],
  ["^-?\\d+(\\.\\d+)?([eE][+-]?\\d+)?$", ["-12.5e+10", "1", "1.", ".5", "1e5", "--1"]],
  ["^(a|ab)(c|bcd)(d*)$", ["abcd", "abcdd", "ac", "abbcd"]],
  ["^https?://[^\\s/$.?#].[^\\s]*$", ["http://example.com/x?y", "https://a", "ftp://x", "http:// x"]],
  ["^#[0-9a-fA-F]{6}$|^#[0-9a-fA-F]{3}$", ["#fff", "#A0b1C2", "#ffff", "fff"]],
  ["^[A-Z]{2}\\d{2}[A-Z0-9]{1,30}$", ["DE89370400440532013000", "D89", "DE89"]],
  ["(?:a|b|)c", ["c", "xbc", "d"]],
  ["^((a)|(b(c)?))+?$", ["abcab", "bcc", ""]],
  ["^.*\\.(json|ya?ml)$", ["a.json", "b.yml", "c.yaml", "d.yamll", ".json"]],
];

describe("compilePattern agrees with RegExp (u flag)", () => {
  for (const [index, [pattern, samples]] of CASES.entries()) {
    it(`/${pattern}/`, () => {
      const strings = [...samples, ...fuzzStrings(1000 + index, alphabetOf(pattern), samples, 3000)];
      expect(disagreements(pattern, strings)).toEqual([]);
      expect(disagreements(pattern, strings, { search: false })).toEqual([]);
    });
  }

  it("matches RegExp for \\d \\D \\w \\W \\s \\S . [^x] on every BMP code point and some astral ones", () => {
    const codes = Array.from({ length: 0x10000 }, (_, i) => i);
    codes.push(0x10000, 0x1f600, 0xe0001, 0x10ffff);
    const strings = codes.map((c) => String.fromCodePoint(c));
    for (const pattern of ["^\\d$", "^\\D$", "^\\w$", "^\\W$", "^\\s$", "^\\S$", "^.$", "^[^x]$", "^[\\s\\d]$", "^[^\\s\\w]$"]) {
      expect(disagreements(pattern, strings)).toEqual([]);
    }
  });

  it("gives minimal DFAs", () => {
    expect(compilePattern("^[a-z]+$").stateCount).toBe(2);
    expect(compilePattern("abc").stateCount).toBe(4);
    expect(compilePattern("^$").stateCount).toBe(1);
    expect(compilePattern("").stateCount).toBe(1);
    expect(compilePattern("^(ab|cb)$").stateCount).toBe(3);
  });

  it("handles counted repetitions up to 1000 quickly", () => {
    const text = "x".repeat(1000);
    expect(run(compilePattern("^.{0,1000}$"), text)).toBe(true);
    expect(run(compilePattern("^.{0,1000}$"), text + "x")).toBe(false);
    expect(run(compilePattern("^[a-z]{1000}$"), text)).toBe(true);
    expect(run(compilePattern("\\d{1000}"), "a" + "1".repeat(1000))).toBe(true);
    expect(run(compilePattern("\\d{1000}"), "a" + "1".repeat(999))).toBe(false);
  });
});

/** Lookaheads, resolved into intersections: the same strings as RegExp, at any position they may stand. */
const LOOKAHEAD_CASES: ReadonlyArray<readonly [pattern: string, samples: readonly string[]]> = [
  ["^(?=.*[0-9])[a-zA-Z0-9]{8,16}$", ["password1", "password", "12345678", "pass1", "p".repeat(15) + "1", "p".repeat(16) + "1"]],
  ["^(?!\\.)(?!.*\\.\\.)([A-Za-z0-9_'+\\-\\.]*)[A-Za-z0-9_+-]@([A-Za-z0-9][A-Za-z0-9\\-]*\\.)+[A-Za-z]{2,}$", ["kim@example.com", ".kim@example.com", "k..m@example.com", "k.m@example.com", "k@e.c", "o'neil@mail.co.uk"]],
  ["^P(?!$)((\\d+Y)?(\\d+M)?(\\d+D)?(T(?=\\d)(\\d+H)?(\\d+M)?(\\d+S)?)?|(\\d+W)?)$", ["P1Y2M3DT4H5M6S", "P", "PT", "PT1H", "P1W", "P1Y1W", "PT1S", "P1DT"]],
  ["^P(?:(\\d+W)|(?!.*W)(?=\\d|T\\d)(\\d+Y)?(\\d+M)?(\\d+D)?(T(?=\\d)(\\d+H)?(\\d+M)?(\\d+([.,]\\d+)?S)?)?)$", ["P3W", "P1Y", "PT1.5S", "P", "PT", "P1YT", "P1W2D"]],
  ["a(?=b)", ["ab", "a", "xaby", "ba"]],
  ["(?!a)", ["", "a", "b", "ab"]],
  ["^(?!a)", ["", "a", "b", "ba"]],
  ["^(?=a|bc$)..", ["ab", "bc", "bcd", "ba"]],
  ["^(?:x(?=y)|z)y$", ["xy", "zy", "xz", "y"]],
  ["^a(?=(?!b)c)..$", ["acd", "abd", "ac"]],
  ["^(?:a(?=b))?b$", ["ab", "b", "a"]],
  ["x(?!y$)", ["x", "xy", "xyz", "axyb"]],
];

describe("lookaheads agree with RegExp (u flag)", () => {
  for (const [index, [pattern, samples]] of LOOKAHEAD_CASES.entries()) {
    it(`/${pattern}/`, () => {
      const strings = [...samples, ...fuzzStrings(3000 + index, alphabetOf(pattern), samples, 2000)];
      expect(disagreements(pattern, strings)).toEqual([]);
      expect(disagreements(pattern, strings, { search: false })).toEqual([]);
    });
  }

  it("inside random patterns, wherever they may stand", () => {
    const random = seededRandom(11);
    const strings = fuzzStrings(98, Array.from("abc1 \n"), [], 300);
    let refused = 0;
    for (let i = 0; i < 200; i++) {
      const look = () => `(?${pick(random, ["=", "!"])}${randomPattern(random, 1)}${random() < 0.3 ? "$" : ""})`;
      const parts = [randomPattern(random, 1), look(), randomPattern(random, 1)];
      if (random() < 0.5) parts.splice(0, 0, look());
      const pattern = (random() < 0.5 ? "^" : "") + parts.join("") + (random() < 0.3 ? "$" : "");
      try {
        expect(disagreements(pattern, strings), pattern).toEqual([]);
      } catch (error) {
        if (!(error instanceof UnsupportedPatternError && error.feature.startsWith("more than"))) throw error;
        refused++;
      }
    }
    expect(refused).toBeLessThan(10);
  });
});

describe("DFA operations", () => {
  const letters = (pattern: string) => compilePattern(pattern, { search: false });
  const words = ["", "a", "b", "ab", "ba", "abc", "aab", "abab", "abcabc", "ca", "é", "😀a"];

  it("intersect accepts what both accept, and stops at its state limit", () => {
    const both = intersect(letters("(ab|a)*"), letters("a.*b|"), 100, "test");
    checkInvariants(both);
    for (const word of words) expect(dfaAccepts(both, word), word).toBe(/^(ab|a)*$/u.test(word) && /^(a.*b|)$/u.test(word));
    expect(() => intersect(letters("[ab]*a[ab]{6}"), letters("[ab]*b[ab]{6}"), 50, "big")).toThrowError(UnsupportedPatternError);
  });

  it("complement accepts the rest of the alphabet's strings, and nothing outside it", () => {
    const alphabet = normalise([[0x61, 0x63]]);
    const rest = complement(letters("ab*"), alphabet);
    checkInvariants(rest);
    for (const word of words) expect(dfaAccepts(rest, word), word).toBe(/^[abc]*$/u.test(word) && !/^ab*$/u.test(word));
    expect(dfaAccepts(complement(letters("[^\\s\\S]"), complementRanges(normalise([[0x22, 0x22]]))), 'x"')).toBe(false);
    expect(dfaAccepts(complement(letters(".*"), ANY), "\n")).toBe(true);
  });

  it("stringsDfa accepts exactly its strings; restrict drops code points and the states that die", () => {
    const names = stringsDfa(["ab", "a", "😀a", ""]);
    for (const word of words) expect(dfaAccepts(names, word), word).toBe(["ab", "a", "😀a", ""].includes(word));
    const noB = restrict(letters("a+b?|c"), normalise([[0x62, 0x62]]));
    for (const word of words) expect(dfaAccepts(noB, word), word).toBe(/^(a+|c)$/u.test(word));
    expect(restrict(letters("b"), normalise([[0x62, 0x62]])).accepting(0)).toBe(false);
  });

  it("ignoreCase folds ASCII letters only", () => {
    const dfa = compilePattern("^[a-c]x[^y]$", { ignoreCase: true });
    for (const word of ["axz", "BXz", "cXY", "dxz", "ÀXz", "axy"]) expect(dfaAccepts(dfa, word), word).toBe(/^[a-c]x[^y]$/i.test(word));
  });
});

/** A random pattern over a small alphabet (with the grammar's constructs, anchors only at the top level). */
function randomPattern(random: () => number, depth: number): string {
  const atoms = ["a", "b", "c", ".", "[ab]", "[^a]", "[a-c]", "\\d", "\\w", "\\s", "😀", "[^😀b]", "\\u0062"];
  const quantifiers = ["", "", "", "", "*", "+", "?", "{2}", "{0,2}", "{1,}", "*?", "{1,3}"];
  const sequence = (): string => {
    let out = "";
    for (let n = 1 + Math.floor(random() * 3); n > 0; n--) {
      let atom = pick(random, atoms);
      if (depth > 0 && random() < 0.3) {
        const options = Array.from({ length: 1 + Math.floor(random() * 3) }, () => (random() < 0.1 ? "" : randomPattern(random, depth - 1)));
        atom = `${pick(random, ["(", "(?:"])}${options.join("|")})`;
      }
      out += atom + pick(random, quantifiers);
    }
    return out;
  };
  return sequence();
}

describe("random patterns agree with RegExp", () => {
  it("on random strings, with search semantics and without", () => {
    const random = seededRandom(7);
    const alphabet = Array.from("abc1 \n😀");
    const strings = fuzzStrings(99, alphabet, [], 300);
    let tooBig = 0;
    for (let i = 0; i < 400; i++) {
      const alternatives = Array.from({ length: 1 + Math.floor(random() * 3) }, () => {
        return (random() < 0.3 ? "^" : "") + randomPattern(random, 1) + (random() < 0.3 ? "$" : "");
      });
      const pattern = alternatives.join("|");
      try {
        expect(disagreements(pattern, strings), pattern).toEqual([]);
        expect(disagreements(pattern, strings, { search: false }), pattern).toEqual([]);
      } catch (error) {
        // Some random patterns have genuinely huge DFAs (counted repetitions under search semantics).
        if (!(error instanceof UnsupportedPatternError && error.feature.startsWith("more than"))) throw error;
        tooBig++;
      }
    }
    expect(tooBig).toBeLessThan(20);
  });
});

describe("excluded code points", () => {
  const excluded: [number, number][] = [[0x22, 0x22], [0x5c, 0x5c], [0x00, 0x1f]];
  const isExcluded = (text: string): boolean => [...text].some((c) => excluded.some(([lo, hi]) => c.codePointAt(0)! >= lo && c.codePointAt(0)! <= hi));

  it("are never accepted, and otherwise RegExp still decides", () => {
    for (const [index, [pattern, samples]] of CASES.entries()) {
      const dfa = compilePattern(pattern, { excluded });
      checkInvariants(dfa);
      for (let s = 0; s < dfa.stateCount; s++) {
        for (const [lo, hi] of dfa.transitions(s)) expect(excluded.some(([a, b]) => lo <= b && a <= hi), pattern).toBe(false);
      }
      const regex = reference(pattern, true);
      const strings = [...samples, ...fuzzStrings(5000 + index, alphabetOf(pattern), samples, 1000)];
      expect(strings.filter((text) => run(dfa, text) !== (!isExcluded(text) && regex.test(text))), pattern).toEqual([]);
    }
  });

  it("leave a dead start as one non-accepting state", () => {
    const dfa = compilePattern('^"$', { excluded });
    expect(dfa.stateCount).toBe(1);
    expect(dfa.accepting(0)).toBe(false);
    expect(dfa.transitions(0)).toEqual([]);
    expect(compilePattern('^a"b$|^c$', { excluded }).stateCount).toBe(2);
  });
});

describe("trimDeadStates", () => {
  /** A CharDfa from a plain table, for feeding trimDeadStates states that minimisation would already drop. */
  function table(accepting: boolean[], transitions: [number, number, number][][]): CharDfa {
    return {
      stateCount: accepting.length,
      accepting: (s) => accepting[s],
      next: (s, c) => transitions[s]?.find(([lo, hi]) => lo <= c && c <= hi)?.[2] ?? -1,
      transitions: (s) => transitions[s],
    };
  }

  it("drops states that cannot reach acceptance and the transitions into them", () => {
    // 0 -a-> 1 (dead loop), 0 -b-> 2 -c-> 3 (accepting), 3 -d-> 4 (dead end)
    const a = 0x61;
    const trimmed = trimDeadStates(table([false, false, false, true, false], [[[a, a, 1], [a + 1, a + 1, 2]], [[a, a, 1]], [[a + 2, a + 2, 3]], [[a + 3, a + 3, 4]], []]));
    expect(trimmed.stateCount).toBe(3);
    expect(trimmed.transitions(0)).toEqual([[a + 1, a + 1, 1]]);
    expect(trimmed.transitions(1)).toEqual([[a + 2, a + 2, 2]]);
    expect(trimmed.transitions(2)).toEqual([]);
    expect(trimmed.accepting(2)).toBe(true);
    expect(trimmed.next(0, a)).toBe(-1);
    expect(trimmed.next(-1, a)).toBe(-1);
    checkInvariants(trimmed);
  });

  it("returns one non-accepting state when the start is dead", () => {
    const trimmed = trimDeadStates(table([false, false], [[[0, 10, 1]], [[0, 10, 0]]]));
    expect(trimmed.stateCount).toBe(1);
    expect(trimmed.accepting(0)).toBe(false);
    expect(trimmed.transitions(0)).toEqual([]);
  });
});

describe("errors", () => {
  function featureOf(pattern: string, options?: PatternOptions): string {
    try {
      compilePattern(pattern, options);
    } catch (error) {
      expect(error).toBeInstanceOf(UnsupportedPatternError);
      expect((error as UnsupportedPatternError).pattern).toBe(pattern);
      return (error as UnsupportedPatternError).feature;
    }
    throw new Error(`no error for ${pattern}`);
  }

  it("names each unsupported feature", () => {
    const cases: [string, string][] = [
      ["(a)\\1", "backreference \\1"],
      ["(?<x>a)\\k<x>", "backreference \\k<name>"],
      ["(?:(?=a)b)*", "lookahead inside a repetition"],
      ["(a(?!b)){2}", "lookahead inside a repetition"],
      ["(?=a$b)", "anchor $"],
      ["(?<=a)b", "lookbehind (?<="],
      ["(?<!a)b", "lookbehind (?<!"],
      ["\\bword", "word boundary \\b"],
      ["a\\Bb", "word boundary \\B"],
      ["^\\p{L}", "unicode property \\p"],
      ["\\P{Lu}", "unicode property \\P"],
      ["(?i)abc", "inline flags (?i"],
      ["(?i:abc)", "inline flags (?i"],
      ["\\cJ", "control escape \\c"],
      ["a^b", "anchor ^"],
      ["(^a)", "anchor ^"],
      ["a$b", "anchor $"],
      ["(a$)", "anchor $"],
      ["a{1001}", "repetition count over 1000"],
      ["a{2,5000}", "repetition count over 1000"],
      ["[ab]*a[ab]{14}", "more than 5000 DFA states"],
      ["(a{1000}){1000}", "pattern expands to more than 100000 NFA states"],
    ];
    for (const [pattern, feature] of cases) expect(featureOf(pattern).startsWith(feature), `${pattern}: ${featureOf(pattern)}`).toBe(true);
    expect(featureOf("^abcdef$", { maxStates: 3 })).toBe("more than 3 DFA states");
  });

  it("reports malformed patterns as syntax errors (which RegExp rejects too)", () => {
    for (const pattern of ["(a", "a)", "[a-", "[a", "a{2,1}", "*a", "a**", "+", "?", "a{2}{3}", "{", "a{", "}", "]", "[z-a]", "[\\d-z]", "\\", "\\q", "\\x4", "\\u12", "\\u{110000}", "(?<1a>x)", "(?)", "\\00", "^*", "a|*", "(?=a)*", "(?!a){2}"]) {
      expect(featureOf(pattern), pattern).toMatch(/^syntax: /);
      expect(() => new RegExp(pattern, "u"), pattern).toThrow(SyntaxError);
    }
  });
});
