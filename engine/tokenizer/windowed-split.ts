// Splits a long text into pre-tokenizer words a window at a time, so that a caller who stops early (a token limit)
// pays for the words it used, not for the whole text.
import type { WordSplitter } from "./pre-tokenizers.js";

/** Characters (UTF-16 units) split at a time. */
export const SPLIT_WINDOW_UNITS = 16 * 1024;

/**
 * The words of `text`, as `splitter.split(text)` gives them, produced window by window.
 *
 * NOTE: a window's last two words are not trusted: where the window ends, a word may be cut, and the pre-tokenizer
 * regexes look one character ahead (`\s+(?!\S)`), which can change the word before it. They are split again at the
 * start of the next window. A window that holds fewer than three words doubles until it holds more or reaches the
 * end of the text; past `longestWord` units it stops there and yields the window itself, which then holds a word
 * longer than `longestWord` (a caller that refuses such words need not split the rest). The text must be well formed
 * (no lone surrogates); windows never cut a surrogate pair.
 */
export function* windowedWords(splitter: WordSplitter, text: string, windowUnits = SPLIT_WINDOW_UNITS, longestWord = Number.POSITIVE_INFINITY): Generator<string> {
  let start = 0;
  let window = windowUnits;
  while (start < text.length) {
    let end = Math.min(text.length, start + window);
    if (end < text.length && isHighSurrogate(text.charCodeAt(end - 1))) end--;
    const words = splitter.split(text.slice(start, end));
    const trusted = end === text.length ? words.length : words.length - 2;
    if (trusted <= 0) {
      // At most two words in more than twice the longest: one of them is longer than that.
      if (end - start > 2 * longestWord) {
        yield text.slice(start, end);
        return;
      }
      window *= 2;
      continue;
    }
    for (let i = 0; i < trusted; i++) {
      start += words[i].length;
      yield words[i];
    }
    window = windowUnits;
  }
}

function isHighSurrogate(unit: number): boolean {
  return unit >= 0xd800 && unit <= 0xdbff;
}

/**
 * SentencePiece text ("▁" for spaces) in pieces of about {@link SPLIT_WINDOW_UNITS}, each cut just before a "▁" that
 * follows another character. Only for vocabularies in which no token spans such a cut (Tokenizer.spmCutsAtSpaces):
 * then the pieces' tokens, concatenated, are the whole text's. A piece without such a cut runs on to the next one.
 */
export function spmPieces(text: string, windowUnits = SPLIT_WINDOW_UNITS): string[] {
  const pieces: string[] = [];
  let start = 0;
  while (text.length - start > windowUnits) {
    let cut = start + windowUnits;
    while (cut < text.length && !(text.charCodeAt(cut) === SPACE_MARK && text.charCodeAt(cut - 1) !== SPACE_MARK)) cut++;
    if (cut >= text.length) break;
    pieces.push(text.slice(start, cut));
    start = cut;
  }
  pieces.push(text.slice(start));
  return pieces;
}

/** SentencePiece's "▁" (U+2581). */
const SPACE_MARK = 0x2581;
