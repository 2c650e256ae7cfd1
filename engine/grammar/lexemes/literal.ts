// A fixed byte string: punctuation, property names, enum and const values, tags. States are byte offsets.
import type { Lexeme } from "./lexeme.js";
import { hasLoneSurrogate } from "./utf8.js";

/** Matches exactly `text` (UTF-8). */
export class LiteralLexeme implements Lexeme {
  readonly start = 0;
  readonly bytes: Uint8Array;

  constructor(readonly text: string) {
    if (text === "") throw new RangeError("a literal lexeme cannot be empty (use an empty alternative)");
    // TextEncoder would write U+FFFD for a lone surrogate: the grammar would ask for a character nobody meant.
    if (hasLoneSurrogate(text)) throw new RangeError(`the literal ${JSON.stringify(text)} holds a lone surrogate, which UTF-8 cannot encode`);
    // Buffer.from is a Uint8Array; it encodes small strings several times faster than TextEncoder (enums run to
    // tens of thousands of literals).
    this.bytes = Buffer.from(text, "utf8");
  }

  get label(): string {
    return JSON.stringify(this.text);
  }

  step(state: number, byte: number): number {
    return state < this.bytes.length && this.bytes[state] === byte ? state + 1 : -1;
  }

  accepts(state: number): boolean {
    return state === this.bytes.length;
  }

  canContinue(state: number): boolean {
    return state < this.bytes.length;
  }
}
