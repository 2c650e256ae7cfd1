// Log-probabilities in the legacy completions shape: `tokens` (each token's text), `token_logprobs`, `top_logprobs`
// (per position a dict token text -> logprob, holding the `logprobs` most likely and the chosen token, so up to
// logprobs + 1 entries, as OpenAI and vLLM answer) and `text_offset` (where each token's text starts in the choice's
// text). A prompt's first token has no log-probability: null in both lists, as OpenAI and vLLM answer with echo.
import type { TokenLogprob } from "../../../engine/request.js";

/** The legacy `logprobs` object of one choice (or of one streamed chunk). */
export interface LegacyLogprobs {
  tokens: string[];
  token_logprobs: (number | null)[];
  top_logprobs: (Record<string, number> | null)[];
  text_offset: number[];
}

const STRICT_UTF8 = new TextDecoder("utf-8", { fatal: true });

/**
 * A token's text from its bytes: the UTF-8 text when they are whole characters, else OpenAI's `bytes:\xNN...` form
 * (a token that holds part of a character); `token_id:N` (vLLM's form) when the engine reported no bytes.
 */
export function tokenString(token: number, bytes: readonly number[] | undefined): string {
  if (bytes === undefined) return `token_id:${token}`;
  try {
    return STRICT_UTF8.decode(Uint8Array.from(bytes));
  } catch {
    return `bytes:${bytes.map((byte) => `\\x${byte.toString(16).padStart(2, "0")}`).join("")}`;
  }
}

/** Builds one choice's legacy logprobs, token by token, tracking each token's offset in the choice's text. */
export class LegacyLogprobsBuilder {
  #offset: number;

  /** @param offset where the first token's text starts in the choice's text. */
  constructor(offset = 0) {
    this.#offset = offset;
  }

  /** An empty object to add tokens to. */
  static empty(): LegacyLogprobs {
    return { tokens: [], token_logprobs: [], top_logprobs: [], text_offset: [] };
  }

  /** Adds the prompt's first token, which has no log-probability. */
  addUnscored(into: LegacyLogprobs, text: string): void {
    this.#push(into, text, null, null);
  }

  /** Adds scored tokens: their `top` as a dict, with the chosen token in it. */
  add(into: LegacyLogprobs, logprobs: readonly TokenLogprob[]): void {
    for (const entry of logprobs) {
      // No prototype: a token may read `__proto__`.
      const top = Object.create(null) as Record<string, number>;
      for (const candidate of entry.top) top[tokenString(candidate.token, candidate.bytes)] ??= candidate.logprob;
      const text = tokenString(entry.token, entry.bytes);
      top[text] ??= entry.logprob;
      this.#push(into, text, entry.logprob, top);
    }
  }

  /** Moves the offset of the next token (completion tokens start after the echoed prompt's text, whatever its tokens). */
  moveTo(offset: number): void {
    this.#offset = offset;
  }

  #push(into: LegacyLogprobs, text: string, logprob: number | null, top: Record<string, number> | null): void {
    into.tokens.push(text);
    into.token_logprobs.push(logprob);
    into.top_logprobs.push(top);
    into.text_offset.push(this.#offset);
    this.#offset += text.length;
  }
}
