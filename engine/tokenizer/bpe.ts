// BPE over pre-tokenized words: repeatedly apply the lowest-ranked merge rule among adjacent symbol pairs. Follows
// llama.cpp's llm_tokenizer_bpe_session, including its tie-breaking (leftmost pair first) and what it does with a
// symbol that is not a token: byte-level vocabularies ("gpt2") emit its ASCII bytes as tokens and drop the rest;
// SentencePiece-style ones (Gemma 4) emit a `<0xXX>` token per byte, dropping bytes without one.
import { mergeSymbols } from "./merge-symbols.js";
import { codepointWidths, utf8Bytes } from "./unicode.js";

/** What the merge loop needs from a vocabulary. */
export interface BpeVocabulary {
  readonly tokenToId: ReadonlyMap<string, number>;
  /** "left right" -> rank; lower ranks merge first. */
  readonly mergeRanks: ReadonlyMap<string, number>;
  /** A word that is itself a token is emitted whole (Llama 3 style). */
  readonly ignoreMerges: boolean;
  /**
   * Words are raw text (spaces already U+2581) whose symbols start as code points, and unknown bytes fall back to
   * `byteTokens`; otherwise words are byte-level encoded, one symbol per character.
   */
  readonly rawUtf8: boolean;
  /** A word made only of newlines that is itself a token is emitted whole (Gemma 4). */
  readonly wholeNewlineRuns: boolean;
  /** The `<0xXX>` token of each byte value, where the vocabulary has one (used when `rawUtf8`). */
  readonly byteTokens: ReadonlyArray<number | undefined>;
}

const NEWLINES_ONLY = /^\n+$/;

/** Tokenizes one word (byte-level encoded, e.g. "Ġhello", or raw with `rawUtf8`), appending ids to `out`. */
export function tokenizeBpeWord(word: string, vocabulary: BpeVocabulary, out: number[]): void {
  if (word.length === 0) return;
  if (vocabulary.ignoreMerges || (vocabulary.wholeNewlineRuns && NEWLINES_ONLY.test(word))) {
    const whole = vocabulary.tokenToId.get(word);
    if (whole !== undefined) {
      out.push(whole);
      return;
    }
  }
  for (const piece of mergeSymbols(word, vocabulary.rawUtf8 ? codepointWidths(word) : new Array<number>(word.length).fill(1), (left, right) =>
    vocabulary.mergeRanks.get(`${left} ${right}`),
  )) {
    const id = vocabulary.tokenToId.get(piece);
    if (id !== undefined) {
      out.push(id);
      continue;
    }
    for (const byte of utf8Bytes(piece)) {
      if (vocabulary.rawUtf8) {
        const token = vocabulary.byteTokens[byte];
        if (token !== undefined) out.push(token);
        continue;
      }
      // NOTE: llama.cpp looks up each UTF-8 byte of the piece as a one-byte string: only ASCII bytes can match.
      if (byte >= 0x80) continue;
      const single = vocabulary.tokenToId.get(String.fromCharCode(byte));
      if (single !== undefined) out.push(single);
    }
  }
}
