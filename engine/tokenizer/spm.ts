// SentencePiece-style BPE ("llama" vocabularies): starting from single characters, repeatedly merge the adjacent pair
// whose concatenation is the highest-scoring vocabulary token; characters left unmatched fall back to <0xXX> byte
// tokens. Follows llama.cpp's llm_tokenizer_spm_session, including its tie-breaking (leftmost pair first).
import { mergeSymbols } from "./merge-symbols.js";
import { codepointWidths, utf8Bytes } from "./unicode.js";

/** What the SentencePiece merge loop needs from a vocabulary. */
export interface SpmVocabulary {
  readonly tokenToId: ReadonlyMap<string, number>;
  readonly scores: Float32Array;
  /** Token for each byte value, used for characters no token covers; undefined where the vocabulary has none. */
  readonly byteTokens: ReadonlyArray<number | undefined>;
  /** Called for a byte with no token (llama.cpp aborts there); returns the id to emit instead. */
  missingByte(byte: number): number;
}

/**
 * Tokenizes text that has already had spaces replaced by U+2581 (and the prefix space added), appending ids to `out`.
 */
export function tokenizeSpm(text: string, vocabulary: SpmVocabulary, out: number[]): void {
  if (text.length === 0) return;
  // One symbol per character; a surrogate pair is one character.
  const widths = codepointWidths(text);
  // Higher-scoring merged tokens merge first: negate the score into a lower-first priority.
  const priority = (left: string, right: string): number | undefined => {
    const id = vocabulary.tokenToId.get(left + right);
    return id === undefined ? undefined : -vocabulary.scores[id];
  };
  for (const piece of mergeSymbols(text, widths, priority)) {
    const id = vocabulary.tokenToId.get(piece);
    if (id !== undefined) {
      out.push(id);
      continue;
    }
    for (const byte of utf8Bytes(piece)) out.push(vocabulary.byteTokens[byte] ?? vocabulary.missingByte(byte));
  }
}
