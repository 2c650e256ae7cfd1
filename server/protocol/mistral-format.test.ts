// A Mistral model's output format through the protocol: the constraint in its template's layout (with `[THINK]`
// reasoning first only where the template has those tags), and the reader that splits reasoning and takes calls out.
import { describe, expect, it } from "vitest";
import { constraintSpecOf } from "./constraint.js";
import type { InternalEvent, InternalRequest } from "./internal.js";
import { outputReaderOf, toEngineRequest } from "./run.js";

const TOOL = { name: "get_time", parameters: { type: "object", properties: {} } };
const request = (thinking: boolean): InternalRequest => ({
  format: "openai", model: "m", messages: [{ role: "user", content: "Time?" }], sampling: {}, stop: [], stream: true,
  includeUsage: false, thinking: thinking ? { enabled: true, budgetTokens: 64 } : { enabled: false }, autoCompaction: true, tools: [TOOL],
});
const THINK = { open: "[THINK]", close: "[/THINK]" };

/** The events of `text` read one character at a time. */
function events(format: Parameters<typeof outputReaderOf>[1], thinking: boolean, text: string): InternalEvent[] {
  const reader = outputReaderOf(request(thinking), format);
  return [...[...text].flatMap((c) => reader.push(c)), ...reader.flush(false)];
}

describe("a Mistral model's output format", () => {
  it("constrains calls to the template's layout, reasoning first only with [THINK] tags", () => {
    expect(constraintSpecOf(request(true), { syntax: "mistral" })).toEqual({ format: { type: "mistral_calls", layout: "json", tools: [TOOL], choice: "auto" } });
    expect(constraintSpecOf(request(false), { syntax: "mistral-args", thinkTags: THINK })?.thinking).toBeUndefined();
    expect(constraintSpecOf(request(true), { syntax: "mistral-args", thinkTags: THINK })).toEqual({ format: { type: "mistral_calls", layout: "args", tools: [TOOL], choice: "auto" }, thinking: THINK });
    // The thinking budget closes Mistral's own tags, and a model without them gets none.
    expect(toEngineRequest("r", request(true), { syntax: "mistral-args", thinkTags: THINK }).thinkingBudget).toEqual({ tokens: 64, ...THINK });
    expect(toEngineRequest("r", request(true), { syntax: "mistral" }).thinkingBudget).toBeUndefined();
  });

  it("reads [THINK] reasoning and [ARGS] calls, and leaves <think> alone in a model without think tags", () => {
    const read = events({ syntax: "mistral-args", thinkTags: THINK }, true, "[THINK]It is a time question.[/THINK]Checking.[TOOL_CALLS]get_time[ARGS]{}");
    expect(read.filter((event) => event.type === "thinking").map((event) => (event as { text: string }).text).join("")).toBe("It is a time question.");
    expect(read.filter((event) => event.type === "text").map((event) => (event as { text: string }).text).join("")).toBe("Checking.");
    expect(read.at(-1)).toMatchObject({ type: "tool_call", name: "get_time", arguments: {} });
    // A reasoning model thinks whatever the request says: its reasoning is read with thinking off too.
    const off = events({ syntax: "mistral-args", thinkTags: THINK }, false, "[THINK]Hm.[/THINK]Hi.");
    expect(off.map((event) => `${event.type}:${(event as { text: string }).text}`).join("|")).toBe("thinking:H|thinking:m|thinking:.|text:H|text:i|text:.");
    const plain = events({ syntax: "mistral" }, true, '<think>x</think>[TOOL_CALLS][{"name": "get_time", "arguments": {}}]');
    expect(plain.filter((event) => event.type === "thinking")).toEqual([]);
    expect(plain.filter((event) => event.type === "text").map((event) => (event as { text: string }).text).join("")).toBe("<think>x</think>");
    expect(plain.at(-1)).toMatchObject({ type: "tool_call", name: "get_time", id: expect.stringMatching(/^[A-Za-z0-9]{9}$/) });
  });
});
