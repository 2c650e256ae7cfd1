// Mistral tool calls as a constraint: `[TOOL_CALLS]` then one JSON list of calls (v3 / Nemo) or `NAME[ARGS]{...}` per
// call (tekken v11+), arguments following each tool's schema, under each tool_choice and parallel setting.
import { describe, expect, it } from "vitest";
import { type AnswerFormat, constraintGrammar } from "./answer.js";
import { GrammarAutomaton } from "./automaton.js";
import { SchemaError } from "./schema/errors.js";

const UTF8 = new TextEncoder();
const WEATHER = { name: "get_weather", parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"], additionalProperties: false } };
const TIME = { name: "get_time", parameters: { type: "object", properties: {} } };

type MistralFormat = Extract<AnswerFormat, { type: "mistral_calls" }>;
function automaton(format: Partial<MistralFormat>): GrammarAutomaton {
  return new GrammarAutomaton(constraintGrammar({ format: { type: "mistral_calls", layout: "json", tools: [WEATHER, TIME], choice: "auto", ...format } }));
}

/** Whether `text` is a whole answer (end of generation allowed after it). */
function accepts(machine: GrammarAutomaton, text: string): boolean {
  return machine.stepBytes(machine.initial, UTF8.encode(text))?.accepting ?? false;
}

/** Whether `text` is refused at some byte (not merely incomplete). */
function refuses(machine: GrammarAutomaton, text: string): boolean {
  return machine.stepBytes(machine.initial, UTF8.encode(text)) === null;
}

const CALL = '{"name": "get_weather", "arguments": {"city": "Paris"}}';
const OTHER = '{"name":"get_time","arguments":{}}';

describe("Mistral calls as a JSON list (v3 / Nemo)", () => {
  it("auto: text, then optionally one list of calls; nothing after the list", () => {
    const auto = automaton({});
    for (const answer of ["", "It is sunny.", `[TOOL_CALLS][${CALL}]`, `Let me check.[TOOL_CALLS][${CALL}, ${OTHER}]`, `[TOOL_CALLS][${OTHER},${CALL}]`]) {
      expect(accepts(auto, answer), answer).toBe(true);
    }
    for (const answer of [`[TOOL_CALLS]${CALL}`, `[TOOL_CALLS][${CALL}] and more`, `[TOOL_CALLS][{"name": "nope", "arguments": {}}]`, `[TOOL_CALLS][{"name": "get_weather", "arguments": {"town": "Paris"}}]`, `[TOOL_CALLS][{"arguments": {}, "name": "get_time"}]`]) {
      expect(refuses(auto, answer), answer).toBe(true);
    }
    expect(accepts(auto, `[TOOL_CALLS][${CALL}`)).toBe(false);
  });

  it("required, a named tool, no parallel calls, none", () => {
    const required = automaton({ choice: "required" });
    expect(accepts(required, `[TOOL_CALLS][${CALL}]`)).toBe(true);
    expect(refuses(required, "Sure")).toBe(true);
    const named = automaton({ choice: { name: "get_time" } });
    expect(accepts(named, `[TOOL_CALLS][${OTHER}]`)).toBe(true);
    expect(refuses(named, `[TOOL_CALLS][${CALL}]`)).toBe(true);
    expect(refuses(named, `[TOOL_CALLS][${OTHER}, ${OTHER}]`)).toBe(true);
    const single = automaton({ parallel: false });
    expect(accepts(single, `[TOOL_CALLS][${CALL}]`)).toBe(true);
    expect(refuses(single, `[TOOL_CALLS][${CALL}, ${OTHER}]`)).toBe(true);
    const none = automaton({ choice: "none" });
    expect(accepts(none, "Just text.")).toBe(true);
    expect(refuses(none, "Text [TOOL_CALLS]")).toBe(true);
    expect(() => automaton({ choice: { name: "missing" } })).toThrow(SchemaError);
  });

  it("auto with a JSON answer format: that document or calls", () => {
    const machine = automaton({ otherwise: { type: "json_object" } });
    expect(accepts(machine, '{"a": 1}')).toBe(true);
    expect(accepts(machine, `[TOOL_CALLS][${CALL}]`)).toBe(true);
    expect(refuses(machine, "Plain text")).toBe(true);
  });
});

describe("Mistral calls as NAME[ARGS] (tekken v11+)", () => {
  it("auto: text then calls, each opened by [TOOL_CALLS]; the schema holds", () => {
    const auto = automaton({ layout: "args" });
    for (const answer of ["", "Hi.", '[TOOL_CALLS]get_weather[ARGS]{"city": "Paris"}', 'Ok.[TOOL_CALLS]get_weather[ARGS]{"city":"Oslo"}[TOOL_CALLS]get_time[ARGS]{}']) {
      expect(accepts(auto, answer), answer).toBe(true);
    }
    for (const answer of ['[TOOL_CALLS][{"name": "get_time", "arguments": {}}]', "[TOOL_CALLS]nope[ARGS]{}", '[TOOL_CALLS]get_weather[ARGS]{"town": "x"}', "[TOOL_CALLS]get_time[ARGS]{} done"]) {
      expect(refuses(auto, answer), answer).toBe(true);
    }
    const single = automaton({ layout: "args", choice: "required", parallel: false });
    expect(accepts(single, "[TOOL_CALLS]get_time[ARGS]{}")).toBe(true);
    expect(refuses(single, "[TOOL_CALLS]get_time[ARGS]{}[TOOL_CALLS]")).toBe(true);
    expect(refuses(single, "Hi")).toBe(true);
  });
});
