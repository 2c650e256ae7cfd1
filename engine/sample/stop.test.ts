// Tests for stop sequences matched across streamed text deltas.

import { describe, expect, it } from "vitest";
import { StopSequenceError } from "./errors.js";
import { type StopMatchResult, StopSequenceMatcher } from "./stop.js";

/** Feeds the deltas in order; returns what each push emitted, the stop, and what flush returned. */
function stream(stops: string[], deltas: string[]): { emitted: string[]; stop?: string; flushed: string } {
  const matcher = new StopSequenceMatcher(stops);
  const emitted: string[] = [];
  let stop: string | undefined;
  for (const delta of deltas) {
    const result: StopMatchResult = matcher.push(delta);
    emitted.push(result.text);
    if (result.stop) stop ??= result.stop.sequence;
  }
  return { emitted, stop, flushed: matcher.flush() };
}

describe("StopSequenceMatcher", () => {
  it("finds a stop split over three deltas and emits only what precedes it", () => {
    expect(stream(["<|end|>"], ["Hello <|", "en", "d|> trailing"])).toEqual({
      emitted: ["Hello ", "", ""],
      stop: "<|end|>",
      flushed: "",
    });
  });

  it("holds back only the longest tail that could still become a stop", () => {
    const matcher = new StopSequenceMatcher(["STOP"]);
    expect(matcher.push("aSTxST")).toEqual({ text: "aSTx" }); // "ST" may continue; the earlier "ST" cannot
    expect(matcher.push("O")).toEqual({ text: "" });
    expect(matcher.push("P!")).toEqual({ text: "", stop: { sequence: "STOP" } });
    expect(matcher.stopped).toEqual({ sequence: "STOP" });
  });

  it("emits a partial match once it fails", () => {
    expect(stream(["</answer>"], ["x </ans", "wer", "s>", " y"])).toEqual({
      emitted: ["x ", "", "</answers>", " y"],
      stop: undefined,
      flushed: "",
    });
  });

  it("handles overlapping stops: \"ab\" completes before \"abc\"", () => {
    expect(stream(["abc", "ab"], ["xa", "b", "c"])).toEqual({ emitted: ["x", "", ""], stop: "ab", flushed: "" });
    // Only "abc" listed: "ab" is held, then the match ends the stream.
    expect(stream(["abc"], ["xa", "b", "c"])).toEqual({ emitted: ["x", "", ""], stop: "abc", flushed: "" });
    // "abd" fails to become "abc": everything is released.
    expect(stream(["abc"], ["xa", "b", "d"])).toEqual({ emitted: ["x", "", "abd"], stop: undefined, flushed: "" });
  });

  it("picks the stop that completes first in the text, whatever the chunking", () => {
    const text = "one two three four";
    const stops = ["three", "wo t", "four"];
    for (let size = 1; size <= text.length; size++) {
      const deltas = text.match(new RegExp(`[\\s\\S]{1,${size}}`, "g"))!;
      const result = stream(stops, deltas);
      expect(result.stop).toBe("wo t");
      expect(result.emitted.join("")).toBe("one t");
    }
    // Two stops ending at the same character: the longer (earlier-starting) one wins.
    expect(stream(["bc", "abc"], ["zabcz"])).toEqual({ emitted: ["z"], stop: "abc", flushed: "" });
  });

  it("matches any of several stops", () => {
    expect(stream(["\n\n", "User:", "###"], ["Sure. ", "Us", "er: hi"])).toEqual({
      emitted: ["Sure. ", "", ""],
      stop: "User:",
      flushed: "",
    });
    expect(stream(["\n\n", "User:", "###"], ["a\n", "b#", "##"]).stop).toBe("###");
  });

  it("matches a unicode stop across deltas, including a split surrogate pair", () => {
    expect(stream(["终了🛑"], ["答え：終", "终", "了\ud83d", "\uded1后"])).toEqual({
      emitted: ["答え：終", "", "", ""],
      stop: "终了🛑",
      flushed: "",
    });
    // A dangling high surrogate is held until its pair arrives, even when no stop starts with it.
    expect(stream(["x"], ["a\ud83d", "\ude00b"])).toEqual({ emitted: ["a", "😀b"], stop: undefined, flushed: "" });
  });

  it("flush returns held-back text at the end of the stream", () => {
    expect(stream(["<|im_end|>"], ["done <|im_"])).toEqual({ emitted: ["done "], stop: undefined, flushed: "<|im_" });
  });

  it("returns nothing after a stop", () => {
    const matcher = new StopSequenceMatcher(["."]);
    expect(matcher.push("a.b")).toEqual({ text: "a", stop: { sequence: "." } });
    expect(matcher.push("more")).toEqual({ text: "" });
    expect(matcher.flush()).toBe("");
  });

  it("does not stop on text pushed without matching (minTokens), and later matches only stops ending in new text", () => {
    const matcher = new StopSequenceMatcher(["ab", "abcd"]);
    expect(matcher.push("x ab", false)).toEqual({ text: "x " }); // "ab" held: it may grow into "abcd"
    expect(matcher.push("ab y", false)).toEqual({ text: "abab y" });
    expect(matcher.push("a", false)).toEqual({ text: "" });
    // The held "a" and the new "b" complete "ab": a stop that ends in the new text counts.
    expect(matcher.push("b")).toEqual({ text: "", stop: { sequence: "ab" } });
    const held = new StopSequenceMatcher(["ab", "abcd"]);
    held.push("ab", false);
    // "ab" lies wholly in the held text, pushed before matching: it does not stop; "abcd" completes in the new text.
    expect(held.push("cd!")).toEqual({ text: "", stop: { sequence: "abcd" } });
    const none = new StopSequenceMatcher(["ab", "abcd"]);
    none.push("ab", false);
    expect(none.push("x")).toEqual({ text: "abx" });
  });

  it("passes text straight through without stops", () => {
    expect(stream([], ["a", "b"])).toEqual({ emitted: ["a", "b"], stop: undefined, flushed: "" });
  });

  it("rejects empty and non-string stops, naming the entry", () => {
    expect(() => new StopSequenceMatcher(["ok", ""])).toThrow(StopSequenceError);
    expect(() => new StopSequenceMatcher(["ok", ""])).toThrow(/stop sequence 1: is empty/);
    expect(() => new StopSequenceMatcher([42 as unknown as string])).toThrow(/stop sequence 0: expected a string/);
  });
});
