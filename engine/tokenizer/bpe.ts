// Byte-level BPE ("gpt2" vocabularies): within each pre-tokenized word, repeatedly apply the lowest-ranked merge rule
// among adjacent symbol pairs. Follows llama.cpp's llm_tokenizer_bpe_session, including its tie-breaking (leftmost
// pair first) and what it does with a symbol that is not a token (emit its ASCII bytes as tokens, drop the rest).
import { mergeSymbols } from "./merge-symbols.js";
import { utf8Bytes } from "./unicode.js";

/** What the merge loop needs from a vocabulary. */
export interface BpeVocabulary {
  readonly tokenToId: ReadonlyMap<string, number>;
  /** "left right" -> rank; lower ranks merge first. */
  readonly mergeRanks: ReadonlyMap<string, number>;
  /** A word that is itself a token is emitted whole (Llama 3 style). */
  readonly ignoreMerges: boolean;
}

/** Tokenizes one byte-level-encoded word (e.g. "Ġhello"), appending ids to `out`. */
export function tokenizeBpeWord(word: string, vocabulary: BpeVocabulary, out: number[]): void {
  if (word.length === 0) return;
  if (vocabulary.ignoreMerges) {
    const whole = vocabulary.tokenToId.get(word);
    if (whole !== undefined) {
      out.push(whole);
      return;
    }
  }
  // Byte-level characters are all single UTF-16 units, so each symbol starts as one character.
  const widths = new Array<number>(word.length).fill(1);
  for (const piece of mergeSymbols(word, widths, (left, right) => vocabulary.mergeRanks.get(`${left} ${right}`))) {
    const id = vocabulary.tokenToId.get(piece);
    if (id !== undefined) {
      out.push(id);
      continue;
    }
    // NOTE: llama.cpp looks up each UTF-8 byte of the piece as a one-byte string: only ASCII bytes can match.
    for (const byte of utf8Bytes(piece)) {
      if (byte >= 0x80) continue;
      const single = vocabulary.tokenToId.get(String.fromCharCode(byte));
      if (single !== undefined) out.push(single);
    }
  }
}
