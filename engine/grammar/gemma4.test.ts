// Gemma 4 tool calls as a constraint: `<|tool_call>call:NAME{...}<tool_call|>` per call, the name one of the tools',
// the arguments an object in Gemma's notation keyed by the tool's properties, under each tool_choice and parallel
// setting, and after the thought channel when thinking is on.
import { describe, expect, it } from "vitest";
import { type AnswerFormat, constraintGrammar } from "./answer.js";
import { GrammarAutomaton } from "./automaton.js";
import { SchemaError } from "./schema/errors.js";

const UTF8 = new TextEncoder();
const WEATHER = { name: "get_weather", parameters: { type: "object", properties: { city: { type: "string" }, days: { type: "integer" } }, required: ["city"] } };
const TIME = { name: "get_time", parameters: { type: "object" } };
type Gemma4Format = Extract<AnswerFormat, { type: "gemma4_calls" }>;

function automaton(format: Partial<Gemma4Format>, thinking = false): GrammarAutomaton {
  return new GrammarAutomaton(constraintGrammar({
    format: { type: "gemma4_calls", tools: [WEATHER, TIME], choice: "auto", ...format },
    ...(thinking ? { thinking: { open: "<|channel>thought", close: "<channel|>" } } : {}),
  }));
}

/** Whether `text` is a whole answer (end of generation allowed after it). */
function accepts(machine: GrammarAutomaton, text: string): boolean {
  return machine.stepBytes(machine.initial, UTF8.encode(text))?.accepting ?? false;
}

/** Whether `text` is refused at some byte (not merely incomplete). */
function refuses(machine: GrammarAutomaton, text: string): boolean {
  return machine.stepBytes(machine.initial, UTF8.encode(text)) === null;
}

const Q = '<|"|>';
const CALL = `<|tool_call>call:get_weather{city:${Q}Paris, {a:b}${Q},days:3}<tool_call|>`;
const OTHER = `<|tool_call>call:get_time{zone:[${Q}CET${Q},{x:-1.5,y:null}],ok:true}<tool_call|>`;

describe("Gemma 4 calls", () => {
  it("auto: text, then optionally calls; names are the tools', keys the schema's properties", () => {
    const auto = automaton({});
    for (const answer of ["", "It is sunny.", CALL, `Let me check.${CALL}${OTHER}`, `<|tool_call>call:get_time{}<tool_call|>`]) {
      expect(accepts(auto, answer), answer).toBe(true);
    }
    for (const answer of [`${CALL} and more`, "<|tool_call>call:nope{}<tool_call|>", `<|tool_call>call:get_weather{town:${Q}x${Q}}<tool_call|>`, `<|tool_call>call:get_weather{city:Paris}<tool_call|>`, `<|tool_call>call:get_weather{"city":1}<tool_call|>`]) {
      expect(refuses(auto, answer), answer).toBe(true);
    }
    expect(accepts(auto, CALL.slice(0, -3))).toBe(false);
  });

  it("keys in sorted order, required ones present, top-level values of the property's type", () => {
    const typed = { name: "book", parameters: { type: "object", properties: { size: { type: "string", enum: ["S", "L"] }, count: { type: "integer" }, urgent: { type: "boolean" }, note: { type: "string" }, extra: {} }, required: ["size", "count"] } };
    const machine = automaton({ tools: [typed], choice: "required" });
    const call = (args: string) => `<|tool_call>call:book{${args}}<tool_call|>`;
    for (const args of [`count:2,size:${Q}S${Q}`, `count:-3,extra:[1,{a:${Q}x${Q}}],note:${Q}any}text${Q},size:${Q}L${Q},urgent:false`]) {
      expect(accepts(machine, call(args)), args).toBe(true);
    }
    for (const args of [`size:${Q}S${Q},count:2`, `count:2`, `count:2.5,size:${Q}S${Q}`, `count:2,size:${Q}M${Q}`, `count:2,size:${Q}S${Q},urgent:${Q}yes${Q}`, `count:2,other:1,size:${Q}S${Q}`]) {
      expect(refuses(machine, call(args)) || !accepts(machine, call(args)), args).toBe(true);
    }
  });

  it("required, named and single calls; none forbids calls", () => {
    expect(accepts(automaton({ choice: "required" }), "Hi")).toBe(false);
    expect(accepts(automaton({ choice: "required" }), `${CALL}${OTHER}`)).toBe(true);
    expect(accepts(automaton({ choice: "required", parallel: false }), `${CALL}${OTHER}`)).toBe(false);
    expect(accepts(automaton({ choice: { name: "get_time" } }), OTHER)).toBe(true);
    expect(refuses(automaton({ choice: { name: "get_time" } }), CALL)).toBe(true);
    expect(refuses(automaton({ choice: "none" }), CALL)).toBe(true);
    expect(() => automaton({ choice: { name: "nope" } })).toThrow(SchemaError);
  });

  it("with thinking, the thought channel comes first", () => {
    const thinking = automaton({ choice: "required" }, true);
    expect(accepts(thinking, `<|channel>thought\nThe user wants weather.<channel|>${CALL}`)).toBe(true);
    expect(refuses(thinking, CALL)).toBe(true);
  });
});
