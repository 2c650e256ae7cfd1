// Unconstrained text around the constrained part: the reasoning before `</think>`, or an answer's prose before a
// `<tool_call>` tag. Tracks how much of the delimiter the text ends with (KMP), so states are 0..delimiter length.
import type { Lexeme } from "./lexeme.js";
import { hasLoneSurrogate } from "./utf8.js";

const UTF8 = new TextEncoder();

/**
 * Free text and a delimiter. With `through`, the lexeme is text that ends at the first occurrence of the delimiter,
 * delimiter included (reasoning up to its close tag). Without, it is one or more bytes of text that never contain the
 * delimiter (prose that may end the answer, or be followed by the delimiter as a separate literal).
 */
export class FreeTextLexeme implements Lexeme {
  readonly start = 0;
  private readonly delimiter: Uint8Array;
  /** KMP failure function of the delimiter. */
  private readonly failure: Int32Array;
  /** States >= `nonEmpty` have read at least one byte (without `through`: state = matched + nonEmpty). */
  private readonly nonEmpty: number;

  constructor(readonly delimiterText: string, readonly through: boolean) {
    if (hasLoneSurrogate(delimiterText)) throw new RangeError(`the delimiter ${JSON.stringify(delimiterText)} holds a lone surrogate, which UTF-8 cannot encode`);
    this.delimiter = UTF8.encode(delimiterText);
    if (this.delimiter.length === 0) throw new RangeError("free text needs a non-empty delimiter");
    this.failure = new Int32Array(this.delimiter.length + 1);
    for (let i = 1, k = 0; i < this.delimiter.length; i++) {
      while (k > 0 && this.delimiter[i] !== this.delimiter[k]) k = this.failure[k]!;
      if (this.delimiter[i] === this.delimiter[k]) k++;
      this.failure[i + 1] = k;
    }
    this.nonEmpty = this.delimiter.length + 1;
  }

  get label(): string {
    return this.through ? `text…${JSON.stringify(this.delimiterText)}` : `text-without ${JSON.stringify(this.delimiterText)}`;
  }

  step(state: number, byte: number): number {
    const length = this.delimiter.length;
    let matched = this.through ? state : state >= this.nonEmpty ? state - this.nonEmpty : 0;
    if (this.through && matched === length) return -1;
    while (matched > 0 && this.delimiter[matched] !== byte) matched = this.failure[matched]!;
    if (this.delimiter[matched] === byte) matched++;
    if (this.through) return matched;
    return matched === length ? -1 : matched + this.nonEmpty;
  }

  accepts(state: number): boolean {
    return this.through ? state === this.delimiter.length : state >= this.nonEmpty;
  }

  canContinue(state: number): boolean {
    return !this.through || state < this.delimiter.length;
  }
}
