// SentencePiece-style BPE ("llama" vocabularies): starting from single characters, repeatedly merge the adjacent pair
// whose concatenation is the highest-scoring vocabulary token; characters left unmatched fall back to <0xXX> byte
// tokens. Follows llama.cpp's llm_tokenizer_spm_session, including its tie-breaking (leftmost pair first).
import { PriorityQueue } from "./priority-queue.js";
import { utf8Bytes } from "./unicode.js";

/** What the SentencePiece merge loop needs from a vocabulary. */
export interface SpmVocabulary {
  readonly tokenToId: ReadonlyMap<string, number>;
  readonly scores: Float32Array;
  /** Token for each byte value, used for characters no token covers; undefined where the vocabulary has none. */
  readonly byteTokens: ReadonlyArray<number | undefined>;
  /** Called for a byte with no token (llama.cpp aborts there); returns the id to emit instead. */
  missingByte(byte: number): number;
}

interface Bigram {
  left: number;
  right: number;
  score: number;
  /** Length (UTF-16 units) of the merged text, to recognise pairs that went stale. */
  size: number;
}

const bigramFirst = (a: Bigram, b: Bigram): boolean => a.score > b.score || (a.score === b.score && a.left < b.left);

/**
 * Tokenizes text that has already had spaces replaced by U+2581 (and the prefix space added), appending ids to `out`.
 */
export function tokenizeSpm(text: string, vocabulary: SpmVocabulary, out: number[]): void {
  if (text.length === 0) return;
  // One symbol per character; a surrogate pair is one character.
  const starts: number[] = [];
  const lengths: number[] = [];
  for (let i = 0; i < text.length; ) {
    const unit = text.charCodeAt(i);
    const width = unit >= 0xd800 && unit <= 0xdbff && i + 1 < text.length ? 2 : 1;
    starts.push(i);
    lengths.push(width);
    i += width;
  }
  const count = starts.length;
  const previous = new Int32Array(count);
  const next = new Int32Array(count);
  for (let i = 0; i < count; i++) {
    previous[i] = i - 1;
    next[i] = i + 1 < count ? i + 1 : -1;
  }

  const queue = new PriorityQueue<Bigram>(bigramFirst);
  const tryAddBigram = (left: number, right: number): void => {
    if (left === -1 || right === -1) return;
    const size = lengths[left] + lengths[right];
    const id = vocabulary.tokenToId.get(text.slice(starts[left], starts[left] + size));
    if (id === undefined) return;
    queue.push({ left, right, score: vocabulary.scores[id], size });
  };

  for (let i = 1; i < count; i++) tryAddBigram(i - 1, i);

  for (let bigram = queue.pop(); bigram !== undefined; bigram = queue.pop()) {
    const { left, right } = bigram;
    // A pair whose symbols have since been merged elsewhere is stale.
    if (lengths[left] === 0 || lengths[right] === 0 || lengths[left] + lengths[right] !== bigram.size) continue;
    lengths[left] += lengths[right];
    lengths[right] = 0;
    next[left] = next[right];
    if (next[right] >= 0) previous[next[right]] = left;
    tryAddBigram(previous[left], left);
    tryAddBigram(left, next[left]);
  }

  for (let i = 0; i !== -1; i = next[i]) {
    const piece = text.slice(starts[i], starts[i] + lengths[i]);
    const id = vocabulary.tokenToId.get(piece);
    if (id !== undefined) {
      out.push(id);
      continue;
    }
    for (const byte of utf8Bytes(piece)) out.push(vocabulary.byteTokens[byte] ?? vocabulary.missingByte(byte));
  }
}
