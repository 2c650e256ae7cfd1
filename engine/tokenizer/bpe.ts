// Byte-level BPE ("gpt2" vocabularies): within each pre-tokenized word, repeatedly apply the lowest-ranked merge rule
// among adjacent symbol pairs. Follows llama.cpp's llm_tokenizer_bpe_session, including its tie-breaking (leftmost
// pair first) and what it does with a symbol that is not a token (emit its ASCII bytes as tokens, drop the rest).
import { PriorityQueue } from "./priority-queue.js";
import { utf8Bytes } from "./unicode.js";

/** What the merge loop needs from a vocabulary. */
export interface BpeVocabulary {
  readonly tokenToId: ReadonlyMap<string, number>;
  /** "left right" -> rank; lower ranks merge first. */
  readonly mergeRanks: ReadonlyMap<string, number>;
  /** A word that is itself a token is emitted whole (Llama 3 style). */
  readonly ignoreMerges: boolean;
}

interface Bigram {
  left: number;
  right: number;
  rank: number;
  /** Length of the merged text, to recognise pairs that went stale. */
  size: number;
}

const bigramFirst = (a: Bigram, b: Bigram): boolean => a.rank < b.rank || (a.rank === b.rank && a.left < b.left);

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
  // Byte-level characters are all single UTF-16 units, so symbol i starts as character i.
  const count = word.length;
  const lengths = new Int32Array(count).fill(1);
  const previous = new Int32Array(count);
  const next = new Int32Array(count);
  for (let i = 0; i < count; i++) {
    previous[i] = i - 1;
    next[i] = i + 1 < count ? i + 1 : -1;
  }

  const queue = new PriorityQueue<Bigram>(bigramFirst);
  const addBigram = (left: number, right: number): void => {
    if (left === -1 || right === -1) return;
    const rank = vocabulary.mergeRanks.get(`${word.slice(left, left + lengths[left])} ${word.slice(right, right + lengths[right])}`);
    if (rank === undefined) return;
    queue.push({ left, right, rank, size: lengths[left] + lengths[right] });
  };

  for (let i = 1; i < count; i++) addBigram(i - 1, i);

  for (let bigram = queue.pop(); bigram !== undefined; bigram = queue.pop()) {
    const { left, right } = bigram;
    if (lengths[left] === 0 || lengths[right] === 0 || lengths[left] + lengths[right] !== bigram.size) continue;
    lengths[left] += lengths[right];
    lengths[right] = 0;
    next[left] = next[right];
    if (next[right] >= 0) previous[next[right]] = left;
    addBigram(previous[left], left);
    addBigram(left, next[left]);
  }

  for (let i = 0; i !== -1; i = next[i]) {
    const piece = word.slice(i, i + lengths[i]);
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
