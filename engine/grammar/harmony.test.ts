// Harmony replies (gpt-oss) as a constraint: reasoning and preambles free, then the final message or a tool call whose
// arguments follow the tool's schema, under each tool_choice; and the same through gpt-oss's real tokenizer, whose
// harmony markers are single tokens and whose <|call|> / <|return|> end generation.
import { describe, expect, it } from "vitest";
import { FIXTURES, failIfMissing, missingFixtureReason, skipOutsideCi, titled } from "../testing/fixtures.js";
import { tokenizerFromHuggingFace } from "../tokenizer/huggingface.js";
import { type AnswerFormat, type ConstraintSpec, constraintGrammar } from "./answer.js";
import { GrammarAutomaton } from "./automaton.js";
import { CompiledConstraint } from "./constraint.js";
import { SchemaError } from "./schema/errors.js";

const UTF8 = new TextEncoder();
const WEATHER = { name: "get_weather", parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"], additionalProperties: false } };
const TIME = { name: "get_time", parameters: { type: "object", properties: {} } };

function automaton(format: Partial<Extract<AnswerFormat, { type: "harmony" }>>): GrammarAutomaton {
  const spec: ConstraintSpec = { format: { type: "harmony", tools: [WEATHER, TIME], choice: "auto", ...format } };
  return new GrammarAutomaton(constraintGrammar(spec));
}

/** Whether `text` is a whole reply (end of generation allowed after it). */
function accepts(machine: GrammarAutomaton, text: string): boolean {
  return machine.stepBytes(machine.initial, UTF8.encode(text))?.accepting ?? false;
}

/** Whether `text` is refused at some byte (not merely incomplete). */
function refuses(machine: GrammarAutomaton, text: string): boolean {
  return machine.stepBytes(machine.initial, UTF8.encode(text)) === null;
}

const ANALYSIS = "<|channel|>analysis<|message|>The user wants the weather.<|end|><|start|>assistant";
const CALL = '<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>{"city":"Paris"}';
const FINAL = "<|channel|>final<|message|>It is sunny.";

describe("harmony replies", () => {
  it("auto: the final message or a call, after any analysis and preambles", () => {
    const auto = automaton({});
    for (const reply of [FINAL, ANALYSIS + FINAL, ANALYSIS + CALL, CALL, "<|channel|>final<|message|>",
      `${ANALYSIS}<|channel|>commentary<|message|>Checking.<|end|><|start|>assistant${CALL}`,
      `${ANALYSIS} to=functions.get_weather<|channel|>commentary json<|message|>{"city": "Oslo"}`,
      `${ANALYSIS}<|channel|>commentary to=functions.get_time<|message|>{}`]) {
      expect(accepts(auto, reply), reply).toBe(true);
    }
    // Nothing follows a call; a final message never holds <|end|>; an analysis alone is not a reply.
    expect(refuses(auto, `${CALL} `)).toBe(true);
    expect(refuses(auto, `${FINAL}<|end|>`)).toBe(true);
    expect(accepts(auto, ANALYSIS)).toBe(false);
  });

  it("holds a call's arguments to its tool's schema and names only offered tools", () => {
    const auto = automaton({});
    expect(refuses(auto, '<|channel|>commentary to=functions.get_weather<|message|>{"town":"Paris"}')).toBe(true);
    expect(refuses(auto, '<|channel|>commentary to=functions.get_weather<|message|>{"city":3}')).toBe(true);
    expect(refuses(auto, "<|channel|>commentary to=functions.delete_everything")).toBe(true);
    expect(refuses(auto, "<|channel|>shouting<|message|>")).toBe(true);
  });

  it("required: a call, never a final message; a named tool: that tool only", () => {
    const required = automaton({ choice: "required" });
    expect(accepts(required, ANALYSIS + CALL)).toBe(true);
    expect(refuses(required, ANALYSIS + FINAL)).toBe(true);
    const named = automaton({ choice: { name: "get_time" } });
    expect(accepts(named, `${ANALYSIS}<|channel|>commentary to=functions.get_time<|message|>{}`)).toBe(true);
    expect(refuses(named, ANALYSIS + CALL)).toBe(true);
    expect(() => automaton({ choice: { name: "nope" } })).toThrow(SchemaError);
  });

  it("none: the final message only; a response format: the final message is that JSON", () => {
    const none = automaton({ choice: "none" });
    expect(accepts(none, ANALYSIS + FINAL)).toBe(true);
    expect(refuses(none, ANALYSIS + CALL)).toBe(true);
    const json = automaton({ tools: [], choice: "none", answer: { type: "json_schema", schema: { type: "object", properties: { n: { type: "integer" } }, required: ["n"] } } });
    expect(accepts(json, `${ANALYSIS}<|channel|>final<|message|>{"n":4}`)).toBe(true);
    expect(refuses(json, `${ANALYSIS}<|channel|>final<|message|>Four.`)).toBe(true);
  });

  it("names the tool whose schema is unsupported", () => {
    const error = (() => {
      try {
        automaton({ tools: [{ name: "bad", parameters: { type: "string", pattern: "(?<=x)" } }] });
      } catch (caught) {
        return caught;
      }
    })();
    expect(error).toBeInstanceOf(SchemaError);
    expect((error as SchemaError).path).toMatch(/^\/tools\/0\/parameters/);
  });
});

const reason = missingFixtureReason(FIXTURES.gptOssDirectory);
describe.skipIf(skipOutsideCi(reason))(titled("harmony replies through gpt-oss's tokenizer", reason), () => {
  it("allows the markers as their single tokens, the arguments by schema, and <|call|> / <|return|> where the reply ends", () => {
    failIfMissing(reason);
    const tokenizer = tokenizerFromHuggingFace(FIXTURES.gptOssDirectory);
    const id = (text: string) => tokenizer.encode(text, { addSpecial: false, parseSpecial: true });
    const [channel, end, call, returned] = ["<|channel|>", "<|end|>", "<|call|>", "<|return|>"].map((text) => id(text)[0]!);
    const compiled = new CompiledConstraint({ format: { type: "harmony", tools: [WEATHER], choice: "auto" } }, tokenizer);
    const constraint = compiled.start();
    expect(constraint.allows(channel)).toBe(true);
    expect(constraint.allows(call)).toBe(false);
    for (const token of id(ANALYSIS)) constraint.accept(token);
    const tokens = id(CALL);
    for (const token of tokens.slice(0, -1)) constraint.accept(token);
    expect(constraint.allows(call)).toBe(false); // the arguments are not whole yet
    constraint.accept(tokens.at(-1)!);
    expect([constraint.complete, constraint.allows(call), constraint.allows(end)]).toEqual([true, true, false]);
    // The final message ends with <|return|>, never <|end|>.
    const answer = compiled.start();
    for (const token of id(FINAL)) answer.accept(token);
    expect([answer.allows(returned), answer.allows(end)]).toEqual([true, false]);
  }, 120_000);
});
