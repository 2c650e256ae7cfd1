// Encoding under a token limit: splitting a window at a time gives exactly the words of splitting in one go, an
// encode under its limit gives exactly the unlimited tokens, and an encode past it stops early (it splits about the
// limit's worth of text, not the whole of it).
import { describe, expect, it } from "vitest";
import { seededRandom } from "../testing/seeded-random.js";
import { OversizedWordError, TokenLimitError } from "./errors.js";
import { tokenizerFromHuggingFace } from "./huggingface.js";
import { PRE_TOKENIZERS, WordSplitter } from "./pre-tokenizers.js";
import { FIXTURES, failIfMissing, missingFixtureReason, skipOutsideCi, titled } from "../testing/fixtures.js";
import { MAX_LIMITED_WORD_UNITS, type Tokenizer } from "./tokenizer.js";
import { tokenizerFromLlama2c } from "./llama2c.js";
import { spmPieces, windowedWords } from "./windowed-split.js";
import { splitUnitsDuring } from "../testing/split-spy.js";

/** Pieces that exercise every branch of the split regexes: contractions, digit runs, blanks before words, CJK, emoji, case changes. */
const PIECES = ["a", "word", "Hello", " ", "  ", "   ", "\n", "\n\n", "\t", "\r\n", "'s", "'re", "'ll", "'D", "123", "4567", "9", ".", "!!", "...", "$", "+=", "<|x|>", "é", "e\u0301", "日本語", "한국어", "😀", "👩‍💻", "\u00a0", "_", "-", "Ünïcödé", "x1y2", "XML", "iPhone", "/"];

function randomText(random: () => number, pieces: number): string {
  let text = "";
  for (let i = 0; i < pieces; i++) text += PIECES[Math.floor(random() * PIECES.length)];
  return text;
}

describe("windowedWords", () => {
  const specs = new Map([...PRE_TOKENIZERS.values()].map((spec) => [spec.regexes.join("\u0000"), spec.regexes]));
  for (const regexes of specs.values()) {
    it(`splits as one split does, for every window size (${regexes.length} regexes: ${regexes.at(-1)!.slice(0, 30)}...)`, () => {
      const splitter = new WordSplitter(regexes);
      const random = seededRandom(regexes.join("").length);
      for (let round = 0; round < 60; round++) {
        const text = randomText(random, 5 + Math.floor(random() * 120));
        const whole = splitter.split(text);
        for (const window of [1, 2, 3, 5, 8, 13, 40]) expect([...windowedWords(splitter, text, window)], `window ${window}: ${JSON.stringify(text)}`).toEqual(whole);
      }
    });
  }
});

function tokenizerGroup(name: string, directory: string) {
  const reason = missingFixtureReason(directory);
  describe.skipIf(skipOutsideCi(reason))(titled(`encode with maxTokens (${name})`, reason), () => {
    let tokenizer: Tokenizer;
    it("loads", async () => {
      failIfMissing(reason);
      tokenizer = await tokenizerFromHuggingFace(directory);
    });

    it("under its limit gives exactly the unlimited tokens; one token short of the count, it throws", () => {
      const random = seededRandom(7);
      for (let round = 0; round < 30; round++) {
        // Long enough to span several split windows.
        const text = randomText(random, 2000 + Math.floor(random() * 8000));
        const tokens = tokenizer.encode(text, { parseSpecial: true });
        expect(tokenizer.encode(text, { parseSpecial: true, maxTokens: tokens.length })).toEqual(tokens);
        expect(() => tokenizer.encode(text, { parseSpecial: true, maxTokens: tokens.length - 1 })).toThrow(TokenLimitError);
      }
    });

    it("stops after about the limit's worth of text instead of splitting a huge one", async () => {
      const text = "The quick brown fox jumps over the lazy dog. ".repeat(180_000); // 8.1 MB
      // 4096 tokens of this text are about 20 KB; a split window is 16 K units, and the last one is split again.
      expect(await splitUnitsDuring(tokenizer, () => expect(() => tokenizer.encode(text, { maxTokens: 4096 })).toThrow(TokenLimitError))).toBeLessThan(64 * 1024);
      // Past the longest token's bound, nothing is split at all.
      expect(await splitUnitsDuring(tokenizer, () => expect(() => tokenizer.encode(text, { maxTokens: 100 })).toThrow(TokenLimitError))).toBe(0);
    });
  });
}

tokenizerGroup("SmolLM2, smollm pre-tokenizer", FIXTURES.smollm2Directory);

const qwenReason = missingFixtureReason(FIXTURES.qwen3Directory);
describe.skipIf(skipOutsideCi(qwenReason))(titled("encode with maxTokens: one huge word", qwenReason), () => {
  it("refuses a word past 64 K units under a limit, having split about twice that, not the whole text", async () => {
    failIfMissing(qwenReason);
    const tokenizer = await tokenizerFromHuggingFace(FIXTURES.qwen3Directory);
    const word = "a".repeat(4_000_000);
    const units = await splitUnitsDuring(tokenizer, () => expect(() => tokenizer.encode(word, { maxTokens: 32_767 })).toThrow(OversizedWordError));
    expect(units).toBeLessThan(8 * MAX_LIMITED_WORD_UNITS);
    // A word within the bound is tokenized as without a limit.
    const fits = "ab".repeat(MAX_LIMITED_WORD_UNITS / 4);
    expect(tokenizer.encode(fits, { maxTokens: 32_767 })).toEqual(tokenizer.encode(fits));
  });
});

const llamaReason = missingFixtureReason(FIXTURES.llama2Tokenizer);
describe.skipIf(skipOutsideCi(llamaReason))(titled("encode with maxTokens: SentencePiece (Llama 2)", llamaReason), () => {
  it("cuts long text only where no token can span the cut: pieces' tokens are the whole text's, at every window", async () => {
    failIfMissing(llamaReason);
    const tokenizer = await tokenizerFromLlama2c(FIXTURES.llama2Tokenizer);
    const random = seededRandom(5);
    for (let round = 0; round < 20; round++) {
      const text = randomText(random, 200 + Math.floor(random() * 400)).replaceAll(" ", "\u2581");
      const whole = tokenizer.encode(text.replaceAll("\u2581", " "));
      for (const window of [3, 17, 64]) {
        const pieces = spmPieces(`\u2581${text}`, window);
        expect(pieces.join(""), "pieces cover the text").toBe(`\u2581${text}`);
        for (const piece of pieces.slice(1)) expect(piece.startsWith("\u2581") && piece.length > 0).toBe(true);
      }
      expect(tokenizer.encode(text.replaceAll("\u2581", " "), { maxTokens: whole.length })).toEqual(whole);
    }
    // Past a window, a limited encode goes piece by piece, and still matches.
    const long = randomText(seededRandom(9), 30_000);
    const tokens = tokenizer.encode(long);
    expect(long.length).toBeGreaterThan(2 * 16 * 1024);
    expect(tokenizer.encode(long, { maxTokens: tokens.length })).toEqual(tokens);
    expect(() => tokenizer.encode(long, { maxTokens: tokens.length - 1 })).toThrow(TokenLimitError);
  });
});
tokenizerGroup("Qwen3, qwen2 pre-tokenizer", FIXTURES.qwen3Directory);
