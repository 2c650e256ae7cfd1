// Gemma 4 tool calls as a constraint: `<|tool_call>call:NAME{...}<tool_call|>` per call, the name one of the tools',
// the arguments an object in Gemma's notation keyed by the tool's properties, under each tool_choice and parallel
// setting, and after the thought channel when thinking is on.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { gemma4Messages } from "../chat/gemma4.js";
import { renderChatTemplate } from "../chat/template.js";
import { REPOSITORY_ROOT } from "../testing/fixtures.js";
import { type AnswerFormat, constraintGrammar } from "./answer.js";
import { GrammarAutomaton } from "./automaton.js";
import { SchemaError } from "./schema/errors.js";

const UTF8 = new TextEncoder();
const WEATHER = { name: "get_weather", parameters: { type: "object", properties: { city: { type: "string" }, days: { type: "integer" } }, required: ["city"] } };
const TIME = { name: "get_time", parameters: { type: "object" } };
type Gemma4Format = Extract<AnswerFormat, { type: "gemma4_calls" }>;

function automaton(format: Partial<Gemma4Format>, thinking: boolean | "optional" = false): GrammarAutomaton {
  return new GrammarAutomaton(constraintGrammar({
    format: { type: "gemma4_calls", tools: [WEATHER, TIME], choice: "auto", ...format },
    ...(thinking ? { thinking: { open: "<|channel>thought", close: "<channel|>", ...(thinking === "optional" ? { optional: true } : {}) } } : {}),
  }));
}

const TEMPLATE = readFileSync(join(REPOSITORY_ROOT, "scripts", "chat-templates", "gemma-4.jinja"), "utf8");

/** The call Gemma 4's template writes for `args` (the model is taught to write calls so). */
function templateCall(name: string, args: Record<string, unknown>): string {
  const rendered = renderChatTemplate(TEMPLATE, gemma4Messages([
    { role: "user", content: "Go." },
    { role: "assistant", content: "", tool_calls: [{ id: "c1", type: "function", function: { name, arguments: JSON.stringify(args) } }] },
  ]), { addGenerationPrompt: false, bosToken: "" });
  const call = /<\|tool_call>.*?<tool_call\|>/s.exec(rendered);
  if (!call) throw new Error(`no call in ${rendered}`);
  return call[0];
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

  it("keys in the order the template's dictsort writes them: case-insensitive, ties as the schema lists them", () => {
    const properties = { userId: { type: "integer" }, user_name: { type: "string" }, B: { type: "boolean" }, a: { type: "integer" }, A: { type: "integer" } };
    const tool = { name: "find", parameters: { type: "object", properties, required: Object.keys(properties) } };
    const machine = automaton({ tools: [tool], choice: "required" });
    const call = templateCall("find", { userId: 7, user_name: "ann", B: true, a: 1, A: 2 });
    // dictsort lowercases before comparing: 'user_name' < 'userid' ('_' < 'i'), 'a' and 'A' tie and keep their order.
    expect(call).toBe(`<|tool_call>call:find{a:1,A:2,B:true,user_name:${Q}ann${Q},userId:7}<tool_call|>`);
    expect(accepts(machine, call)).toBe(true);
    // A case-sensitive sort's order is not the template's.
    expect(accepts(machine, `<|tool_call>call:find{A:2,B:true,a:1,userId:7,user_name:${Q}ann${Q}}<tool_call|>`)).toBe(false);
  });

  it("a bare key is text without ':' or '}' (llama.cpp's [^:}]+), at any depth", () => {
    const machine = automaton({ tools: [TIME], choice: "required" });
    expect(accepts(machine, `<|tool_call>call:get_time{a b<x>:{c d:1}}<tool_call|>`)).toBe(true);
    for (const args of ["{a}b:1}", "{x:{a}b:1}}", "{:1}"]) {
      expect(refuses(machine, `<|tool_call>call:get_time${args}<tool_call|>`), args).toBe(true);
    }
  });

  it("refuses a property a bare key cannot name, naming it, where the template would write it unreadably", () => {
    for (const name of ["a:b", "x}", "", " lead"]) {
      const tool = { name: "f", parameters: { type: "object", properties: { ok: { type: "string" }, [name]: { type: "string" } }, required: [name] } };
      expect(() => automaton({ tools: [TIME, tool] }), JSON.stringify(name)).toThrow(SchemaError);
      try {
        automaton({ tools: [TIME, tool] });
      } catch (error) {
        expect((error as SchemaError).keyword).toBe("properties");
        expect((error as SchemaError).path).toBe("/tools/1/parameters");
        expect((error as SchemaError).message).toContain(JSON.stringify(name));
      }
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

  it("with the thought channel optional (Gemma 4, as llama.cpp), the model may call or answer without it", () => {
    const thought = `<|channel>thought\nThe user wants weather.<channel|>`;
    for (const choice of ["required", "auto"] as const) {
      const machine = automaton({ choice }, "optional");
      expect(accepts(machine, CALL), choice).toBe(true);
      expect(accepts(machine, `${thought}${CALL}`), choice).toBe(true);
      // The thinking budget closes an open channel with "\n<channel|>\n\n" (engine/active-request.ts): still a call after it.
      expect(accepts(machine, `<|channel>thought\nHmm, the weather\n<channel|>\n\n${CALL}`), choice).toBe(true);
    }
    // With calls required, a channel opened must close before them (under auto it is free text before the calls).
    expect(accepts(automaton({ choice: "required" }, "optional"), `<|channel>thought\nunclosed${CALL}`)).toBe(false);
    expect(accepts(automaton({ choice: "auto" }, "optional"), "It is sunny.")).toBe(true);
  });
});
