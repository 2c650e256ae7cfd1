// Token log-probabilities in OpenAI's shape, which chat completions (`choices[].logprobs.content`) and the Responses
// API (`output_text.logprobs`) share: each token's text, its log-probability, its bytes, and the most likely tokens at
// its position, each the same way. A token's text is its own piece: a piece that is not whole UTF-8 (part of a
// character split over tokens) writes its bytes as `\xNN`, as OpenAI writes them; `bytes` always has them exactly.
import type { TokenLogprob } from "../../../engine/request.js";

/** One alternative at a token's position. */
export interface OpenAiTopLogprob {
  token: string;
  logprob: number;
  bytes: number[] | null;
}

/** One generated token. */
export interface OpenAiTokenLogprob extends OpenAiTopLogprob {
  top_logprobs: OpenAiTopLogprob[];
}

/**
 * The lowest log-probability written: a token the model rules out entirely has -Infinity, which JSON cannot hold;
 * OpenAI writes -9999.0 for those.
 */
const LOWEST_LOGPROB = -9999;

/** The engine's log-probabilities of some tokens as OpenAI writes them. */
export function wireLogprobs(logprobs: readonly TokenLogprob[]): OpenAiTokenLogprob[] {
  return logprobs.map((entry) => ({ ...wireAlternative(entry), top_logprobs: entry.top.map(wireAlternative) }));
}

function wireAlternative(entry: { token: number; logprob: number; bytes?: number[] }): OpenAiTopLogprob {
  return { token: entry.bytes ? tokenText(entry.bytes) : "", logprob: Math.max(entry.logprob, LOWEST_LOGPROB), bytes: entry.bytes ?? null };
}

/** A token's piece as text: its whole UTF-8 characters as they are, every other byte as `\xNN`. */
export function tokenText(bytes: readonly number[]): string {
  let text = "";
  let index = 0;
  while (index < bytes.length) {
    const length = sequenceLength(bytes, index);
    if (length === 0) {
      text += `\\x${bytes[index]!.toString(16).padStart(2, "0")}`;
      index += 1;
    } else {
      text += DECODER.decode(Uint8Array.from(bytes.slice(index, index + length)));
      index += length;
    }
  }
  return text;
}

const DECODER = new TextDecoder("utf-8", { fatal: true });

/** The length of the whole, valid UTF-8 character at `index`, or 0 when the bytes there are not one. */
function sequenceLength(bytes: readonly number[], index: number): number {
  const lead = bytes[index]!;
  const length = lead < 0x80 ? 1 : lead >= 0xc2 && lead <= 0xdf ? 2 : lead >= 0xe0 && lead <= 0xef ? 3 : lead >= 0xf0 && lead <= 0xf4 ? 4 : 0;
  if (length === 0 || index + length > bytes.length) return 0;
  for (let offset = 1; offset < length; offset++) if ((bytes[index + offset]! & 0xc0) !== 0x80) return 0;
  try {
    // Overlong forms and surrogates pass the checks above; the decoder refuses them.
    DECODER.decode(Uint8Array.from(bytes.slice(index, index + length)));
    return length;
  } catch {
    return 0;
  }
}
