// Hand-written word splitters for the three pre-tokenizer regexes llama.cpp never runs through a regex engine:
// GPT-2's, Llama 3's and Qwen 2's. Each walks the codepoints of every piece and cuts it into words, reproducing the
// decisions of llama.cpp's hand-written versions (including where they differ from the regex they stand for).
import { CodepointFlag, codepointFlags } from "./unicode.js";

/** Which hand-written splitter a regex maps to. */
export type HandwrittenSplitter = "gpt2" | "llama3" | "qwen2";

/** GPT-2: 's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+ */
export const GPT2_REGEX = "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)";
/** Llama 3, with the case-insensitive group spelled out the way llama.cpp writes it. */
export const LLAMA3_REGEX =
  "(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
/** Llama 3 as written in tokenizer.json files. */
export const LLAMA3_REGEX_ORIGINAL =
  "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
/** Qwen 2 (single digits), as llama.cpp writes it. */
export const QWEN2_REGEX =
  "(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
/** Qwen 2 as written in tokenizer.json files. */
export const QWEN2_REGEX_ORIGINAL =
  "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";

/** The hand-written splitter that stands for a regex, if there is one (llama.cpp matches the regex text exactly). */
export function handwrittenSplitterFor(regex: string): HandwrittenSplitter | undefined {
  if (regex === GPT2_REGEX) return "gpt2";
  if (regex === LLAMA3_REGEX || regex === LLAMA3_REGEX_ORIGINAL) return "llama3";
  if (regex === QWEN2_REGEX) return "qwen2";
  return undefined;
}

const { LETTER, NUMBER, WHITESPACE } = CodepointFlag;
const CR = 0x0d;
const LF = 0x0a;
const APOSTROPHE = 0x27;
const SPACE = 0x20;
/** Stands for "past the end of the piece"; no real codepoint has this value. */
const OUTSIDE = -1;

function asciiLower(codepoint: number): number {
  return codepoint >= 0x41 && codepoint <= 0x5a ? codepoint + 0x20 : codepoint;
}

/**
 * Cuts each piece (given as lengths in codepoints, covering `codepoints` in order) into words with the named
 * splitter, and returns the word lengths.
 */
export function splitHandwritten(kind: HandwrittenSplitter, codepoints: readonly number[], pieces: readonly number[]): number[] {
  const words: number[] = [];
  let pieceStart = 0;
  for (const pieceLength of pieces) {
    const start = pieceStart;
    const end = start + pieceLength;
    pieceStart = end;
    const at = (pos: number): number => (pos >= start && pos < end ? codepoints[pos] : OUTSIDE);
    const flagsAt = (pos: number): number => (pos >= start && pos < end ? codepointFlags(codepoints[pos]) : 0);
    let wordStart = start;
    const emit = (wordEnd: number): void => {
      if (wordEnd > wordStart) words.push(wordEnd - wordStart);
      wordStart = wordEnd;
    };

    let pos = start;
    while (pos < end) {
      const cp = codepoints[pos];
      const flags = codepointFlags(cp);

      // Contractions: 's 't 're 've 'm 'll 'd (case-insensitive except in GPT-2).
      if (cp === APOSTROPHE && pos + 1 < end) {
        const lower = kind === "gpt2" ? (c: number) => c : asciiLower;
        const next = lower(at(pos + 1));
        if (next === 0x73 || next === 0x74 || next === 0x6d || next === 0x64) {
          pos += 2;
          emit(pos);
          continue;
        }
        if (pos + 2 < end) {
          const nextNext = lower(at(pos + 2));
          if ((next === 0x72 && nextNext === 0x65) || (next === 0x76 && nextNext === 0x65) || (next === 0x6c && nextNext === 0x6c)) {
            pos += 3;
            emit(pos);
            continue;
          }
        }
      }

      if (kind === "gpt2") {
        // An optional leading space, then a run of letters, of numbers, or of other non-space characters.
        let probe = cp === SPACE ? flagsAt(pos + 1) : flags;
        if (probe & LETTER || probe & NUMBER) {
          const run = probe & LETTER ? LETTER : NUMBER;
          if (cp === SPACE) pos++;
          while (probe & run) probe = flagsAt(++pos);
          emit(pos);
          continue;
        }
        if (!(probe & (WHITESPACE | LETTER | NUMBER)) && probe !== 0) {
          if (cp === SPACE) pos++;
          while (!(probe & (WHITESPACE | LETTER | NUMBER)) && probe !== 0) probe = flagsAt(++pos);
          emit(pos);
          continue;
        }
        let spaces = 0;
        while (flagsAt(pos + spaces) & WHITESPACE) spaces++;
        if (spaces > 1 && at(pos + spaces) !== OUTSIDE) {
          pos += spaces - 1; // \s+(?!\S): leave the last space to lead the next word
          emit(pos);
          continue;
        }
        if (spaces > 0) {
          pos += spaces;
          emit(pos);
          continue;
        }
        emit(++pos);
        continue;
      }

      // Llama 3 / Qwen 2: [^\r\n\p{L}\p{N}]?\p{L}+
      if (!(cp === CR || cp === LF || flags & NUMBER)) {
        if (flags & LETTER || flagsAt(pos + 1) & LETTER) {
          pos++;
          while (flagsAt(pos) & LETTER) pos++;
          emit(pos);
          continue;
        }
      }
      // \p{N}{1,3} (Llama 3) or \p{N} (Qwen 2)
      if (flags & NUMBER) {
        if (kind === "qwen2") {
          emit(++pos);
          continue;
        }
        let groupStart = pos;
        while (flagsAt(pos) & NUMBER) {
          if (++pos - groupStart >= 3) {
            emit(pos);
            groupStart = pos;
          }
        }
        emit(pos);
        continue;
      }
      // ' ?[^\s\p{L}\p{N}]+[\r\n]*'
      let probe = cp === SPACE ? flagsAt(pos + 1) : flags;
      if (!(probe & (WHITESPACE | LETTER | NUMBER)) && flags !== 0) {
        if (cp === SPACE) pos++;
        while (!(probe & (WHITESPACE | LETTER | NUMBER)) && probe !== 0) probe = flagsAt(++pos);
        let after = at(pos);
        while (after === CR || after === LF) after = at(++pos);
        emit(pos);
        continue;
      }
      // \s*[\r\n]+ , \s+(?!\S) , \s+
      let spaces = 0;
      let afterLastNewline = 0;
      while (flagsAt(pos + spaces) & WHITESPACE) {
        const c = at(pos + spaces);
        if (c === CR || c === LF) afterLastNewline = pos + spaces + 1;
        spaces++;
      }
      if (afterLastNewline > 0) {
        pos = afterLastNewline;
        emit(pos);
        continue;
      }
      if (spaces > 1 && at(pos + spaces) !== OUTSIDE) {
        pos += spaces - 1;
        emit(pos);
        continue;
      }
      if (spaces > 0) {
        pos += spaces;
        emit(pos);
        continue;
      }
      emit(++pos);
    }
  }
  return words;
}
