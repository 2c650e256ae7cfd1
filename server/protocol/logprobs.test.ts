// Which events carry which tokens' log-probabilities: the first event with text after they arrive; none for calls.
import { describe, expect, it } from "vitest";
import type { TokenLogprob } from "../../engine/request.js";
import { LogprobAttribution } from "./logprobs.js";

const token = (id: number): TokenLogprob => ({ token: id, logprob: -1, top: [] });

describe("LogprobAttribution", () => {
  it("holds tokens whose text is held back and gives them to the next event with text", () => {
    const attribution = new LogprobAttribution();
    attribution.add([token(1)]);
    expect(attribution.attach([])).toEqual([]);
    attribution.add([token(2)]);
    expect(attribution.attach([{ type: "thinking", text: "" }, { type: "text", text: "ab" }])).toEqual([{ type: "thinking", text: "" }, { type: "text", text: "ab", logprobs: [token(1), token(2)] }]);
    attribution.add([token(3)]);
    expect(attribution.attach([{ type: "text", text: "c" }])).toEqual([{ type: "text", text: "c", logprobs: [token(3)] }]);
  });

  it("drops the tokens that wrote a tool call, and what is left at the end", () => {
    const attribution = new LogprobAttribution();
    attribution.add([token(1)]);
    attribution.attach([{ type: "tool_call_delta", index: 0, arguments: "{" }]);
    expect(attribution.attach([{ type: "text", text: "x" }])).toEqual([{ type: "text", text: "x" }]);
    attribution.add([token(2)]);
    attribution.attach([], true);
    expect(attribution.attach([{ type: "text", text: "y" }])).toEqual([{ type: "text", text: "y" }]);
  });
});
