// Token log-probabilities on the wire: a token's text from its bytes (whole UTF-8 as is, a partial sequence as \xNN),
// -Infinity written as OpenAI writes it.
import { describe, expect, it } from "vitest";
import { tokenText, wireLogprobs } from "./logprobs.js";

describe("tokenText", () => {
  it.each([
    [[0x48, 0x69], "Hi"],
    [[0xe2, 0x82, 0xac], "€"],
    [[0xe2, 0x82], "\\xe2\\x82"],
    [[0x20, 0xf0, 0x9f], " \\xf0\\x9f"],
    [[0x98, 0x80, 0x21], "\\x98\\x80!"],
    [[0xc0, 0xaf], "\\xc0\\xaf"],
    [[], ""],
  ])("%j -> %j", (bytes, text) => {
    expect(tokenText(bytes)).toBe(text);
  });
});

describe("wireLogprobs", () => {
  it("writes each token and its alternatives with text, logprob and bytes; -Infinity as -9999", () => {
    expect(wireLogprobs([{ token: 1, logprob: -0.5, bytes: [0x61], top: [{ token: 1, logprob: -0.5, bytes: [0x61] }, { token: 2, logprob: -Infinity, bytes: [0xe2] }] }])).toEqual([
      { token: "a", logprob: -0.5, bytes: [0x61], top_logprobs: [{ token: "a", logprob: -0.5, bytes: [0x61] }, { token: "\\xe2", logprob: -9999, bytes: [0xe2] }] },
    ]);
  });
});
