// A Gemma 4 model's output format through the protocol: calls constrained in its notation (after the thought channel
// when thinking is on), the thinking budget closing the channel, and the reader splitting the thought channel from
// the answer and taking calls out.
import { describe, expect, it } from "vitest";
import { constraintSpecOf } from "./constraint.js";
import type { InternalEvent, InternalRequest } from "./internal.js";
import { outputReaderOf, toEngineRequest } from "./run.js";

const TOOL = { name: "get_time", parameters: { type: "object", properties: { zone: { type: "string" } } } };
const request = (thinking: boolean, tools = true): InternalRequest => ({
  format: "openai", model: "m", messages: [{ role: "user", content: "Time?" }], sampling: {}, stop: [], stream: true,
  includeUsage: false, thinking: thinking ? { enabled: true, budgetTokens: 64 } : { enabled: false }, autoCompaction: true, ...(tools ? { tools: [TOOL] } : {}),
});
const FORMAT = { syntax: "gemma4", thinkTags: { open: "<|channel>thought", close: "<channel|>" } } as const;

/** The events of `text` read one character at a time (or in the `deltas` given). */
function events(thinking: boolean, text: string, tools = true, deltas: string[] = [...text]): InternalEvent[] {
  const reader = outputReaderOf(request(thinking, tools), FORMAT);
  return [...deltas.flatMap((delta) => reader.push(delta)), ...reader.flush(false)];
}

const joined = (read: InternalEvent[], type: "thinking" | "text") => read.filter((event) => event.type === type).map((event) => (event as { text: string }).text).join("");

describe("a Gemma 4 model's output format", () => {
  it("constrains calls to Gemma 4's notation, the thought channel first only with thinking on", () => {
    expect(constraintSpecOf(request(false), FORMAT)).toEqual({ format: { type: "gemma4_calls", tools: [TOOL], choice: "auto" } });
    // The channel is optional, as llama.cpp's grammar has it: the model may answer or call without opening it.
    expect(constraintSpecOf(request(true), FORMAT)).toEqual({ format: { type: "gemma4_calls", tools: [TOOL], choice: "auto" }, thinking: { ...FORMAT.thinkTags, optional: true } });
    expect(toEngineRequest("r", request(true), FORMAT).thinkingBudget).toEqual({ tokens: 64, ...FORMAT.thinkTags });
  });

  it("reads the thought channel as reasoning (whatever the thinking setting) and calls as tool calls", () => {
    const read = events(true, `<|channel>thought\nThe user wants the time.<channel|>Checking.<|tool_call>call:get_time{zone:<|"|>CET<|"|>}<tool_call|>`);
    expect(joined(read, "thinking")).toBe("The user wants the time.");
    expect(joined(read, "text")).toBe("Checking.");
    expect(read.at(-1)).toMatchObject({ type: "tool_call", name: "get_time", arguments: { zone: "CET" }, argumentsText: '{"zone":"CET"}' });
    const off = events(false, "<|channel>thought\nHm.<channel|>Hi.", false);
    expect(joined(off, "thinking")).toBe("Hm.");
    expect(joined(off, "text")).toBe("Hi.");
    // An empty channel again at the end of the answer is markup, as llama.cpp reads it.
    expect(events(false, "Hi.<|channel>thought\n<channel|>", false).map((event) => event.type === "text" ? event.text : event.type).join("")).toBe("Hi.");
    // Without tools, call markup is text.
    expect(joined(events(false, "<|tool_call>call:f{}<tool_call|>", false), "text")).toBe("<|tool_call>call:f{}<tool_call|>");
  });

  it("reads channel markers inside a call's strings as the string's text, whatever the delta boundaries", () => {
    const Q = '<|"|>';
    const whole = `<|channel>thought\nPlan.<channel|>Ok.<|tool_call>call:get_time{zone:${Q}a<channel|>b<|channel>thought c${Q}}<tool_call|><|channel>thought\n<channel|>`;
    const cuts = Array.from({ length: whole.length - 1 }, (_, i) => [whole.slice(0, i + 1), whole.slice(i + 1)]);
    for (const thinking of [true, false]) {
      for (const deltas of [[whole], [...whole], ...cuts]) {
        const read = events(thinking, whole, true, deltas);
        expect(joined(read, "thinking"), JSON.stringify(deltas)).toBe("Plan.");
        expect(joined(read, "text"), JSON.stringify(deltas)).toBe("Ok.");
        expect(read.filter((event) => event.type === "tool_call"), JSON.stringify(deltas)).toEqual([
          expect.objectContaining({ name: "get_time", arguments: { zone: "a<channel|>b<|channel>thought c" } }),
        ]);
      }
    }
  });
});
