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

/** One token as the legacy object lists it: its text, log-probability and alternatives, and its bytes. */
export interface LegacyToken {
  text: string;
  logprob: number | null;
  top: Record<string, number> | null;
  bytes?: readonly number[];
}

/** A scored token: its `top` as a dict, with the chosen token in it. */
export function scoredToken(entry: TokenLogprob): LegacyToken {
  // No prototype: a token may read `__proto__`.
  const top = Object.create(null) as Record<string, number>;
  for (const candidate of entry.top) top[tokenString(candidate.token, candidate.bytes)] ??= candidate.logprob;
  const text = tokenString(entry.token, entry.bytes);
  top[text] ??= entry.logprob;
  return { text, logprob: entry.logprob, top, ...(entry.bytes ? { bytes: entry.bytes } : {}) };
}

/** A prompt's first token, which has no log-probability. */
export function unscoredToken(token: number, bytes: readonly number[] | undefined): LegacyToken {
  return { text: tokenString(token, bytes), logprob: null, top: null, ...(bytes ? { bytes } : {}) };
}

/**
 * Builds one choice's legacy logprobs, piece by piece of its text, with each token's `text_offset`: where the text
 * the token adds starts in the choice's text. Tokens are aligned with the text they produced by their bytes: a token
 * that adds nothing there (BOS, part of a UTF-8 character, a piece the text does not hold) takes the offset of the text
 * that follows, so offsets never run past the text or backwards.
 */
export class LegacyLogprobsBuilder {
  /** Where the next piece of text starts in the choice's text. */
  #base: number;
  /** Bytes of a character split across tokens wait here for the rest of it. */
  readonly #decoder = new TextDecoder("utf-8");

  /** @param offset where the first piece of text starts in the choice's text. */
  constructor(offset = 0) {
    this.#base = offset;
  }

  /** An empty object to add tokens to. */
  static empty(): LegacyLogprobs {
    return { tokens: [], token_logprobs: [], top_logprobs: [], text_offset: [] };
  }

  /** Adds `tokens`, which produced `text` (the next piece of the choice's text), to `into`. */
  append(into: LegacyLogprobs, tokens: readonly LegacyToken[], text: string): void {
    let cursor = 0;
    for (const token of tokens) {
      into.tokens.push(token.text);
      into.token_logprobs.push(token.logprob);
      into.top_logprobs.push(token.top);
      into.text_offset.push(this.#base + cursor);
      const added = token.bytes ? this.#decoder.decode(Uint8Array.from(token.bytes), { stream: true }) : token.text;
      cursor += addedLength(text, cursor, added);
    }
    this.#base += text.length;
  }
}

/** How far `piece` (a token's decoded text) moves through `text` from `cursor`: 0 where the text does not hold it. */
function addedLength(text: string, cursor: number, piece: string): number {
  if (piece === "") return 0;
  if (text.startsWith(piece, cursor)) return piece.length;
  // A word-initial space the decoded text drops (SentencePiece's first token).
  if (piece.startsWith(" ") && text.startsWith(piece.slice(1), cursor)) return piece.length - 1;
  return 0;
}
