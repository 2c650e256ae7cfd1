// The legacy logprobs object's text_offset: where the text each token adds starts in the choice's text, aligned by
// the tokens' bytes, for tokens that add nothing (BOS), characters split across tokens, a dropped word-initial space,
// and pieces of text that arrive one after another (a stream).
import { describe, expect, it } from "vitest";
import type { TokenLogprob } from "../../../engine/request.js";
import { LegacyLogprobsBuilder, scoredToken, unscoredToken } from "./logprobs.js";

const utf8 = (text: string) => [...Buffer.from(text, "utf8")];
const scored = (token: number, bytes: number[]): TokenLogprob => ({ token, logprob: -1, bytes, top: [] });

describe("legacy text_offset", () => {
  it("gives BOS no text and drops the word-initial space SentencePiece's first piece holds", () => {
    const into = LegacyLogprobsBuilder.empty();
    new LegacyLogprobsBuilder(0).append(into, [unscoredToken(1, utf8("<s>")), scoredToken(scored(9, utf8(" Once"))), scoredToken(scored(10, utf8(" upon")))], "Once upon");
    expect(into.tokens).toEqual(["<s>", " Once", " upon"]);
    expect(into.text_offset).toEqual([0, 0, 4]);
  });

  it("counts a character split over byte tokens once, where it starts", () => {
    const bytes = utf8("日本");
    const into = LegacyLogprobsBuilder.empty();
    new LegacyLogprobsBuilder(5).append(into, bytes.map((byte, i) => scoredToken(scored(100 + i, [byte]))), "日本");
    expect(into.tokens[0]).toBe("bytes:\\xe6");
    expect(into.text_offset).toEqual([5, 5, 5, 6, 6, 6]);
  });

  it("carries a split character and the offsets across pieces of text, as a stream brings them", () => {
    const builder = new LegacyLogprobsBuilder(10);
    const first = LegacyLogprobsBuilder.empty();
    const second = LegacyLogprobsBuilder.empty();
    const euro = utf8("€");
    // "a" and the euro sign's first byte come first; the text holds "a" only until the character completes.
    builder.append(first, [scoredToken(scored(1, utf8("a"))), scoredToken(scored(2, euro.slice(0, 1)))], "a");
    builder.append(second, [scoredToken(scored(3, euro.slice(1))), scoredToken(scored(4, utf8("b")))], "€b");
    expect(first.text_offset).toEqual([10, 11]);
    expect(second.text_offset).toEqual([11, 12]);
  });

  it("never runs past the text for a piece the text does not hold", () => {
    const into = LegacyLogprobsBuilder.empty();
    new LegacyLogprobsBuilder(0).append(into, [scoredToken(scored(1, utf8("<|im_end|>"))), scoredToken(scored(2, utf8("x")))], "x");
    expect(into.text_offset).toEqual([0, 0]);
  });
});
