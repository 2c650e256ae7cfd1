// One or more bytes, none of them an excluded ASCII character: a bare key in Gemma 4's call notation (`[^:}]+`).
// Excluded characters are ASCII, so the bytes of other UTF-8 characters never match them.
import type { Lexeme } from "./lexeme.js";

/** One or more bytes other than the ASCII characters of `excluded`. States: 0 nothing read, 1 at least one byte. */
export class BytesExceptLexeme implements Lexeme {
  readonly start = 0;
  private readonly excluded: Set<number>;

  constructor(private readonly excludedText: string) {
    if (excludedText === "" || /[^\x00-\x7f]/.test(excludedText)) throw new RangeError(`excluded characters must be ASCII and not empty: ${JSON.stringify(excludedText)}`);
    this.excluded = new Set([...excludedText].map((c) => c.charCodeAt(0)));
  }

  get label(): string {
    return `bytes-except ${JSON.stringify(this.excludedText)}`;
  }

  step(_state: number, byte: number): number {
    return this.excluded.has(byte) ? -1 : 1;
  }

  accepts(state: number): boolean {
    return state === 1;
  }

  canContinue(): boolean {
    return true;
  }
}
