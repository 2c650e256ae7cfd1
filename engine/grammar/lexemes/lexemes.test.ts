// The lexemes on their own, byte by byte: what each accepts and refuses, and the property the whole library rests on:
// a lexeme never returns a state from which it cannot be completed (checked from every state a breadth-first search
// reaches, and by random walks from those states to the end), and everything it accepts is what the schema asked for.
import { describe, expect, it } from "vitest";
import { compilePattern } from "../regex/index.js";
import { seededRandom } from "../../testing/seeded-random.js";
import { FreeTextLexeme } from "./free-text.js";
import type { Lexeme } from "./lexeme.js";
import { LiteralLexeme } from "./literal.js";
import { MAX_NUMBER_DIGITS, type NumberBounds, NumberLexeme } from "./number.js";
import { type StringSpec, StringLexeme } from "./string.js";
import { WhitespaceLexeme } from "./whitespace.js";

const UTF8 = new TextEncoder();
const STRICT_UTF8 = new TextDecoder("utf-8", { fatal: true });

type Input = string | readonly number[];
const bytesOf = (input: Input): Uint8Array => typeof input === "string" ? UTF8.encode(input) : Uint8Array.from(input);

/** Where `input` leaves the lexeme: `dead` when some byte was refused (at byte index `at`). */
function run(lexeme: Lexeme, input: Input): { state: number; dead: boolean; at: number; accepts: boolean; canContinue: boolean } {
  const bytes = bytesOf(input);
  let state = lexeme.start;
  for (let i = 0; i < bytes.length; i++) {
    const next = lexeme.step(state, bytes[i]!);
    if (next < 0) return { state, dead: true, at: i, accepts: false, canContinue: false };
    state = next;
  }
  return { state, dead: false, at: bytes.length, accepts: lexeme.accepts(state), canContinue: lexeme.canContinue(state) };
}

const accepts = (lexeme: Lexeme, input: Input) => run(lexeme, input).accepts;
/** Every byte is taken (the input is a live prefix), whether or not it is whole. */
const live = (lexeme: Lexeme, input: Input) => !run(lexeme, input).dead;

function expectAccepted(lexeme: Lexeme, inputs: Input[]): void {
  for (const input of inputs) expect(accepts(lexeme, input), `${lexeme.label} should accept ${JSON.stringify(input)}`).toBe(true);
}

function expectRefused(lexeme: Lexeme, inputs: Input[]): void {
  for (const input of inputs) expect(accepts(lexeme, input), `${lexeme.label} should refuse ${JSON.stringify(input)}`).toBe(false);
}

/** The input is refused exactly at byte `at` (its prefix before that is live). */
function expectDeadAt(lexeme: Lexeme, input: Input, at: number): void {
  const result = run(lexeme, input);
  expect({ dead: result.dead, at: result.at }, `${lexeme.label} on ${JSON.stringify(input)}`).toEqual({ dead: true, at });
}

function allowedBytes(lexeme: Lexeme, state: number, candidates: readonly number[]): number[] {
  return candidates.filter((byte) => lexeme.step(state, byte) >= 0);
}

const ALL_BYTES = Array.from({ length: 256 }, (_, byte) => byte);

interface ExploreOptions {
  /** Bytes the search and the walks try. */
  alphabet: readonly number[];
  /** Bytes that may continue a state, for the dead-end check (default all 256; numbers: their alphabet). */
  continuations?: readonly number[];
  /** Breadth-first depth in bytes. */
  depth: number;
  /** Called with every accepted byte string found (by the search or a walk). */
  check: (bytes: Uint8Array) => void;
  /** Random walks to the end from each searched state (default 1), at most this many states walked from (default all). */
  walks?: number;
  maxWalkStates?: number;
  /** Most bytes in one walk. */
  maxWalk?: number;
  /** Stop a walk at an accepting state with this probability (default 0.3). */
  stopChance?: number;
  /** Bytes a walk prefers half of the time when allowed (e.g. the closing quote), so that walks end. */
  closers?: readonly number[];
  seed?: number;
}

interface Explored {
  states: number;
  accepted: number;
  walksFinished: number;
}

/**
 * The no-dead-end property from every state within `depth` bytes (over `alphabet`): a state that does not accept has
 * some byte (of all 256) leading to a state; `canContinue` says exactly whether one does; and random walks from each
 * state never reach a state that neither accepts nor continues. Accepted texts go to `check`.
 */
function explore(lexeme: Lexeme, options: ExploreOptions): Explored {
  const { alphabet, depth, check, walks = 1, maxWalk = 200, stopChance = 0.3, closers = [], continuations = ALL_BYTES } = options;
  const random = seededRandom(options.seed ?? 12345);
  const texts = new Map<number, number[]>([[lexeme.start, []]]);
  let frontier = [lexeme.start];
  let accepted = 0;
  for (let level = 0; level < depth && frontier.length > 0; level++) {
    const next: number[] = [];
    for (const state of frontier) {
      for (const byte of alphabet) {
        const to = lexeme.step(state, byte);
        if (to < 0 || texts.has(to)) continue;
        texts.set(to, [...texts.get(state)!, byte]);
        next.push(to);
      }
    }
    frontier = next;
  }
  const show = (bytes: readonly number[]) => JSON.stringify(Buffer.from(bytes).toString("latin1"));
  for (const [state, text] of texts) {
    const anyByte = continuations.some((byte) => lexeme.step(state, byte) >= 0);
    if (!lexeme.accepts(state) && !anyByte) expect.fail(`${lexeme.label}: dead end after ${show(text)}`);
    if (lexeme.canContinue(state) !== anyByte) expect.fail(`${lexeme.label}: canContinue is ${lexeme.canContinue(state)} after ${show(text)}`);
    if (lexeme.accepts(state)) {
      accepted++;
      check(Uint8Array.from(text));
    }
  }
  let walksFinished = 0;
  const states = [...texts.keys()];
  const stride = Math.max(1, Math.floor(states.length / (options.maxWalkStates ?? states.length)));
  for (let index = 0; index < states.length; index += stride) {
    for (let w = 0; w < walks; w++) {
      let state = states[index]!;
      const text = [...texts.get(state)!];
      for (let steps = 0; steps <= maxWalk; steps++) {
        const allowed = allowedBytes(lexeme, state, alphabet);
        if (lexeme.accepts(state) && (allowed.length === 0 || random() < stopChance)) {
          check(Uint8Array.from(text));
          walksFinished++;
          break;
        }
        if (allowed.length === 0) {
          // Only the alphabet was tried: a state outside it may still go on, but it must be able to.
          if (!continuations.some((byte) => lexeme.step(state, byte) >= 0)) expect.fail(`${lexeme.label}: dead end after ${show(text)}`);
          break;
        }
        const preferred = allowed.filter((byte) => closers.includes(byte));
        const pool = preferred.length > 0 && random() < 0.5 ? preferred : allowed;
        const byte = pool[Math.floor(random() * pool.length)]!;
        state = lexeme.step(state, byte);
        text.push(byte);
      }
    }
  }
  return { states: texts.size, accepted, walksFinished };
}

// ---------------------------------------------------------------------------------------------------------------------
// Numbers
// ---------------------------------------------------------------------------------------------------------------------

const NUMBER_ALPHABET = [...bytesOf("-.0123456789")];
const JSON_NUMBER = /^-?(0|[1-9]\d*)(\.\d+)?$/;

/** Whether `text` is a number `bounds` admits, as the validator decides (parsed as a double). */
function admits(bounds: NumberBounds, text: string): boolean {
  if (!JSON_NUMBER.test(text)) return false;
  const value = Number(text);
  if (bounds.integer && text.includes(".")) return false;
  if (bounds.minimum !== undefined && !(value >= bounds.minimum)) return false;
  if (bounds.maximum !== undefined && !(value <= bounds.maximum)) return false;
  if (bounds.exclusiveMinimum !== undefined && !(value > bounds.exclusiveMinimum)) return false;
  if (bounds.exclusiveMaximum !== undefined && !(value < bounds.exclusiveMaximum)) return false;
  if (bounds.multipleOf !== undefined && value % bounds.multipleOf !== 0) return false;
  return true;
}

function checkNumber(bounds: NumberBounds) {
  return (bytes: Uint8Array) => {
    const text = STRICT_UTF8.decode(bytes);
    const [whole, fraction = ""] = text.replace("-", "").split(".");
    // (expect() only on failure: it is called for every accepted text, thousands of times.)
    if (!admits(bounds, text) || whole!.length > MAX_NUMBER_DIGITS || fraction.length > MAX_NUMBER_DIGITS) expect.fail(`${JSON.stringify(bounds)} accepted ${text}`);
  };
}

/** Explores a number lexeme's states (breadth first over "-.0123456789", then walks), checking every accepted text. */
function exploreNumber(bounds: NumberBounds, depth = 4): Explored {
  const lexeme = new NumberLexeme(bounds);
  const result = explore(lexeme, { alphabet: NUMBER_ALPHABET, continuations: NUMBER_ALPHABET, depth, check: checkNumber(bounds), maxWalk: 40, maxWalkStates: 1000, seed: depth * 31 + JSON.stringify(bounds).length });
  // No other byte ever continues a number (checked at the start and a few states in).
  for (const text of ["", "-", "1", "0.", "-0.5"]) {
    const at = run(lexeme, text);
    if (!at.dead) for (const byte of ALL_BYTES) if (!NUMBER_ALPHABET.includes(byte)) expect(lexeme.step(at.state, byte), `${text} + byte ${byte}`).toBe(-1);
  }
  return result;
}

describe("NumberLexeme", () => {
  it("reads JSON numbers without exponent: no leading zeros, no lone sign or point, no fraction for integers", () => {
    const number = new NumberLexeme({ integer: false });
    expectAccepted(number, ["0", "-0", "7", "-7", "10", "0.5", "-0.25", "123.456", "1.0", "100"]);
    expectRefused(number, ["", "-", "1.", "-1.", ".5", "01", "-01", "00", "1e5", "1E5", "+1", "1.2.3", "--1", "0x1", " 1", "1 "]);
    expectDeadAt(number, "01", 1);
    expectDeadAt(number, "1e5", 1);
    expectDeadAt(number, ".5", 0);
    expectDeadAt(number, "1-", 1);
    expect(live(number, "-")).toBe(true);
    expect(live(number, "1.")).toBe(true);
    expect(run(number, "1.").canContinue).toBe(true);
    const integer = new NumberLexeme({ integer: true });
    expectAccepted(integer, ["0", "-0", "42", "-42", "999999999999999"]);
    expectRefused(integer, ["1.0", "1.", "0.5", "-", "01"]);
    expectDeadAt(integer, "1.0", 1);
  });

  it("allows at most 15 digits on either side of the point", () => {
    const number = new NumberLexeme({ integer: false });
    const digits15 = "123456789012345";
    expectAccepted(number, [digits15, `-${digits15}`, `0.${digits15}`, `${digits15}.${digits15}`, `-${digits15}.${digits15}`]);
    expectDeadAt(number, `${digits15}6`, 15);
    expectDeadAt(number, `-${digits15}6`, 16);
    expectDeadAt(number, `0.${digits15}6`, 17);
    const integer = new NumberLexeme({ integer: true });
    expectAccepted(integer, ["999999999999999", "-999999999999999"]);
    expectDeadAt(integer, "9999999999999999", 15);
    // Bounds only reachable with more digits are unsatisfiable.
    expect(new NumberLexeme({ integer: true, minimum: 1e15 }).satisfiable()).toBe(false);
    expect(new NumberLexeme({ integer: false, minimum: 1e15 + 1 }).satisfiable()).toBe(false);
    // ... but a 15-digit number whose double rounds up to the bound is fine (the validator compares doubles too).
    const roundsUp = new NumberLexeme({ integer: false, minimum: 1e15 });
    expectAccepted(roundsUp, ["999999999999999.95"]);
    expectRefused(roundsUp, ["999999999999999.9", "999999999999999"]);
    expect(new NumberLexeme({ integer: true, minimum: 1e15 - 1 }).satisfiable()).toBe(true);
    expect(new NumberLexeme({ integer: false, exclusiveMinimum: 0, maximum: 1e-15 }).satisfiable()).toBe(true);
    expectAccepted(new NumberLexeme({ integer: false, exclusiveMinimum: 0, maximum: 1e-15 }), ["0.000000000000001"]);
  });

  it("keeps integers within every combination of inclusive and exclusive bounds", () => {
    const cases: Array<[NumberBounds, string[], string[]]> = [
      [{ integer: true, minimum: 3, maximum: 7 }, ["3", "5", "7"], ["2", "8", "0", "-3", "30"]],
      [{ integer: true, exclusiveMinimum: 3, exclusiveMaximum: 7 }, ["4", "6"], ["3", "7", "0"]],
      [{ integer: true, minimum: 3, exclusiveMaximum: 7 }, ["3", "6"], ["7", "2"]],
      [{ integer: true, exclusiveMinimum: 3, maximum: 7 }, ["4", "7"], ["3", "8"]],
      [{ integer: true, minimum: -7, maximum: -3 }, ["-7", "-5", "-3"], ["-2", "-8", "0", "3", "-0"]],
      [{ integer: true, exclusiveMinimum: -7, exclusiveMaximum: -3 }, ["-6", "-4"], ["-7", "-3"]],
      [{ integer: true, minimum: -5, maximum: 5 }, ["-5", "0", "-0", "5"], ["-6", "6"]],
      [{ integer: true, exclusiveMinimum: 0 }, ["1", "999999999999999"], ["0", "-0", "-1"]],
      [{ integer: true, exclusiveMaximum: 0 }, ["-1", "-999999999999999"], ["0", "-0", "1"]],
      [{ integer: true, minimum: 0 }, ["0", "1"], ["-1"]],
      [{ integer: true, exclusiveMinimum: 1.5 }, ["2", "100"], ["1", "0"]],
      [{ integer: true, exclusiveMinimum: 1.5, exclusiveMaximum: 2.5 }, ["2"], ["1", "3"]],
      [{ integer: true, minimum: 1.5, maximum: 3.5 }, ["2", "3"], ["1", "4"]],
      [{ integer: true, minimum: -2.5, maximum: -1.5 }, ["-2"], ["-1", "-3"]],
      [{ integer: true, minimum: 42, maximum: 42 }, ["42"], ["4", "41", "43", "420"]],
      [{ integer: true, minimum: 0, maximum: 0 }, ["0", "-0"], ["1", "-1"]],
      [{ integer: true, minimum: 1000, maximum: 1002 }, ["1000", "1002"], ["999", "1003", "100"]],
      [{ integer: true, minimum: 3, exclusiveMinimum: 5 }, ["6"], ["5", "4", "3"]],
      [{ integer: true, maximum: 7, exclusiveMaximum: 5 }, ["4"], ["5", "7"]],
    ];
    for (const [bounds, good, bad] of cases) {
      const lexeme = new NumberLexeme(bounds);
      expect(lexeme.satisfiable(), JSON.stringify(bounds)).toBe(true);
      expectAccepted(lexeme, good);
      expectRefused(lexeme, bad);
    }
    // A range without 0 refuses "0" at once, and a sign that cannot lead anywhere.
    expectDeadAt(new NumberLexeme({ integer: true, minimum: 3, maximum: 7 }), "0", 0);
    expectDeadAt(new NumberLexeme({ integer: true, minimum: 3, maximum: 7 }), "-", 0);
    expectDeadAt(new NumberLexeme({ integer: true, minimum: -7, maximum: -3 }), "1", 0);
    expectDeadAt(new NumberLexeme({ integer: true, minimum: 42, maximum: 42 }), "43", 1);
    // Empty ranges.
    for (const bounds of [
      { integer: true, minimum: 5, maximum: 4 },
      { integer: true, exclusiveMinimum: 1, exclusiveMaximum: 2 },
      { integer: true, exclusiveMinimum: 1.2, maximum: 1.9 },
      { integer: true, minimum: 3, exclusiveMaximum: 3 },
    ]) expect(new NumberLexeme(bounds).satisfiable(), JSON.stringify(bounds)).toBe(false);
  });

  it("keeps integers to multiples within bounds", () => {
    const cases: Array<[NumberBounds, string[], string[]]> = [
      [{ integer: true, multipleOf: 5 }, ["0", "5", "-5", "100", "-35"], ["1", "12", "-7"]],
      [{ integer: true, multipleOf: 5, minimum: 3, maximum: 17 }, ["5", "10", "15"], ["0", "3", "20", "17"]],
      [{ integer: true, multipleOf: 7, exclusiveMinimum: 7, exclusiveMaximum: 21 }, ["14"], ["7", "21", "0"]],
      [{ integer: true, multipleOf: 3, minimum: -10, maximum: -1 }, ["-9", "-6", "-3"], ["-1", "0", "-10", "3"]],
      [{ integer: true, multipleOf: 100, minimum: 150 }, ["200", "1000"], ["150", "100", "250"]],
      [{ integer: true, multipleOf: 4, minimum: 1.5, maximum: 4.5 }, ["4"], ["2", "0", "8"]],
    ];
    for (const [bounds, good, bad] of cases) {
      const lexeme = new NumberLexeme(bounds);
      expectAccepted(lexeme, good);
      expectRefused(lexeme, bad);
    }
    // No multiple of 100 lies in [150, 199]: nothing can even start.
    expect(live(new NumberLexeme({ integer: true, multipleOf: 100, minimum: 150, maximum: 199 }), "1")).toBe(false);
    expect(new NumberLexeme({ integer: true, multipleOf: 100, minimum: 150, maximum: 199 }).satisfiable()).toBe(false);
    expect(new NumberLexeme({ integer: true, multipleOf: 10, minimum: 11, maximum: 19 }).satisfiable()).toBe(false);
    expectDeadAt(new NumberLexeme({ integer: true, multipleOf: 5, minimum: 3, maximum: 17 }), "12", 1);
  });

  it("keeps numbers within every combination of inclusive and exclusive bounds", () => {
    const cases: Array<[NumberBounds, string[], string[]]> = [
      [{ integer: false, minimum: 0, maximum: 1 }, ["0", "1", "0.5", "1.0", "0.999999999999999"], ["1.1", "-0.5", "2", "1.000000000000001"]],
      [{ integer: false, exclusiveMinimum: 0, exclusiveMaximum: 1 }, ["0.5", "0.000000000000001", "0.999999999999999"], ["0", "1", "0.0", "1.0", "-0"]],
      [{ integer: false, exclusiveMinimum: 0.1, exclusiveMaximum: 0.2 }, ["0.15", "0.100000000000001", "0.199999999999999", "0.11"], ["0.1", "0.2", "0.10", "0.25", "0"]],
      [{ integer: false, minimum: 0.1, maximum: 0.2 }, ["0.1", "0.2", "0.10", "0.2000"], ["0.09", "0.21", "0.200000000000001"]],
      [{ integer: false, minimum: -2.5, maximum: -1.5 }, ["-2.5", "-2", "-1.5", "-1.75"], ["-1.4", "-2.6", "0", "1.5"]],
      [{ integer: false, exclusiveMinimum: -2.5, exclusiveMaximum: -1.5 }, ["-2", "-2.4", "-1.6"], ["-2.5", "-1.5"]],
      [{ integer: false, minimum: 0.5, maximum: 0.5 }, ["0.5", "0.50", "0.500000000000000"], ["0.51", "0.4", "1"]],
      [{ integer: false, minimum: 0.3, maximum: 0.3 }, ["0.3", "0.30"], ["0.2", "0.299999999999999", "0.300000000000001"]],
      [{ integer: false, minimum: 3, maximum: 3 }, ["3", "3.0"], ["3.1", "2.9"]],
      [{ integer: false, exclusiveMinimum: 9.99, maximum: 10 }, ["10", "9.995", "10.0"], ["9.99", "10.01", "1"]],
      [{ integer: false, minimum: 1e-15, maximum: 2e-15 }, ["0.000000000000001", "0.000000000000002"], ["0", "0.00000000000001"]],
      [{ integer: false, exclusiveMaximum: -0.5 }, ["-0.6", "-1", "-100"], ["-0.5", "0", "-0.4"]],
      [{ integer: false, minimum: 100.25 }, ["100.25", "1000"], ["100.2", "100", "99"]],
    ];
    for (const [bounds, good, bad] of cases) {
      const lexeme = new NumberLexeme(bounds);
      expect(lexeme.satisfiable(), JSON.stringify(bounds)).toBe(true);
      expectAccepted(lexeme, good);
      expectRefused(lexeme, bad);
    }
    // Prefixes that cannot reach the range are refused as they arrive.
    expectDeadAt(new NumberLexeme({ integer: false, minimum: 0.3, maximum: 0.3 }), "0.2", 2);
    expectDeadAt(new NumberLexeme({ integer: false, exclusiveMinimum: 0.1, exclusiveMaximum: 0.2 }), "0.3", 2);
    expectDeadAt(new NumberLexeme({ integer: false, minimum: 5, maximum: 7 }), "0", 0);
    expectDeadAt(new NumberLexeme({ integer: false, minimum: -7, maximum: -5 }), "-0", 1);
    expectDeadAt(new NumberLexeme({ integer: false, minimum: 0, maximum: 1 }), "1.1", 2);
  });

  it("knows when no number of at most 15 fraction digits fits a tiny range", () => {
    const unsatisfiable: NumberBounds[] = [
      { integer: false, minimum: 1, maximum: 0 },
      { integer: false, exclusiveMinimum: 1, exclusiveMaximum: 1 },
      { integer: false, minimum: 1, exclusiveMaximum: 1 },
      { integer: false, exclusiveMinimum: 0, maximum: 1e-16 },
      { integer: false, minimum: 1e-16, maximum: 9e-16 },
      { integer: false, exclusiveMinimum: 0.1, exclusiveMaximum: 0.100000000000001 },
      { integer: false, exclusiveMinimum: 1, exclusiveMaximum: 1.0000000000000002 },
      { integer: false, minimum: 0.1234567890123456, maximum: 0.1234567890123458 },
    ];
    for (const bounds of unsatisfiable) expect(new NumberLexeme(bounds).satisfiable(), JSON.stringify(bounds)).toBe(false);
    // ... and when one does, even if it is the only one.
    const narrow: Array<[NumberBounds, string]> = [
      [{ integer: false, exclusiveMinimum: 0.1, exclusiveMaximum: 0.100000000000002 }, "0.100000000000001"],
      [{ integer: false, minimum: 0.1234567890123455, maximum: 0.1234567890123465 }, "0.123456789012346"],
      [{ integer: false, exclusiveMinimum: -1.000000000000002, exclusiveMaximum: -1 }, "-1.000000000000001"],
    ];
    for (const [bounds, only] of narrow) {
      const lexeme = new NumberLexeme(bounds);
      expect(lexeme.satisfiable(), JSON.stringify(bounds)).toBe(true);
      expectAccepted(lexeme, [only]);
      const found = explore(lexeme, { alphabet: NUMBER_ALPHABET, depth: 20, check: checkNumber(bounds) });
      expect(found.accepted, JSON.stringify(bounds)).toBeGreaterThan(0);
    }
  });

  const EXPLORED: NumberBounds[] = [
    { integer: true },
    { integer: false },
    { integer: true, minimum: 3, maximum: 7 },
    { integer: true, exclusiveMinimum: 3, exclusiveMaximum: 7 },
    { integer: true, minimum: -7, maximum: -3 },
    { integer: true, exclusiveMinimum: -7, maximum: -3 },
    { integer: true, minimum: -50, maximum: 50 },
    { integer: true, exclusiveMinimum: 0 },
    { integer: true, exclusiveMaximum: 0 },
    { integer: true, exclusiveMinimum: 1.5, exclusiveMaximum: 9.5 },
    { integer: true, minimum: 42, maximum: 42 },
    { integer: true, minimum: -1, maximum: -1 },
    { integer: true, minimum: 100, maximum: 1000 },
    { integer: true, minimum: 999999999999990 },
    { integer: true, maximum: -999999999999990 },
    { integer: true, multipleOf: 7 },
    { integer: true, multipleOf: 5, minimum: 3, maximum: 97 },
    { integer: true, multipleOf: 3, exclusiveMinimum: -20, exclusiveMaximum: -2 },
    { integer: true, multipleOf: 250, minimum: 1 },
    { integer: false, minimum: 0, maximum: 1 },
    { integer: false, exclusiveMinimum: 0, exclusiveMaximum: 1 },
    { integer: false, exclusiveMinimum: 0.1, exclusiveMaximum: 0.2 },
    { integer: false, minimum: 0.1, maximum: 0.2 },
    { integer: false, minimum: -2.5, maximum: -1.5 },
    { integer: false, exclusiveMinimum: -2.5, exclusiveMaximum: -1.5 },
    { integer: false, minimum: 0.3, maximum: 0.3 },
    { integer: false, minimum: 0.7, maximum: 0.8 },
    { integer: false, minimum: 5, maximum: 7 },
    { integer: false, exclusiveMinimum: -7, exclusiveMaximum: -5 },
    { integer: false, exclusiveMinimum: 9.99, maximum: 10 },
    { integer: false, minimum: 1e-15, maximum: 2e-15 },
    { integer: false, exclusiveMinimum: 0, maximum: 1e-14 },
    { integer: false, exclusiveMinimum: 1, exclusiveMaximum: 1.000000000000003 },
    { integer: false, minimum: 0.1234567890123455, maximum: 0.1234567890123465 },
    { integer: false, minimum: 123456789012345 },
    { integer: false, minimum: 1e15 },
    { integer: false, minimum: 999999999999999.5, maximum: 999999999999999.6 },
    { integer: false, exclusiveMaximum: -0.5 },
    { integer: false, minimum: 12.5, maximum: 12.5 },
  ];

  for (const bounds of EXPLORED) {
    it(`never dead-ends and accepts only admitted numbers: ${JSON.stringify(bounds)}`, () => {
      const result = exploreNumber(bounds);
      expect(result.accepted + result.walksFinished, "something is accepted").toBeGreaterThan(0);
    });
  }

  it("agrees with a brute-force check of every short text (up to 4 bytes)", () => {
    const texts: string[] = [""];
    for (let length = 1; length <= 4; length++) {
      for (const text of texts.filter((t) => t.length === length - 1)) for (const char of "-.0123456789") texts.push(text + char);
    }
    const disagreements: string[] = [];
    for (const bounds of EXPLORED) {
      const lexeme = new NumberLexeme(bounds);
      for (const text of texts) if (run(lexeme, text).accepts !== admits(bounds, text)) disagreements.push(`${JSON.stringify(bounds)} ${text}`);
    }
    expect(disagreements).toEqual([]);
  });
});

// ---------------------------------------------------------------------------------------------------------------------
// Strings
// ---------------------------------------------------------------------------------------------------------------------

const PATTERN_EXCLUDED: ReadonlyArray<readonly [number, number]> = [[0, 0x1f], [0x22, 0x22], [0x5c, 0x5c]];
const dfaOf = (pattern: string) => compilePattern(pattern, { excluded: PATTERN_EXCLUDED });
const QUOTE = 0x22;
const quoted = (content: string) => `"${content}"`;

interface StringCheck {
  minLength?: number;
  maxLength?: number;
  pattern?: string;
  exclude?: readonly string[];
}

function checkString(spec: StringCheck) {
  return (bytes: Uint8Array) => {
    const text = STRICT_UTF8.decode(bytes); // well-formed UTF-8, or this throws
    const value: unknown = JSON.parse(text);
    expect(typeof value).toBe("string");
    const content = value as string;
    const length = [...content].length;
    const ok = length >= (spec.minLength ?? 0) && length <= (spec.maxLength ?? Infinity) && content.isWellFormed()
      && (spec.pattern === undefined || new RegExp(spec.pattern, "u").test(content)) && !spec.exclude?.includes(content);
    if (!ok) expect.fail(`${JSON.stringify(spec)} accepted ${text}`);
  };
}

function stringLexeme(spec: StringCheck): StringLexeme {
  const lexemeSpec: StringSpec = { minLength: spec.minLength, maxLength: spec.maxLength, exclude: spec.exclude };
  if (spec.pattern !== undefined) lexemeSpec.dfa = dfaOf(spec.pattern);
  return new StringLexeme(lexemeSpec);
}

describe("StringLexeme", () => {
  it("reads a quoted string and nothing after its closing quote", () => {
    const string = new StringLexeme({});
    expectAccepted(string, ['""', '"a"', '"hello world"', '"\u007f"', '"é"', '"😀"']);
    expectRefused(string, ["", '"', '"abc', "abc", "'a'"]);
    expectDeadAt(string, 'a"', 0);
    expectDeadAt(string, '"a"b', 3);
    const closed = run(string, '"a"');
    expect(closed.canContinue).toBe(false);
    expect(run(string, '"a').canContinue).toBe(true);
  });

  it("counts code points, not bytes: 2-, 3- and 4-byte characters count once", () => {
    for (const char of ["é", "€", "😀", "a"]) {
      const three = new StringLexeme({ minLength: 3, maxLength: 3 });
      expectAccepted(three, [quoted(char.repeat(3))]);
      expectRefused(three, [quoted(char.repeat(2)), quoted(char.repeat(4))]);
      const bytes = UTF8.encode(char).length;
      // The fourth character is refused at its first byte: it could never fit.
      expectDeadAt(three, quoted(char.repeat(4)), 1 + 3 * bytes);
    }
    expectAccepted(new StringLexeme({ maxLength: 4 }), [quoted("aé€😀")]);
    expectAccepted(new StringLexeme({ minLength: 4 }), [quoted("aé€😀")]);
    expectRefused(new StringLexeme({ minLength: 5 }), [quoted("aé€😀")]);
    expectRefused(new StringLexeme({ maxLength: 3 }), [quoted("aé€😀")]);
  });

  it("refuses malformed UTF-8: overlong forms, surrogates, code points past U+10FFFF, stray continuation bytes", () => {
    const string = new StringLexeme({});
    const malformed: Array<[number[], number]> = [
      [[QUOTE, 0xc0, 0x80, QUOTE], 1], // overlong NUL
      [[QUOTE, 0xc1, 0xbf, QUOTE], 1], // overlong
      [[QUOTE, 0xe0, 0x80, 0x80, QUOTE], 2], // overlong 3-byte
      [[QUOTE, 0xe0, 0x9f, 0xbf, QUOTE], 2], // overlong 3-byte (U+07FF)
      [[QUOTE, 0xed, 0xa0, 0x80, QUOTE], 2], // surrogate D800
      [[QUOTE, 0xed, 0xbf, 0xbf, QUOTE], 2], // surrogate DFFF
      [[QUOTE, 0xf0, 0x80, 0x80, 0x80, QUOTE], 2], // overlong 4-byte
      [[QUOTE, 0xf4, 0x90, 0x80, 0x80, QUOTE], 2], // past U+10FFFF
      [[QUOTE, 0xf5, 0x80, 0x80, 0x80, QUOTE], 1],
      [[QUOTE, 0xf8, QUOTE], 1],
      [[QUOTE, 0xff, QUOTE], 1],
      [[QUOTE, 0x80, QUOTE], 1], // continuation byte with no lead
      [[QUOTE, 0xc3, 0x41, QUOTE], 2], // lead byte then ASCII
      [[QUOTE, 0xe2, 0x82, QUOTE], 3], // truncated 3-byte character
      [[QUOTE, 0xc3, 0xa9, 0xa9, QUOTE], 3], // one continuation too many
    ];
    for (const [bytes, at] of malformed) expectDeadAt(string, bytes, at);
    const wellFormed: number[][] = [
      [QUOTE, 0xc2, 0x80, QUOTE], // U+0080
      [QUOTE, 0xdf, 0xbf, QUOTE], // U+07FF
      [QUOTE, 0xe0, 0xa0, 0x80, QUOTE], // U+0800
      [QUOTE, 0xed, 0x9f, 0xbf, QUOTE], // U+D7FF
      [QUOTE, 0xee, 0x80, 0x80, QUOTE], // U+E000
      [QUOTE, 0xef, 0xbf, 0xbf, QUOTE], // U+FFFF
      [QUOTE, 0xf0, 0x90, 0x80, 0x80, QUOTE], // U+10000
      [QUOTE, 0xf4, 0x8f, 0xbf, 0xbf, QUOTE], // U+10FFFF
    ];
    expectAccepted(string, wellFormed);
  });

  it("refuses raw control characters and takes every JSON escape as one character", () => {
    const string = new StringLexeme({});
    for (let byte = 0; byte < 0x20; byte++) expectDeadAt(string, [QUOTE, byte, QUOTE], 1);
    expectAccepted(string, [String.raw`"\" \\ \/ \b \f \n \r \t"`, String.raw`"\u0041\u00e9\u20AC\uFFFF\u0000"`, String.raw`"\uD7FF\uE000"`]);
    // Unknown escapes and short \u escapes.
    expectDeadAt(string, String.raw`"\a"`, 2);
    expectDeadAt(string, String.raw`"\x41"`, 2);
    expectDeadAt(string, String.raw`"\U0041"`, 2);
    expectDeadAt(string, String.raw`"\u004"`, 6);
    expectDeadAt(string, String.raw`"\u00g1"`, 5);
    // No surrogate halves (a pair is not supported): refused at their second hex digit.
    for (const escape of ["D800", "d800", "DBFF", "DC00", "DFFF", "dfff"]) expectDeadAt(string, `"\\u${escape}"`, 4);
    // Escapes count as one character each.
    const two = new StringLexeme({ maxLength: 2 });
    expectAccepted(two, [String.raw`"\n\u0041"`, String.raw`"\\\""`, String.raw`"\u00e9x"`]);
    expectDeadAt(two, String.raw`"\n\u0041x"`, 9);
    expectDeadAt(two, String.raw`"ab\n"`, 3);
    const atLeastTwo = new StringLexeme({ minLength: 2 });
    expectRefused(atLeastTwo, [String.raw`"\u0041"`]);
    expectAccepted(atLeastTwo, [String.raw`"\u0041\t"`]);
  });

  it("keeps min and max lengths", () => {
    const cases: Array<[StringSpec, string[], string[]]> = [
      [{ minLength: 2 }, ["ab", "abc", "a".repeat(100)], ["", "a"]],
      [{ maxLength: 2 }, ["", "a", "ab"], ["abc"]],
      [{ minLength: 2, maxLength: 3 }, ["ab", "abc"], ["a", "abcd"]],
      [{ minLength: 0, maxLength: 0 }, [""], ["a"]],
      [{ minLength: 3, maxLength: 3 }, ["abc", "a b"], ["ab", "abcd"]],
    ];
    for (const [spec, good, bad] of cases) {
      const lexeme = new StringLexeme(spec);
      expect(lexeme.satisfiable()).toBe(true);
      expectAccepted(lexeme, good.map(quoted));
      expectRefused(lexeme, bad.map(quoted));
    }
    expectDeadAt(new StringLexeme({ minLength: 2 }), '"a"', 2);
    expectDeadAt(new StringLexeme({ maxLength: 0 }), '"a"', 1);
    expectDeadAt(new StringLexeme({ maxLength: 0 }), '"\\n"', 1);
  });

  it("knows when no string fits its bounds", () => {
    expect(new StringLexeme({ minLength: 5, maxLength: 2 }).satisfiable()).toBe(false);
    expect(new StringLexeme({ minLength: 3, maxLength: 3, dfa: dfaOf("^a{2}$") }).satisfiable()).toBe(false);
    expect(new StringLexeme({ maxLength: 3, dfa: dfaOf("^[0-9]{4,}$") }).satisfiable()).toBe(false);
    expect(new StringLexeme({ minLength: 3, maxLength: 5, dfa: dfaOf("^(ab)+$") }).satisfiable()).toBe(true);
    expect(new StringLexeme({ minLength: 5, maxLength: 5, dfa: dfaOf("^(ab)+$") }).satisfiable()).toBe(false);
  });

  it("drops what a DFA allows but UTF-8 cannot write: a pattern of lone surrogates admits nothing", () => {
    // A DFA built without excluding surrogates, as any caller might: the lexeme must not count on those paths.
    for (const pattern of ["^\\ud800$", "^\ud800$", "^[\\udc00-\\udfff]+$", "^a\\ud800b$"]) {
      expect(new StringLexeme({ dfa: compilePattern(pattern) }).satisfiable(), pattern).toBe(false);
    }
    const either = new StringLexeme({ dfa: compilePattern("^(?:\\ud800|ok)$") });
    expectAccepted(either, ['"ok"']);
    expectDeadAt(either, [QUOTE, 0xed], 1);
  });

  it("under a pattern: reachable lengths only, no escapes", () => {
    // ^(ab)+$ with 3..6 characters: only lengths 4 and 6.
    const pairs = new StringLexeme({ minLength: 3, maxLength: 6, dfa: dfaOf("^(ab)+$") });
    expectAccepted(pairs, ['"abab"', '"ababab"']);
    expectRefused(pairs, ['"ab"', '"aba"', '"ababa"', '"abababab"', '""']);
    expectDeadAt(pairs, '"ab"', 3);
    expectDeadAt(pairs, '"abababa', 7);
    expectDeadAt(pairs, '"aa', 2);
    expect(allowedBytes(pairs, run(pairs, '"ababab').state, ALL_BYTES)).toEqual([QUOTE]);
    expect(allowedBytes(pairs, run(pairs, '"abab').state, ALL_BYTES)).toEqual([QUOTE, 0x61]);
    // Only length 5 of {2, 5} is at least 3: after "aa" the string must go on.
    const twoOrFive = new StringLexeme({ minLength: 3, dfa: dfaOf("^a{2}$|^a{5}$") });
    expectDeadAt(twoOrFive, '"aa"', 3);
    expectAccepted(twoOrFive, ['"aaaaa"']);
    // An unbounded repetition under a minimum: lengths above it are fine.
    const digits = new StringLexeme({ minLength: 2, dfa: dfaOf("^[0-9]+$") });
    expectAccepted(digits, ['"12"', `"${"9".repeat(40)}"`]);
    expectRefused(digits, ['"1"', '"1a"']);
    // No escape sequences under a pattern (the DFA leaves out backslash and quote), even one that matches anything.
    const any = new StringLexeme({ dfa: dfaOf(".*") });
    expectDeadAt(any, String.raw`"\n"`, 1);
    expectAccepted(any, ['"a é 😀"', '""']);
    // Multi-byte characters through the DFA, with a length limit.
    const accents = new StringLexeme({ maxLength: 2, dfa: dfaOf("^[é€]+$") });
    expectAccepted(accents, ['"é"', '"€é"']);
    expectRefused(accents, ['""', '"éé€"', '"e"']);
    expectDeadAt(accents, [QUOTE, 0xc3, 0xa8], 2); // è: lead byte fits é, its continuation does not
    expectDeadAt(accents, [QUOTE, 0xf0], 1); // no 4-byte character matches
    expectDeadAt(accents, '"éé€', 5);
  });

  it("cannot close on an excluded name, but may go on past it", () => {
    const keys = new StringLexeme({ exclude: ["name", "id", "é", "\u0000"] });
    expectRefused(keys, ['"name"', '"id"', String.raw`"i\u0064"`, String.raw`"\u006eame"`, '"é"', String.raw`"\u00e9"`, String.raw`"\u0000"`]);
    expectDeadAt(keys, '"name"', 5);
    expectAccepted(keys, ['"names"', '"nam"', '"na"', '"idx"', '""', '"Name"', '"ée"', '"x"', String.raw`"\u0000x"`]);
    // A state met first without an excluded prefix must not stand for one met with it.
    const keys2 = new StringLexeme({ exclude: ["\u0000"] });
    expect(accepts(keys2, '"a"')).toBe(true);
    expectRefused(keys2, [String.raw`"\u0000"`]);
    const keys3 = new StringLexeme({ exclude: ["é"] });
    expect(accepts(keys3, '"è"')).toBe(true);
    expectRefused(keys3, ['"é"']);
  });

  const STRING_ALPHABET = [...bytesOf('ab"\\nu0D8x'), 0x1f, 0x7f, ...UTF8.encode("é€😀"), 0xc0, 0xed, 0xa0, 0xf5];
  const EXPLORED: StringCheck[] = [
    {},
    { maxLength: 3 },
    { minLength: 2 },
    { minLength: 2, maxLength: 4 },
    { minLength: 3, maxLength: 3 },
    { maxLength: 0 },
    { pattern: "^(ab)+$", minLength: 3, maxLength: 6 },
    { pattern: "^(ab)+$", minLength: 3 },
    { pattern: "^a{2}$|^a{5}$", minLength: 3 },
    { pattern: "^[ab]*b$", maxLength: 4 },
    { pattern: "a", maxLength: 3 },
    { pattern: "^[é€]+$", maxLength: 2 },
    { pattern: "^[^a]*$", minLength: 1, maxLength: 2 },
    { pattern: "^(a|😀|ééé)+$", minLength: 3, maxLength: 4 },
    { pattern: "^.{2}$" },
    { exclude: ["ab", "a", "é", "a\n"] },
  ];
  for (const spec of EXPLORED) {
    it(`never dead-ends and accepts only what ${JSON.stringify(spec)} admits`, () => {
      const lexeme = stringLexeme(spec);
      expect(lexeme.satisfiable()).toBe(true);
      const result = explore(lexeme, { alphabet: STRING_ALPHABET, depth: 9, check: checkString(spec), walks: 2, maxWalk: 60, closers: [QUOTE], seed: JSON.stringify(spec).length });
      expect(result.accepted + result.walksFinished).toBeGreaterThan(0);
    });
  }
});

// ---------------------------------------------------------------------------------------------------------------------
// Whitespace, literals, free text
// ---------------------------------------------------------------------------------------------------------------------

describe("WhitespaceLexeme", () => {
  it("reads 1..maxLength blanks with at most maxNewlines line feeds", () => {
    const ws = new WhitespaceLexeme(4, 1);
    expectAccepted(ws, [" ", "\t", "\r", "\n", " \n  ", "\r\n\t "]);
    expectRefused(ws, ["", "x"]);
    expectDeadAt(ws, "\n\n", 1);
    expectDeadAt(ws, "     ", 4);
    expectDeadAt(ws, " x", 1);
    expectDeadAt(ws, "\u000b", 0); // vertical tab is not JSON whitespace
    expect(run(ws, "    ").canContinue).toBe(false);
    expect(run(ws, "   ").canContinue).toBe(true);
    expect(ws.canContinue(ws.start)).toBe(true);
    const noNewlines = new WhitespaceLexeme(3, 0);
    expectDeadAt(noNewlines, " \n", 1);
    expectAccepted(noNewlines, ["   "]);
    const explored = explore(new WhitespaceLexeme(6, 2), { alphabet: [...bytesOf(" \t\r\nx")], depth: 8, check: (bytes) => {
        const text = STRICT_UTF8.decode(bytes);
      if (!/^[ \t\r\n]{1,6}$/.test(text) || text.split("\n").length > 3) expect.fail(`accepted ${JSON.stringify(text)}`);
    } });
    expect(explored.accepted).toBeGreaterThan(10);
  });
});

describe("LiteralLexeme", () => {
  it("reads exactly its text, bytes of UTF-8 included", () => {
    const literal = new LiteralLexeme("true");
    expectAccepted(literal, ["true"]);
    expectRefused(literal, ["", "t", "tru", "True"]);
    expectDeadAt(literal, "truex", 4);
    expectDeadAt(literal, "trux", 3);
    expect(run(literal, "tru").canContinue).toBe(true);
    expect(run(literal, "true").canContinue).toBe(false);
    const accented = new LiteralLexeme('"café"');
    expectAccepted(accented, ['"café"']);
    expectDeadAt(accented, [QUOTE, ...UTF8.encode("caf"), 0xc3, 0xa8], 5);
    expect(() => new LiteralLexeme("")).toThrow(RangeError);
    // TextEncoder would write U+FFFD for a lone surrogate: a literal nobody asked for.
    expect(() => new LiteralLexeme("<\ud800>")).toThrow(RangeError);
    expect([...new LiteralLexeme("😀").bytes]).toEqual([...UTF8.encode("😀")]);
  });
});

describe("FreeTextLexeme", () => {
  /** Every string over `alphabet` up to `length` characters. */
  function strings(alphabet: string, length: number): string[] {
    const out = [""];
    for (let i = 0; i < out.length; i++) if (out[i]!.length < length) for (const char of alphabet) out.push(out[i]! + char);
    return out;
  }

  /** Brute force against the definition, for delimiters that overlap themselves. */
  for (const [delimiter, alphabet, length] of [["aab", "ab", 9], ["abab", "ab", 10], ["aaa", "ab", 8], ["<tool_call>", "<>tol_ca", 5], ["x", "xy", 6]] as const) {
    it(`through and without ${JSON.stringify(delimiter)} agree with the definition on every short text`, () => {
      const through = new FreeTextLexeme(delimiter, true);
      const without = new FreeTextLexeme(delimiter, false);
      const texts = strings(alphabet, length);
      // Also texts that hold a partial delimiter and then go on.
      for (let cut = 1; cut < delimiter.length; cut++) texts.push(delimiter.slice(0, cut) + delimiter, `${delimiter.slice(0, cut)}y${delimiter}`, delimiter.slice(0, cut) + delimiter.slice(0, cut));
      const wrong: string[] = [];
      for (const text of texts) {
        const first = text.indexOf(delimiter);
        const viaThrough = run(through, text);
        if (viaThrough.accepts !== (first >= 0 && first + delimiter.length === text.length)) wrong.push(`through accepts ${text}`);
        if (viaThrough.dead !== (first >= 0 && first + delimiter.length < text.length)) wrong.push(`through cuts ${text}`);
        if (!viaThrough.dead && viaThrough.canContinue !== !viaThrough.accepts) wrong.push(`through canContinue ${text}`);
        const viaWithout = run(without, text);
        if (viaWithout.accepts !== (text.length > 0 && first < 0)) wrong.push(`without accepts ${text}`);
        if (viaWithout.dead !== first >= 0) wrong.push(`without cuts ${text}`);
        if (!viaWithout.dead && !viaWithout.canContinue) wrong.push(`without canContinue ${text}`);
      }
      expect(wrong).toEqual([]);
    });
  }

  it("reasoning runs to the first close tag and takes anything before it", () => {
    const reasoning = new FreeTextLexeme("</think>", true);
    expectAccepted(reasoning, ["</think>", "hmm</think>", "<think>{\"a\": 1}</think>", "</thin</think>", "<</think>", "</think</think>", [0xff, 0x00, ...UTF8.encode("</think>")]]);
    expectRefused(reasoning, ["", "hmm", "</think", "</think> "]);
    expectDeadAt(reasoning, "a</think>b", 9);
    expect(run(reasoning, "</think>").canContinue).toBe(false);
    expect(reasoning.canContinue(reasoning.start)).toBe(true);
  });

  it("prose before a tool call never holds the open tag, but may hold parts of it", () => {
    const prose = new FreeTextLexeme("<tool_call>", false);
    expectAccepted(prose, ["hello", "<tool_", "a <tool_call", "<tool_cal>", "<tool_call <tool_", "<<tool_call", "</tool_call>", "<tool_call\n>"]);
    expectRefused(prose, [""]);
    expectDeadAt(prose, "<tool_call>", 10);
    expectDeadAt(prose, "x<tool_<tool_call>", 17);
    expectDeadAt(prose, "<tool_call<tool_call>", 20);
    expect(prose.canContinue(prose.start)).toBe(true);
    expect(() => new FreeTextLexeme("", true)).toThrow(RangeError);
    expect(() => new FreeTextLexeme("</\udc00>", true)).toThrow(RangeError);
  });
});
