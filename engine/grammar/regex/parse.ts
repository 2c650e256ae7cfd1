// Parses an ECMAScript regular expression (u-flag syntax, the subset documented in index.ts) into a small AST
// of code-point sets, sequences, alternations and repetitions; anchors are kept per top-level alternative.

import type { CharDfa } from "./dfa.js";
import { UnsupportedPatternError } from "./error.js";
import { complement, DIGIT, DOT, foldAsciiCase, normalise, type Ranges, SPACE, WORD } from "./ranges.js";

/** A regular expression over code points; captures, laziness and group names are gone (same language). */
export type RegexNode =
  | { readonly kind: "set"; readonly ranges: Ranges }
  | { readonly kind: "seq"; readonly items: readonly RegexNode[] }
  | { readonly kind: "alt"; readonly options: readonly RegexNode[] }
  /** `max` is Infinity for an unbounded repetition. */
  | { readonly kind: "repeat"; readonly node: RegexNode; readonly min: number; readonly max: number }
  /** `(?=...)` or `(?!...)`: what follows must (or must not) start with a match of one of `alternatives`. */
  | { readonly kind: "look"; readonly negate: boolean; readonly alternatives: readonly LookAlternative[] }
  /** A DFA built already (a lookahead resolved into an intersection); never produced by the parser. */
  | { readonly kind: "dfa"; readonly dfa: CharDfa };

/** One alternative of a lookahead; with `anchoredEnd` (`$` at its end) it must match up to the end of the string. */
export interface LookAlternative {
  readonly node: RegexNode;
  readonly anchoredEnd: boolean;
}

/** One top-level alternative with its anchors (^ and $ are only allowed there). */
export interface TopAlternative {
  readonly node: RegexNode;
  readonly anchoredStart: boolean;
  readonly anchoredEnd: boolean;
}

/** Largest repetition count accepted: counts expand into copies of the automaton. */
export const MAX_REPEAT = 1000;

/**
 * Parses `pattern`; throws UnsupportedPatternError for unsupported features and for syntax errors. With `ignoreCase`
 * every character and class also holds the other case of its ASCII letters (folded before a class is negated, as the
 * i flag does: `[^y]` matches neither y nor Y).
 */
export function parsePattern(pattern: string, ignoreCase = false): TopAlternative[] {
  return new Parser(pattern, ignoreCase).parseTop();
}

/** Escapes with one meaning inside and outside classes: a class, or one code point. */
const SIMPLE_ESCAPES = new Map<string, number | Ranges>([
  ["d", DIGIT], ["D", complement(DIGIT)], ["w", WORD], ["W", complement(WORD)], ["s", SPACE], ["S", complement(SPACE)],
  ["t", 0x09], ["n", 0x0a], ["v", 0x0b], ["f", 0x0c], ["r", 0x0d],
]);
const IDENTIFIER = /^[\p{ID_Start}$_][\p{ID_Continue}$\u200c\u200d]*$/u;
const ASCII_PUNCTUATION = /^[!-/:-@[-`{-~]$/;
const HEX = /^[0-9a-fA-F]+$/;

class Parser {
  /** The pattern split into code points (u-flag reading: an astral character is one element). */
  private readonly chars: string[];
  private pos = 0;

  constructor(private readonly pattern: string, private readonly ignoreCase: boolean) {
    this.chars = Array.from(pattern);
  }

  /** The set as the pattern reads it: with the other case of its ASCII letters under ignoreCase. */
  private cased(ranges: Ranges): Ranges {
    return this.ignoreCase ? foldAsciiCase(ranges) : ranges;
  }

  parseTop(): TopAlternative[] {
    const alternatives: TopAlternative[] = [];
    for (;;) {
      let anchoredStart = false;
      while (this.eat("^")) anchoredStart = true;
      const { node, anchoredEnd } = this.parseSequence("top");
      alternatives.push({ node, anchoredStart, anchoredEnd });
      if (this.pos === this.chars.length) return alternatives;
      // A top-level sequence stops only at |, ) or the end.
      if (!this.eat("|")) this.syntax("unmatched )");
    }
  }

  private parseDisjunction(): RegexNode {
    const options = [this.parseSequence("group").node];
    while (this.eat("|")) options.push(this.parseSequence("group").node);
    return options.length === 1 ? options[0] : { kind: "alt", options };
  }

  /** After "(?=" or "(?!": the lookahead's alternatives, each of which may end with $. */
  private parseLookahead(negate: boolean): RegexNode {
    const alternatives: LookAlternative[] = [this.parseSequence("lookahead")];
    while (this.eat("|")) alternatives.push(this.parseSequence("lookahead"));
    if (!this.eat(")")) this.syntax("missing )");
    return { kind: "look", negate, alternatives };
  }

  /** A sequence up to |, ) or the end; $ may end it at the top level and inside a lookahead only. */
  private parseSequence(where: "top" | "group" | "lookahead"): { node: RegexNode; anchoredEnd: boolean } {
    const items: RegexNode[] = [];
    let anchoredEnd = false;
    while (this.pos < this.chars.length && !this.is("|") && !this.is(")")) {
      if (this.is("^")) this.fail("anchor ^ not at the start of a top-level alternative");
      if (this.eat("$")) {
        while (this.eat("$")) continue; // $$ is $
        if (this.quantifierAhead()) this.syntax("nothing to repeat");
        const atEnd = this.pos === this.chars.length || this.is("|") || (where === "lookahead" && this.is(")"));
        if (where === "group" || !atEnd) this.fail("anchor $ not at the end of a top-level alternative or lookahead");
        anchoredEnd = true;
        break;
      }
      items.push(this.parseQuantified(this.parseAtom()));
    }
    return { node: items.length === 1 ? items[0] : { kind: "seq", items }, anchoredEnd };
  }

  private parseQuantified(atom: RegexNode): RegexNode {
    const quantifier = this.readQuantifier();
    if (quantifier === undefined) return atom;
    // With the u flag an assertion cannot be repeated.
    if (atom.kind === "look") this.syntax("nothing to repeat");
    this.eat("?"); // lazy: same language
    if (this.quantifierAhead()) this.syntax("nothing to repeat");
    if (quantifier.max === 1 && quantifier.min === 1) return atom;
    return { kind: "repeat", node: atom, ...quantifier };
  }

  /** Reads `* + ? {n} {n,} {n,m}` at the cursor, or returns undefined with the cursor unchanged. */
  private readQuantifier(): { min: number; max: number } | undefined {
    if (this.eat("*")) return { min: 0, max: Infinity };
    if (this.eat("+")) return { min: 1, max: Infinity };
    if (this.eat("?")) return { min: 0, max: 1 };
    if (!this.is("{")) return undefined;
    const start = this.pos++;
    const min = this.readDecimal();
    let max = min;
    if (min !== undefined && this.eat(",")) max = this.is("}") ? Infinity : this.readDecimal();
    if (min === undefined || max === undefined || !this.eat("}")) {
      this.pos = start; // not a quantifier: a lone {, which the u flag rejects
      return undefined;
    }
    if (max < min) this.syntax("numbers out of order in {} quantifier");
    if (min > MAX_REPEAT || (max !== Infinity && max > MAX_REPEAT)) this.fail(`repetition count over ${MAX_REPEAT}`);
    return { min, max };
  }

  private quantifierAhead(): boolean {
    const start = this.pos;
    const found = this.readQuantifier() !== undefined;
    this.pos = start;
    return found;
  }

  private readDecimal(): number | undefined {
    const start = this.pos;
    while (this.isDigit(this.chars[this.pos])) this.pos++;
    return this.pos === start ? undefined : Number(this.chars.slice(start, this.pos).join(""));
  }

  private parseAtom(): RegexNode {
    if (this.quantifierAhead()) this.syntax("nothing to repeat");
    const c = this.chars[this.pos++];
    switch (c) {
      case "(":
        return this.parseGroup();
      case "[":
        return { kind: "set", ranges: this.parseClass() };
      case ".":
        return { kind: "set", ranges: DOT };
      case "\\": {
        const escaped = this.parseEscape(false);
        return { kind: "set", ranges: this.cased(typeof escaped === "number" ? [[escaped, escaped]] : escaped) };
      }
      case "{":
      case "}":
      case "]":
        return this.syntax(`lone ${c}`);
      default: {
        const code = c.codePointAt(0)!;
        return { kind: "set", ranges: this.cased([[code, code]]) };
      }
    }
  }

  /** After "(": a plain, non-capturing or named group; assertions and modifiers are unsupported. */
  private parseGroup(): RegexNode {
    if (this.eat("?")) {
      if (this.eat("=")) return this.parseLookahead(false);
      if (this.eat("!")) return this.parseLookahead(true);
      if (this.eat("<")) {
        if (this.is("=") || this.is("!")) this.fail(`lookbehind (?<${this.chars[this.pos]}`);
        const end = this.chars.indexOf(">", this.pos);
        if (end < 0 || !IDENTIFIER.test(this.chars.slice(this.pos, end).join(""))) this.syntax("invalid group name");
        this.pos = end + 1;
      } else if (/^[a-z-]$/.test(this.chars[this.pos] ?? "")) {
        const start = this.pos;
        while (/^[a-z-]$/.test(this.chars[this.pos] ?? "")) this.pos++;
        this.fail(`inline flags (?${this.chars.slice(start, this.pos).join("")}`);
      } else if (!this.eat(":")) {
        this.syntax("invalid group");
      }
    }
    const node = this.parseDisjunction();
    if (!this.eat(")")) this.syntax("missing )");
    return node;
  }

  /** After "[": the class's code points (negation applied). */
  private parseClass(): Ranges {
    const negate = this.eat("^");
    const parts: (readonly [number, number])[] = [];
    for (;;) {
      if (this.pos === this.chars.length) this.syntax("missing ]");
      if (this.eat("]")) break;
      const from = this.classAtom();
      const next = this.chars[this.pos + 1];
      if (this.is("-") && next !== undefined && next !== "]") {
        this.pos++;
        const to = this.classAtom();
        if (typeof from !== "number" || typeof to !== "number") this.syntax("character class escape in a range");
        if (from > to) this.syntax("range out of order in character class");
        parts.push([from, to]);
      } else if (typeof from === "number") {
        parts.push([from, from]);
      } else {
        parts.push(...from);
      }
    }
    const set = this.cased(normalise(parts));
    return negate ? complement(set) : set;
  }

  private classAtom(): number | Ranges {
    const c = this.chars[this.pos++];
    return c === "\\" ? this.parseEscape(true) : c.codePointAt(0)!;
  }

  /** After "\": one code point, or a class for \d \D \w \W \s \S. */
  private parseEscape(inClass: boolean): number | Ranges {
    const c = this.chars[this.pos++];
    const simple = SIMPLE_ESCAPES.get(c);
    if (simple !== undefined) return simple;
    switch (c) {
      case undefined:
        return this.syntax("\\ at end of pattern");
      case "b":
        // Inside a class \b is backspace, as in ECMAScript.
        return inClass ? 0x08 : this.fail("word boundary \\b");
      case "B":
        return inClass ? this.syntax("invalid escape \\B in a class") : this.fail("word boundary \\B");
      case "p":
      case "P":
        return this.fail(`unicode property \\${c}`);
      case "c":
        return this.fail("control escape \\c");
      case "k":
        return inClass ? this.syntax("invalid escape \\k in a class") : this.fail("backreference \\k<name>");
      case "0":
        return this.isDigit(this.chars[this.pos]) ? this.syntax("invalid decimal escape") : 0;
      case "x":
        return this.readHex(2) ?? this.syntax("invalid \\x escape");
      case "u":
        return this.parseUnicodeEscape();
    }
    if (this.isDigit(c)) {
      if (inClass) this.syntax(`invalid escape \\${c} in a class`);
      const start = this.pos - 1;
      while (this.isDigit(this.chars[this.pos])) this.pos++;
      this.fail(`backreference \\${this.chars.slice(start, this.pos).join("")}`);
    }
    // NOTE: ECMAScript's u flag allows only syntax characters and / (and - in classes) here; any ASCII
    // punctuation is accepted, since its meaning (itself) is unambiguous and patterns like \- are common.
    if (ASCII_PUNCTUATION.test(c)) return c.codePointAt(0)!;
    return this.syntax(`invalid escape \\${c}`);
  }

  /** After "\u": \u{H...} or \uHHHH, joining an escaped surrogate pair into one code point as the u flag does. */
  private parseUnicodeEscape(): number {
    if (this.eat("{")) {
      const start = this.pos;
      while (HEX.test(this.chars[this.pos] ?? "")) this.pos++;
      const value = parseInt(this.chars.slice(start, this.pos).join(""), 16);
      if (this.pos === start || !this.eat("}") || value > 0x10ffff) this.syntax("invalid \\u{} escape");
      return value;
    }
    const lead = this.readHex(4) ?? this.syntax("invalid \\u escape");
    if (lead >= 0xd800 && lead <= 0xdbff && this.is("\\") && this.chars[this.pos + 1] === "u") {
      const start = this.pos;
      this.pos += 2;
      const trail = this.readHex(4);
      if (trail !== undefined && trail >= 0xdc00 && trail <= 0xdfff) return 0x10000 + ((lead - 0xd800) << 10) + (trail - 0xdc00);
      this.pos = start;
    }
    return lead;
  }

  /** Exactly `count` hex digits, or undefined with the cursor unchanged. */
  private readHex(count: number): number | undefined {
    const digits = this.chars.slice(this.pos, this.pos + count).join("");
    if (digits.length !== count || !HEX.test(digits)) return undefined;
    this.pos += count;
    return parseInt(digits, 16);
  }

  private is(c: string): boolean {
    return this.chars[this.pos] === c;
  }

  private eat(c: string): boolean {
    if (this.chars[this.pos] !== c) return false;
    this.pos++;
    return true;
  }

  private isDigit(c: string | undefined): boolean {
    return c !== undefined && c >= "0" && c <= "9";
  }

  private fail(feature: string): never {
    throw new UnsupportedPatternError(feature, this.pattern);
  }

  private syntax(what: string): never {
    this.fail(`syntax: ${what}`);
  }
}
