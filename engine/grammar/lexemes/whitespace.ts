// A run of blanks between JSON tokens (or between reasoning and the answer), bounded so that a model cannot fill its
// output with whitespace: at most `maxNewlines` line feeds and `maxLength` bytes in all.
import type { Lexeme } from "./lexeme.js";

const SPACE = 0x20;
const TAB = 0x09;
const LINE_FEED = 0x0a;
const CARRIAGE_RETURN = 0x0d;

/**
 * One to `maxLength` bytes of space, tab, CR and LF with at most `maxNewlines` LFs. State = length * (maxNewlines + 1)
 * + newlines.
 */
export class WhitespaceLexeme implements Lexeme {
  readonly start = 0;

  constructor(readonly maxLength: number, readonly maxNewlines: number) {}

  get label(): string {
    return `ws{1,${this.maxLength}}/${this.maxNewlines}`;
  }

  step(state: number, byte: number): number {
    const stride = this.maxNewlines + 1;
    const length = Math.floor(state / stride);
    const newlines = state % stride;
    if (length >= this.maxLength) return -1;
    if (byte === LINE_FEED) return newlines < this.maxNewlines ? (length + 1) * stride + newlines + 1 : -1;
    if (byte === SPACE || byte === TAB || byte === CARRIAGE_RETURN) return (length + 1) * stride + newlines;
    return -1;
  }

  accepts(state: number): boolean {
    return state > 0;
  }

  canContinue(state: number): boolean {
    return Math.floor(state / (this.maxNewlines + 1)) < this.maxLength;
  }
}
