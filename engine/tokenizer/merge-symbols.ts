// The merge loop shared by both BPE flavours: adjacent symbols of a string merge best-pair-first until no pair
// qualifies, with stale pairs skipped and ties going to the leftmost pair, as llama.cpp's tokenizer sessions do.
import { PriorityQueue } from "./priority-queue.js";

interface Bigram {
  left: number;
  right: number;
  priority: number;
  /** Length of the merged text, to recognise pairs that went stale. */
  size: number;
}

const bigramFirst = (a: Bigram, b: Bigram): boolean => a.priority < b.priority || (a.priority === b.priority && a.left < b.left);

/**
 * Merges the symbols of `text` (symbol i spans `widths[i]` UTF-16 units, in order) and returns the final pieces in
 * order. `priority(left, right)` gives a pair's priority, lower merging first, or undefined when it cannot merge.
 */
export function mergeSymbols(text: string, widths: readonly number[], priority: (left: string, right: string) => number | undefined): string[] {
  const count = widths.length;
  const starts = new Int32Array(count);
  const lengths = Int32Array.from(widths);
  const previous = new Int32Array(count);
  const next = new Int32Array(count);
  for (let i = 0, at = 0; i < count; at += widths[i], i++) {
    starts[i] = at;
    previous[i] = i - 1;
    next[i] = i + 1 < count ? i + 1 : -1;
  }
  const piece = (i: number) => text.slice(starts[i], starts[i] + lengths[i]);

  const queue = new PriorityQueue<Bigram>(bigramFirst);
  const addBigram = (left: number, right: number): void => {
    if (left === -1 || right === -1) return;
    const value = priority(piece(left), piece(right));
    if (value !== undefined) queue.push({ left, right, priority: value, size: lengths[left] + lengths[right] });
  };
  for (let i = 1; i < count; i++) addBigram(i - 1, i);

  for (let bigram = queue.pop(); bigram !== undefined; bigram = queue.pop()) {
    const { left, right } = bigram;
    // A pair whose symbols have since been merged elsewhere is stale.
    if (lengths[left] === 0 || lengths[right] === 0 || lengths[left] + lengths[right] !== bigram.size) continue;
    lengths[left] += lengths[right];
    lengths[right] = 0;
    next[left] = next[right];
    if (next[right] >= 0) previous[next[right]] = left;
    addBigram(previous[left], left);
    addBigram(left, next[left]);
  }

  const pieces: string[] = [];
  for (let i = count > 0 ? 0 : -1; i !== -1; i = next[i]) pieces.push(piece(i));
  return pieces;
}
