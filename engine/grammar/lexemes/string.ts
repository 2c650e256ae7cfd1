// A JSON string (quotes included) under a schema's string keywords: minLength and maxLength in code points, a
// pattern or format as a DFA over code points, and for object keys a list of names it must not equal. Content bytes are
// checked as UTF-8 as they arrive; a byte is allowed only when the string can still be finished within the bounds.
import type { CharDfa } from "../regex/index.js";
import { restrict } from "../regex/dfa-ops.js";
import { type Lexeme, StateTable } from "./lexeme.js";
import { utf8Lead } from "./utf8.js";

/** What a generated string must satisfy. */
export interface StringSpec {
  minLength?: number;
  maxLength?: number;
  /**
   * The content must be accepted by this DFA (a pattern or format). Strings under a DFA are written without escape
   * sequences: its transitions on code points that cannot be written so ({@link UNESCAPED_EXCLUDED}) are dropped.
   */
  dfa?: CharDfa;
  /** Contents the string must not equal (declared property names, for the keys of additional properties). */
  exclude?: readonly string[];
}

/**
 * Code points a string under a DFA never holds: `"`, `\` and control characters would need escape sequences, and
 * surrogates (U+D800-U+DFFF) have no UTF-8 encoding at all, so a pattern that needs one matches nothing here.
 */
export const UNESCAPED_EXCLUDED: ReadonlyArray<readonly [number, number]> = [[0x00, 0x1f], [0x22, 0x22], [0x5c, 0x5c], [0xd800, 0xdfff]];

const QUOTE = 0x22;
const BACKSLASH = 0x5c;

/** Where in the string a state is. */
const enum Phase {
  BeforeOpen,
  Content,
  Escape,
  UnicodeEscape,
  MultiByte,
  Closed,
}

interface StringState {
  phase: Phase;
  /** Code points so far, capped at the point past which the count no longer matters. */
  count: number;
  /** DFA state of the content (0 without a DFA). */
  dfa: number;
  /** Unicode escape: hex digits read; multi-byte character: continuation bytes still expected. */
  pending: number;
  /** The code point being assembled (escape or multi-byte character). */
  partial: number;
  /** Smallest and largest value the next continuation byte may take (UTF-8 rules for E0, ED, F0, F4). */
  nextLow: number;
  nextHigh: number;
  /**
   * Multi-byte character under a DFA: the DFA state every character it can still become leads to, when that is one
   * state (then `partial` is dropped, so its prefixes do not multiply the states); -1 otherwise.
   */
  target: number;
  /** The content so far while it is a prefix of an excluded name; null once it is not. */
  excludedPrefix: string | null;
}

const ESCAPED: Record<number, number> = { 0x22: 0x22, 0x5c: 0x5c, 0x2f: 0x2f, 0x62: 0x08, 0x66: 0x0c, 0x6e: 0x0a, 0x72: 0x0d, 0x74: 0x09 };

/** Matches one JSON string satisfying a {@link StringSpec}. */
export class StringLexeme implements Lexeme {
  readonly start: number;
  private readonly table = new StateTable<StringState>();
  private readonly stepCache = new Map<number, number>();
  private readonly minLength: number;
  private readonly maxLength: number;
  /** Counts at and above this are equivalent. */
  private readonly countCap: number;
  /** reach[s][L]: from DFA state s, some path of exactly L code points ends accepting (L up to countCap). */
  private readonly reach?: Uint8Array[];
  /** The spec's DFA without what cannot be written unescaped: liveness is then exact, byte for byte. */
  private readonly dfa?: CharDfa;

  constructor(readonly spec: StringSpec) {
    this.minLength = spec.minLength ?? 0;
    this.maxLength = spec.maxLength ?? Infinity;
    const dfa = spec.dfa && restrict(spec.dfa, UNESCAPED_EXCLUDED);
    this.dfa = dfa;
    const finiteMax = Number.isFinite(this.maxLength);
    // Past minLength (and with no maximum) only a DFA's reachable lengths matter, and without length bounds none.
    this.countCap = finiteMax ? this.maxLength : this.minLength + (dfa && this.minLength > 0 ? dfa.stateCount : 0);
    // Without length bounds every state of the (trimmed) DFA can still finish: no table needed.
    if (dfa && (this.minLength > 0 || finiteMax)) this.reach = reachTable(dfa, this.countCap);
    this.start = this.intern({ phase: Phase.BeforeOpen, count: 0, dfa: 0, pending: 0, partial: 0, nextLow: 0, nextHigh: 0, target: -1, excludedPrefix: spec.exclude?.length ? "" : null });
  }

  get label(): string {
    const { minLength, maxLength } = this;
    return `string{${minLength},${Number.isFinite(maxLength) ? maxLength : ""}}${this.dfa ? "/pattern" : ""}${this.spec.exclude?.length ? ` not ${this.spec.exclude.join("|")}` : ""}`;
  }

  /**
   * Whether any string satisfies the length bounds and DFA (the schema compiler rejects those that none does).
   * Excluded names are not considered: they come only with unbounded keys, which always have other choices.
   */
  satisfiable(): boolean {
    return this.live(0, 0);
  }

  step(state: number, byte: number): number {
    const key = state * 256 + byte;
    let next = this.stepCache.get(key);
    if (next === undefined) {
      const s = this.table.get(state);
      const result = this.next(s, byte);
      next = result ? this.intern(result) : -1;
      this.stepCache.set(key, next);
    }
    return next;
  }

  accepts(state: number): boolean {
    return this.table.get(state).phase === Phase.Closed;
  }

  canContinue(state: number): boolean {
    return this.table.get(state).phase !== Phase.Closed;
  }

  plainRoom(state: number): number | undefined {
    const s = this.table.get(state);
    if (s.phase !== Phase.Content || this.dfa || s.excludedPrefix !== null) return undefined;
    return this.maxLength - s.count;
  }

  private intern(s: StringState): number {
    // The partial code point matters only to a DFA or to excluded names; elsewhere dropping it keeps a multi-byte
    // character from multiplying the states (and their token masks) by every prefix it can have.
    if (s.phase === Phase.MultiByte && !this.dfa && s.excludedPrefix === null && s.partial !== 0) s = { ...s, partial: 0 };
    // The excluded prefix is marked apart from "none": a bare NUL for none was also the prefix of a name starting with
    // U+0000 (written \u0000), so the two states were one and whichever came first decided whether the string could
    // close (an excluded "\u0000" closable, or "names" not closable under exclude ["name", "\u0000"]).
    const key = `${s.phase},${s.count},${s.dfa},${s.pending},${s.partial},${s.nextLow},${s.nextHigh},${s.target},${s.excludedPrefix === null ? "-" : `+${s.excludedPrefix}`}`;
    return this.table.intern(key, () => s);
  }

  private next(s: StringState, byte: number): StringState | undefined {
    switch (s.phase) {
      case Phase.BeforeOpen:
        return byte === QUOTE ? { ...s, phase: Phase.Content } : undefined;
      case Phase.Content:
        return this.content(s, byte);
      case Phase.Escape: {
        if (byte === 0x75) return { ...s, phase: Phase.UnicodeEscape, pending: 0, partial: 0 };
        const char = ESCAPED[byte];
        return char === undefined ? undefined : this.addChar(s, char);
      }
      case Phase.UnicodeEscape: {
        const digit = hexValue(byte);
        if (digit < 0) return undefined;
        const partial = s.partial * 16 + digit;
        // No surrogate halves: \uD800-\uDFFF would need a pair, which is not worth the states.
        if (s.pending === 1 && partial >= 0xd8 && partial <= 0xdf) return undefined;
        if (s.pending < 3) return { ...s, pending: s.pending + 1, partial };
        return this.addChar({ ...s, pending: 0, partial: 0 }, partial);
      }
      case Phase.MultiByte: {
        if (byte < s.nextLow || byte > s.nextHigh) return undefined;
        if (s.target >= 0) {
          // Every character this can become leads to `target`, which was live: only the byte count is left.
          if (s.pending > 1) return { ...s, pending: s.pending - 1, nextLow: 0x80, nextHigh: 0xbf };
          return this.advance({ ...s, pending: 0, nextLow: 0, nextHigh: 0, target: -1 }, s.target);
        }
        const partial = (s.partial << 6) | (byte & 0x3f);
        if (s.pending > 1) {
          const bits = 6 * (s.pending - 1);
          const next = this.multiByte(s, s.pending - 1, partial, 0x80, 0xbf, partial << bits, (partial << bits) | ((1 << bits) - 1));
          return next;
        }
        return this.addChar({ ...s, pending: 0, partial: 0, nextLow: 0, nextHigh: 0 }, partial);
      }
      case Phase.Closed:
        return undefined;
    }
  }

  private content(s: StringState, byte: number): StringState | undefined {
    if (byte === QUOTE) return this.canClose(s) ? { ...s, phase: Phase.Closed } : undefined;
    // Escapes only without a pattern (its DFA reads the characters as written); one escape is one more character.
    if (byte === BACKSLASH) return !this.dfa && s.count < this.maxLength ? { ...s, phase: Phase.Escape } : undefined;
    if (byte < 0x20) return undefined;
    if (byte < 0x80) return this.addChar(s, byte);
    // A UTF-8 lead byte: its length, the code points it can begin, and the range its first continuation byte may take.
    const lead = utf8Lead(byte);
    if (!lead) return undefined;
    const { length, low, high } = lead;
    const partial = byte & (0xff >> (length + 1));
    const bits = 6 * (length - 1);
    const first = Math.max(partial << bits, length === 2 ? 0x80 : length === 3 ? 0x800 : 0x10000);
    const last = Math.min((partial << bits) | ((1 << bits) - 1), 0x10ffff);
    return this.multiByte({ ...s, phase: Phase.MultiByte }, length - 1, partial, low, high, first, last);
  }

  /**
   * A multi-byte character with `pending` continuation bytes to come that can still become [first, last]: undefined
   * when none of those can be added; with a DFA that sends them all to one state, that state instead of the bits.
   */
  private multiByte(s: StringState, pending: number, partial: number, nextLow: number, nextHigh: number, first: number, last: number): StringState | undefined {
    const next = { ...s, pending, partial, nextLow, nextHigh, target: -1 };
    if (!this.anyLive(next, first, last)) return undefined;
    const dfa = this.dfa;
    if (dfa && s.excludedPrefix === null) {
      const range = dfa.transitions(s.dfa).find(([low, high]) => low <= first && first <= high);
      if (range && range[1] >= last) return { ...next, partial: 0, target: range[2] };
    }
    return next;
  }

  /** The state after one more code point of content, if the string can still be finished from there. */
  private addChar(s: StringState, char: number): StringState | undefined {
    let dfa = 0;
    if (this.dfa) {
      dfa = this.dfa.next(s.dfa, char);
      if (dfa < 0) return undefined;
    }
    return this.advance(s, dfa, char);
  }

  /** The state after one more code point (`char`, needed only while tracking excluded names) taking the DFA to `dfa`. */
  private advance(s: StringState, dfa: number, char?: number): StringState | undefined {
    if (s.count + 1 > this.maxLength) return undefined;
    const count = Math.min(s.count + 1, this.countCap);
    if (!this.live(dfa, count)) return undefined;
    let excludedPrefix = s.excludedPrefix;
    if (excludedPrefix !== null) {
      const extended = excludedPrefix + String.fromCodePoint(char!);
      excludedPrefix = this.spec.exclude!.some((name) => name.startsWith(extended)) ? extended : null;
    }
    return { ...s, phase: Phase.Content, count, dfa, excludedPrefix };
  }

  /** Some code point in [first, last] can be added from `s` (for a multi-byte character still being read). */
  private anyLive(s: StringState, first: number, last: number): boolean {
    if (s.count + 1 > this.maxLength) return false;
    const count = Math.min(s.count + 1, this.countCap);
    const dfa = this.dfa;
    if (!dfa) return this.live(0, count);
    for (const [low, high, target] of dfa.transitions(s.dfa)) {
      if (high >= first && low <= last && this.live(target, count)) return true;
    }
    return false;
  }

  /** The content may end here: long enough, accepted by the DFA, not an excluded name. */
  private canClose(s: StringState): boolean {
    if (s.count < this.minLength || s.count > this.maxLength) return false;
    if (this.dfa && !this.dfa.accepting(s.dfa)) return false;
    return s.excludedPrefix === null || !this.spec.exclude!.includes(s.excludedPrefix);
  }

  /** From DFA state `dfa` with `count` code points written, the string can be finished within the bounds. */
  private live(dfa: number, count: number): boolean {
    if (count > this.maxLength) return false;
    const lower = Math.max(0, this.minLength - count);
    const upper = Number.isFinite(this.maxLength) ? this.maxLength - count : this.countCap;
    // Without a pattern any length from minLength to maxLength will do, if there is one (minLength above maxLength
    // made satisfiable() say yes, and strings dead-ended at maxLength unable to close).
    if (!this.dfa) return count + lower <= this.maxLength;
    // A trimmed DFA: every state can reach acceptance, but for the lone dead start of an empty language.
    if (!this.reach) return this.dfa.accepting(dfa) || this.dfa.transitions(dfa).length > 0;
    const row = this.reach[dfa]!;
    for (let length = lower; length <= Math.min(upper, this.countCap); length++) if (row[length]) return true;
    return false;
  }
}

/** reach[s][L] = 1 when some path of exactly L code points leads from s to an accepting state. */
function reachTable(dfa: CharDfa, cap: number): Uint8Array[] {
  const rows = Array.from({ length: dfa.stateCount }, () => new Uint8Array(cap + 1));
  for (let s = 0; s < dfa.stateCount; s++) rows[s]![0] = dfa.accepting(s) ? 1 : 0;
  for (let length = 1; length <= cap; length++) {
    for (let s = 0; s < dfa.stateCount; s++) {
      for (const [, , target] of dfa.transitions(s)) {
        if (rows[target]![length - 1]) {
          rows[s]![length] = 1;
          break;
        }
      }
    }
  }
  return rows;
}

function hexValue(byte: number): number {
  if (byte >= 0x30 && byte <= 0x39) return byte - 0x30;
  if (byte >= 0x61 && byte <= 0x66) return byte - 0x61 + 10;
  if (byte >= 0x41 && byte <= 0x46) return byte - 0x41 + 10;
  return -1;
}
