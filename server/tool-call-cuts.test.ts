// Forced tool calls cut short, end to end: a real server on a random-weight Qwen3-shaped model (greedy, so every
// max_tokens cuts the same generation at another token), the official openai and @anthropic-ai/sdk clients, streamed
// and not. The engine's raw output is recorded beside each response, so the test knows exactly where each cut fell:
// inside the open tag, the name, the arguments or the close tag. Whatever the cut, no template markup may reach the
// text, a call whose name was written is reported as a call with the arguments written so far, the finish reason says
// the limit (or stop sequence) cut it, and the streamed response has the same blocks as the whole one.
import Anthropic from "@anthropic-ai/sdk";
import { partialParse } from "@anthropic-ai/sdk/_vendor/partial-json-parser/parser";
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ModelServer, type RecordingEngine, startModelServer } from "./testing/model-server.js";

let model: ModelServer;
let engine: RecordingEngine;
let chat: string;
let messages: string;
let openai: OpenAI;
let anthropic: Anthropic;

beforeAll(async () => {
  model = await startModelServer({ key: "sk-cuts", threads: 1 });
  ({ engine, chatModel: chat, messagesModel: messages } = model);
  openai = model.openai();
  anthropic = model.anthropic();
});

afterAll(async () => {
  await model?.close();
});

const parameters = {
  type: "object",
  properties: { city: { type: "string", maxLength: 8 }, unit: { enum: ["c", "f"] } },
  required: ["city", "unit"],
  additionalProperties: false,
};
const chatTools: OpenAI.ChatCompletionTool[] = [{ type: "function", function: { name: "get_weather", parameters } }];
const messageTools: Anthropic.Tool[] = [{ name: "get_weather", input_schema: parameters as Anthropic.Tool.InputSchema }];
const user = [{ role: "user" as const, content: "Weather in Oslo?" }];

/** A call as the whole generation wrote it: its name, and where its name and arguments end in the raw text. */
interface WrittenCall {
  name: string;
  nameEnd: number;
  argumentsStart: number;
  argumentsText: string;
}

const CALL_HEAD = /<tool_call>\s*\{\s*"name"\s*:\s*("(?:[^"\\]|\\.)*")\s*,\s*"arguments"\s*:\s*/g;

/** The calls in a whole generation's raw text, each with its arguments as far as they were written. */
function writtenCalls(raw: string): WrittenCall[] {
  const heads = [...raw.matchAll(CALL_HEAD)];
  return heads.map((head, i) => {
    const argumentsStart = head.index + head[0].length;
    const rest = raw.slice(argumentsStart, heads[i + 1]?.index ?? raw.length);
    return { name: JSON.parse(head[1]!) as string, nameEnd: head.index + head[0].indexOf(head[1]!) + head[1]!.length, argumentsStart, argumentsText: jsonValuePrefix(rest) };
  });
}

/** The JSON object at the start of `text`, or all of `text` when it ends before the object does. */
function jsonValuePrefix(text: string): string {
  for (let end = text.indexOf("}") + 1; end > 0; end = text.indexOf("}", end) + 1) {
    try {
      JSON.parse(text.slice(0, end));
      return text.slice(0, end);
    } catch {
      // not the object's closing brace
    }
  }
  return text;
}

/** What a cut after `length` characters of the whole text must report: the calls whose name was written, as far as written. */
function expectedCalls(calls: WrittenCall[], length: number): Array<{ name: string; arguments: string }> {
  return calls
    .filter((call) => call.nameEnd <= length)
    .map((call) => ({ name: call.name, arguments: call.argumentsText.slice(0, Math.max(0, length - call.argumentsStart)) }));
}

/** Anthropic's `input` for arguments written so far: what the SDK makes of the same partial JSON when it streams. */
function expectedInput(argumentsText: string): unknown {
  return argumentsText === "" ? {} : partialParse(argumentsText);
}

/** The raw output of a response, checked to be a prefix of the whole generation (greedy decoding repeats itself). */
function rawOf(id: string, whole: string): RawOutput {
  const raw = engine.outputs.get(id);
  expect(raw, id).toBeDefined();
  expect(whole.startsWith(raw!.text), `${JSON.stringify(raw!.text)} is not a prefix of ${JSON.stringify(whole)}`).toBe(true);
  return raw!;
}

/** Enough tokens for one whole call, or two and the head of a third (this model writes a lot of layout whitespace). */
const WHOLE_TOKENS = 200;

const MARKUP = /<|tool_call|"name"|"arguments"|get_we/;

/**
 * The max_tokens values to try: each one up to one past the end of a single call's generation (which ends on its
 * own); with parallel calls, from the end of the first call to the limit of the whole generation (two calls and the
 * start of a third), every third one, as cuts inside a call are all tried on the first.
 */
function sweep(firstCallTokens: number, wholeTokens: number, parallel: boolean): number[] {
  const [from, to, step] = parallel ? [firstCallTokens - 1, wholeTokens, 3] : [1, wholeTokens + 1, 1];
  return Array.from({ length: Math.floor((to - from) / step) + 1 }, (_, i) => from + i * step);
}

describe("OpenAI: a forced tool call cut by max_tokens", () => {
  const choices: Array<[string, OpenAI.ChatCompletionToolChoiceOption, boolean]> = [
    ["required, one call", "required", false],
    ["a named function", { type: "function", function: { name: "get_weather" } }, false],
    ["required, parallel calls", "required", true],
  ];
  for (const [label, toolChoice, parallel] of choices) {
    it(`${label}: no markup in the content, the partial call as a call, finish_reason length, streamed = whole`, async () => {
      const base = { model: chat, messages: user, tools: chatTools, tool_choice: toolChoice, parallel_tool_calls: parallel, temperature: 0, seed: 7 };
      const whole = await openai.chat.completions.create({ ...base, max_tokens: WHOLE_TOKENS });
      const wholeRaw = engine.outputs.get(whole.id)!.text;
      const calls = writtenCalls(wholeRaw);
      // One call ends the generation on its own; parallel calls go on to the limit, which cuts the last one written.
      if (parallel) expect(calls.length).toBeGreaterThanOrEqual(2);
      else expect([calls.length, engine.outputs.get(whole.id)!.reason]).toEqual([1, "stop"]);
      const first = parallel ? await openai.chat.completions.create({ ...base, parallel_tool_calls: false, max_tokens: WHOLE_TOKENS }) : whole;
      for (const maxTokens of sweep(first.usage!.completion_tokens, whole.usage!.completion_tokens, parallel)) {
        const params = { ...base, max_tokens: maxTokens };
        const completion = await openai.chat.completions.create(params);
        const raw = rawOf(completion.id, wholeRaw);
        const choice = completion.choices[0]!;
        const where = `max_tokens ${maxTokens}, raw ${JSON.stringify(raw.text)}`;
        expect(choice.message.content ?? "", where).not.toMatch(MARKUP);
        expect(choice.message.content ?? "", where).toBe("");
        const reported = (choice.message.tool_calls ?? []).map((call) => (call.type === "function" ? { name: call.function.name, arguments: call.function.arguments } : undefined));
        expect(reported, where).toEqual(expectedCalls(calls, raw.text.length));
        expect(choice.finish_reason, where).toBe(raw.reason === "length" ? "length" : "tool_calls");

        const streamed = (await openai.chat.completions.stream({ ...params, stream: true }).finalChatCompletion()).choices[0]!;
        expect(streamed.finish_reason, where).toBe(choice.finish_reason);
        expect(streamed.message.content ?? "", where).toBe(choice.message.content ?? "");
        expect((streamed.message.tool_calls ?? []).map((call) => call.function), where).toEqual(reported);
      }
    });
  }
});

describe("Anthropic: a forced tool call cut by max_tokens", () => {
  const choices: Array<[string, Anthropic.ToolChoice, boolean]> = [
    ["any, one call", { type: "any", disable_parallel_tool_use: true }, false],
    ["a named tool", { type: "tool", name: "get_weather" }, false],
    ["any, parallel calls", { type: "any" }, true],
  ];
  for (const [label, toolChoice, parallel] of choices) {
    it(`${label}: no text, the partial call as a tool_use, stop_reason max_tokens, streamed = whole`, async () => {
      const base = { model: messages, messages: user, tools: messageTools, tool_choice: toolChoice, temperature: 0 };
      const whole = await anthropic.messages.create({ ...base, max_tokens: WHOLE_TOKENS });
      const wholeRaw = engine.outputs.get(whole.id)!.text;
      const calls = writtenCalls(wholeRaw);
      // One call ends the generation on its own; parallel calls go on to the limit, which cuts the last one written.
      if (parallel) expect(calls.length).toBeGreaterThanOrEqual(2);
      else expect([calls.length, engine.outputs.get(whole.id)!.reason]).toEqual([1, "stop"]);
      const one = { type: "any" as const, disable_parallel_tool_use: true };
      const first = parallel ? await anthropic.messages.create({ ...base, tool_choice: one, max_tokens: WHOLE_TOKENS }) : whole;
      for (const maxTokens of sweep(first.usage.output_tokens, whole.usage.output_tokens, parallel)) {
        const params = { ...base, max_tokens: maxTokens };
        const message = await anthropic.messages.create(params);
        const raw = rawOf(message.id, wholeRaw);
        const where = `max_tokens ${maxTokens}, raw ${JSON.stringify(raw.text)}`;
        const texts = message.content.flatMap((block) => (block.type === "text" ? [block.text] : []));
        for (const text of texts) expect(text, where).toBe("");
        const expected = expectedCalls(calls, raw.text.length).map((call) => ({ type: "tool_use", name: call.name, input: expectedInput(call.arguments) }));
        const reported = message.content.flatMap((block) => (block.type === "tool_use" ? [{ type: block.type, name: block.name, input: block.input }] : []));
        expect(reported, where).toEqual(expected);
        expect(message.stop_reason, where).toBe(raw.reason === "length" ? "max_tokens" : "tool_use");

        const streamed = await anthropic.messages.stream(params).finalMessage();
        expect(streamed.stop_reason, where).toBe(message.stop_reason);
        const blocks = (content: Anthropic.ContentBlock[]) => content.map((block) => (block.type === "tool_use" ? { ...block, id: "" } : block));
        expect(blocks(streamed.content), where).toEqual(blocks(message.content));
      }
    });
  }
});

describe("a stop sequence that cuts inside a forced call", () => {
  it("inside the name: no call and no text; inside the head: the call by name, cut, with the stop sequence's finish", async () => {
    const base = { model: chat, messages: user, tools: chatTools, tool_choice: "required" as const, parallel_tool_calls: false, temperature: 0, seed: 7, max_tokens: 128 };
    for (const stop of ["weather", '"arguments"']) {
      const completion = await openai.chat.completions.create({ ...base, stop: [stop] });
      const raw = engine.outputs.get(completion.id)!;
      expect(raw.stopSequence).toBe(stop);
      const choice = completion.choices[0]!;
      expect(choice.message.content ?? "").toBe("");
      expect(choice.finish_reason).toBe("stop");
      const calls = (choice.message.tool_calls ?? []).map((call) => (call.type === "function" ? call.function : undefined));
      expect(calls).toEqual(stop === "weather" ? [] : [{ name: "get_weather", arguments: "" }]);
      const streamed = (await openai.chat.completions.stream({ ...base, stop: [stop], stream: true }).finalChatCompletion()).choices[0]!;
      expect([streamed.finish_reason, streamed.message.content ?? "", (streamed.message.tool_calls ?? []).map((call) => call.function)]).toEqual(["stop", "", calls]);

      const params = { model: messages, messages: user, tools: messageTools, tool_choice: { type: "tool" as const, name: "get_weather" }, temperature: 0, max_tokens: 128, stop_sequences: [stop] };
      const message = await anthropic.messages.create(params);
      expect([message.stop_reason, message.stop_sequence]).toEqual(["stop_sequence", stop]);
      const expected = stop === "weather" ? [{ type: "text", text: "" }] : [{ type: "tool_use", id: expect.any(String), name: "get_weather", input: {} }];
      expect(message.content).toEqual(expected);
      const streamedMessage = await anthropic.messages.stream(params).finalMessage();
      expect([streamedMessage.stop_reason, streamedMessage.stop_sequence]).toEqual(["stop_sequence", stop]);
      expect(streamedMessage.content).toEqual(expected);
    }
  });
});
