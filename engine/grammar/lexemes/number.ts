// A JSON number under a schema's numeric keywords. Generated numbers have no exponent and at most 15 integer and 15
// fraction digits, so that every one parses to the value its digits spell; a byte is allowed only when some
// completion of the digits so far still satisfies the bounds (and, for integers, multipleOf).
import { type Lexeme, StateTable } from "./lexeme.js";

/** Numeric constraints, as the schema states them (exclusive bounds as numbers, draft 2020-12). */
export interface NumberBounds {
  integer: boolean;
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: number;
  exclusiveMaximum?: number;
  /** A positive integer; integers only. */
  multipleOf?: number;
}

/** Most digits on either side of the point. */
export const MAX_NUMBER_DIGITS = 15;

const MINUS = 0x2d;
const POINT = 0x2e;
const ZERO = 0x30;

/** A set of reals from `low` to `high`, each end open or closed. */
interface Interval {
  low: number;
  lowOpen: boolean;
  high: number;
  highOpen: boolean;
  /**
   * For the completions of a prefix: the same values exactly, as the first and last of the decimals they can spell,
   * in units of 10^-15 (the finest fraction digit); computed only when the floating-point ends are too close to call.
   */
  exact?: () => readonly [bigint, bigint];
}

/** 10^-15, the unit of exact values: every generated number is a whole number of these. */
const UNITS_PER_ONE = 10n ** BigInt(MAX_NUMBER_DIGITS);

/** Matches a number satisfying `bounds`. States are the text so far. */
export class NumberLexeme implements Lexeme {
  readonly start: number;
  private readonly table = new StateTable<string>();
  private readonly stepCache = new Map<number, number>();
  /** The bounds as one interval (exclusive where the schema says so). */
  private readonly range: Interval;

  constructor(readonly bounds: NumberBounds) {
    const low = Math.max(bounds.minimum ?? -Infinity, bounds.exclusiveMinimum ?? -Infinity);
    const high = Math.min(bounds.maximum ?? Infinity, bounds.exclusiveMaximum ?? Infinity);
    this.range = {
      low,
      lowOpen: bounds.exclusiveMinimum !== undefined && bounds.exclusiveMinimum >= (bounds.minimum ?? -Infinity),
      high,
      highOpen: bounds.exclusiveMaximum !== undefined && bounds.exclusiveMaximum <= (bounds.maximum ?? Infinity),
    };
    this.start = this.table.intern("", () => "");
  }

  get label(): string {
    const b = this.bounds;
    return `${b.integer ? "integer" : "number"}${b.minimum !== undefined ? ` >=${b.minimum}` : ""}${b.exclusiveMinimum !== undefined ? ` >${b.exclusiveMinimum}` : ""}`
      + `${b.maximum !== undefined ? ` <=${b.maximum}` : ""}${b.exclusiveMaximum !== undefined ? ` <${b.exclusiveMaximum}` : ""}${b.multipleOf !== undefined ? ` %${b.multipleOf}` : ""}`;
  }

  /** Whether any number satisfies the bounds (the schema compiler rejects those that none does). */
  satisfiable(): boolean {
    return this.feasible("");
  }

  step(state: number, byte: number): number {
    const key = state * 256 + byte;
    let next = this.stepCache.get(key);
    if (next === undefined) {
      const text = this.table.get(state) + String.fromCharCode(byte);
      next = wellFormedPrefix(text, this.bounds.integer) && this.feasible(text) ? this.table.intern(text, () => text) : -1;
      this.stepCache.set(key, next);
    }
    return next;
  }

  accepts(state: number): boolean {
    const text = this.table.get(state);
    return complete(text) && this.satisfies(text);
  }

  canContinue(state: number): boolean {
    for (let byte = ZERO; byte <= ZERO + 9; byte++) if (this.step(state, byte) >= 0) return true;
    return this.step(state, POINT) >= 0 || this.step(state, MINUS) >= 0;
  }

  /** The finished text's value is within the bounds (compared as the validator compares: as parsed doubles). */
  private satisfies(text: string): boolean {
    const value = Number(text);
    const { multipleOf } = this.bounds;
    if (!this.aboveLower(value) || !this.belowUpper(value)) return false;
    if (multipleOf !== undefined && value % multipleOf !== 0) return false;
    return true;
  }

  private aboveLower(value: number): boolean {
    const { minimum, exclusiveMinimum } = this.bounds;
    return (minimum === undefined || value >= minimum) && (exclusiveMinimum === undefined || value > exclusiveMinimum);
  }

  private belowUpper(value: number): boolean {
    const { maximum, exclusiveMaximum } = this.bounds;
    return (maximum === undefined || value <= maximum) && (exclusiveMaximum === undefined || value < exclusiveMaximum);
  }

  /** Some completion of `text` (itself included) is a number within the bounds. */
  private feasible(text: string): boolean {
    if (complete(text) && this.satisfies(text)) return true;
    return reachable(text, this.bounds.integer).some((interval) => this.meets(interval));
  }

  /** Whether `interval` holds an admissible value other than by rounding luck: a multiple for integers. */
  private meets(interval: Interval): boolean {
    const r = this.range;
    const lowBound = Math.max(interval.low, r.low);
    const highBound = Math.min(interval.high, r.high);
    if (this.bounds.integer) {
      // Integers: the smallest admissible integer at or after the low end, rounded up to a multiple.
      let first = Math.ceil(lowBound);
      if (first === lowBound && ((lowBound === r.low && r.lowOpen) || (lowBound === interval.low && interval.lowOpen))) first += 1;
      let last = Math.floor(highBound);
      if (last === highBound && ((highBound === r.high && r.highOpen) || (highBound === interval.high && interval.highOpen))) last -= 1;
      const step = this.bounds.multipleOf ?? 1;
      const multiple = Math.ceil(first / step) * step;
      return multiple <= last;
    }
    // Numbers: the interval's ends are rounded (0.2 + 0.1 > 0.3), and its values are decimals of at most 15 fraction
    // digits, which a range narrower than a few of those steps (or of the doubles there) may fall between. Comparing
    // the ends alone let "0.2" start a number under minimum = maximum = 0.3, which no 15-digit completion reaches
    // (a dead end), and let (0, 1e-16] pass as satisfiable. So only a clear overlap or a clear gap is decided here;
    // anything closer is decided exactly.
    const margin = 1e-14 * Math.max(1, Math.abs(lowBound), Math.abs(highBound));
    if (highBound - lowBound > margin) return true; // some decimal lies well inside both: its double does too
    if (highBound - lowBound < -margin) return false;
    return interval.exact ? this.meetsExactly(interval.exact()) : lowBound <= highBound;
  }

  /**
   * Some decimal from `first` to `last` (units of 10^-15, both included) parses to a double within the bounds. Parsing
   * is monotonic, so the smallest decimal whose double clears the lower bounds (found by bisection) is the one to try
   * against the upper bounds.
   */
  private meetsExactly([first, last]: readonly [bigint, bigint]): boolean {
    const value = (units: bigint) => Number(decimalText(units));
    if (!this.aboveLower(value(last))) return false;
    let low = first;
    let high = last; // clears the lower bounds
    while (low < high) {
      const middle = low + (high - low) / 2n;
      if (this.aboveLower(value(middle))) high = middle;
      else low = middle + 1n;
    }
    return this.belowUpper(value(low));
  }
}

/** A number of 10^-15 units as decimal text (e.g. -1500000000000000n: "-1.500000000000000"). */
function decimalText(units: bigint): string {
  const negative = units < 0n;
  const magnitude = negative ? -units : units;
  return `${negative ? "-" : ""}${magnitude / UNITS_PER_ONE}.${(magnitude % UNITS_PER_ONE).toString().padStart(MAX_NUMBER_DIGITS, "0")}`;
}

/** The text is a whole JSON number (no exponent). */
function complete(text: string): boolean {
  return /^-?(0|[1-9]\d*)(\.\d+)?$/.test(text);
}

/** The text can be extended to a number with the digit limits: sign, integer part, point, fraction. */
function wellFormedPrefix(text: string, integer: boolean): boolean {
  const match = /^-?(0|[1-9]\d*)?(\.\d*)?$/.exec(text);
  if (!match) return false;
  const whole = match[1] ?? "";
  const fraction = match[2];
  if (fraction !== undefined && (integer || whole === "")) return false;
  return whole.length <= MAX_NUMBER_DIGITS && (fraction === undefined || fraction.length - 1 <= MAX_NUMBER_DIGITS);
}

/**
 * The values that completions of `text` (longer than it) can take, as intervals: more integer digits (each count is
 * its own interval), or more fraction digits.
 */
function reachable(text: string, integer: boolean): Interval[] {
  if (text === "") return [...reachable("-", integer), ...reachableUnsigned(text, integer)];
  return reachableUnsigned(text, integer);
}

function reachableUnsigned(text: string, integer: boolean): Interval[] {
  const negative = text.startsWith("-");
  const body = negative ? text.slice(1) : text;
  const point = body.indexOf(".");
  const out: Interval[] = [];
  /**
   * Adds [low, high] (or [low, high) with fraction room) for non-negative magnitudes, mirrored when negative; exactly
   * (for numbers), the `count` decimals from `first` on, in units of 10^-15, as `magnitudes` gives them when asked.
   */
  const add = (low: number, high: number, highOpen: boolean, magnitudes: () => readonly [first: bigint, count: bigint]) => {
    const exact = (): readonly [bigint, bigint] => {
      const [first, count] = magnitudes();
      return negative ? [-(first + count - 1n), -first] : [first, first + count - 1n];
    };
    out.push(negative ? { low: -high, lowOpen: highOpen, high: -low, highOpen: false, exact } : { low, lowOpen: false, high, highOpen, exact });
  };
  const fractionRoom = !integer;
  if (point >= 0) {
    const fraction = body.slice(point + 1);
    if (fraction.length >= MAX_NUMBER_DIGITS) return out;
    const base = Number(`${body.slice(0, point)}.${fraction || "0"}`);
    add(base, base + 10 ** -fraction.length, true,
      () => [BigInt(body.slice(0, point) + fraction.padEnd(MAX_NUMBER_DIGITS, "0")), 10n ** BigInt(MAX_NUMBER_DIGITS - fraction.length)]);
    return out;
  }
  if (body === "0") {
    if (fractionRoom) add(0, 1, true, () => [0n, UNITS_PER_ONE]);
    return out;
  }
  const digits = body.length;
  const prefix = body === "" ? 0 : Number(body);
  for (let more = body === "" ? 1 : 0; digits + more <= MAX_NUMBER_DIGITS; more++) {
    const scale = 10 ** more;
    // (Exact ends are asked for only with fraction room: `scaled` units of 10^-15 per unit of the prefix.)
    const scaled = () => 10n ** BigInt(more) * UNITS_PER_ONE;
    if (body === "") {
      // Any number of digits: 0 (one digit), or from 10^(more-1) with `more` digits.
      const low = more === 1 ? 0 : 10 ** (more - 1);
      add(low, 10 ** more - (fractionRoom ? 0 : 1), fractionRoom, () => {
        const first = more === 1 ? 0n : scaled() / 10n;
        return [first, scaled() - first];
      });
    } else if (more === 0) {
      if (fractionRoom) add(prefix, prefix + 1, true, () => [BigInt(body) * UNITS_PER_ONE, UNITS_PER_ONE]);
    } else {
      add(prefix * scale, (prefix + 1) * scale - (fractionRoom ? 0 : 1), fractionRoom, () => [BigInt(body) * scaled(), scaled()]);
    }
  }
  return out;
}
