// Structured output end to end: the official openai and @anthropic-ai/sdk clients against a real server on a
// random-weight model with the Qwen3 tokenizer and tool-calling template (its engine on a worker thread, as `loom
// serve` runs it), sampling at temperature 1. Whatever the weights, the JSON answers and tool calls must parse and
// validate, streamed and not, and a schema outside the supported subset must be a 400 naming it.
import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { newValidator } from "../engine/grammar/testing/validator.js";
import { type ModelServer, startModelServer } from "./testing/model-server.js";

let model: ModelServer;
let chat: string;
let messages: string;
let openai: OpenAI;
let anthropic: Anthropic;
const ajv = newValidator();

beforeAll(async () => {
  model = await startModelServer({ key: "sk-structured" });
  ({ chatModel: chat, messagesModel: messages } = model);
  openai = model.openai();
  anthropic = model.anthropic();
});

afterAll(async () => {
  await model?.close();
});

const weatherParameters = {
  type: "object",
  properties: { city: { type: "string", maxLength: 12 }, unit: { enum: ["c", "f"] }, days: { type: "integer", minimum: 1, maximum: 7 } },
  required: ["city", "unit"],
  additionalProperties: false,
};
const timeParameters = { type: "object", properties: { zone: { type: "string", pattern: "^[A-Z]{3}$" } }, required: ["zone"] };
const chatTools: OpenAI.ChatCompletionTool[] = [
  { type: "function", function: { name: "get_weather", parameters: weatherParameters } },
  { type: "function", function: { name: "get_time", parameters: timeParameters } },
];
const messageTools: Anthropic.Tool[] = [
  { name: "get_weather", input_schema: weatherParameters as Anthropic.Tool.InputSchema },
  { name: "get_time", input_schema: timeParameters as Anthropic.Tool.InputSchema },
];
const schemaOf: Record<string, object> = { get_weather: weatherParameters, get_time: timeParameters };
const user = [{ role: "user" as const, content: "Weather in Oslo?" }];

/** Checks a tool call's name and arguments against the tool's schema. */
function expectValidCall(name: string, args: unknown): void {
  expect(Object.keys(schemaOf)).toContain(name);
  const validate = ajv.compile(schemaOf[name]!);
  expect(validate(args), `${name} ${JSON.stringify(args)}: ${JSON.stringify(validate.errors)}`).toBe(true);
}

describe("OpenAI response_format", () => {
  const schema = {
    type: "object",
    properties: { name: { type: "string", maxLength: 10 }, age: { type: "integer", minimum: 0, maximum: 120 }, tags: { type: "array", items: { enum: ["a", "b"] }, maxItems: 3 } },
    required: ["name", "age"],
    additionalProperties: false,
  };

  it("json_schema: the content is a document of the schema, streamed and not, for several seeds", async () => {
    const validate = ajv.compile(schema);
    for (const seed of [1, 2, 3]) {
      const params = { model: chat, messages: user, temperature: 1, seed, max_tokens: 96, response_format: { type: "json_schema" as const, json_schema: { name: "person", schema, strict: true } } };
      const completion = await openai.chat.completions.create(params);
      const choice = completion.choices[0]!;
      expect(choice.finish_reason).toBe("stop");
      expect(validate(JSON.parse(choice.message.content!)), choice.message.content!).toBe(true);
      const streamed = await openai.chat.completions.stream({ ...params, stream: true }).finalChatCompletion();
      expect(streamed.choices[0]!.message.content).toBe(choice.message.content); // same seed, same tokens
    }
  });

  it("json_object: the content is a JSON object, streamed and not", async () => {
    // Random weights almost never close a free-form string (none of 600 seeds finished within 6 tokens, none of 30
    // within 96): these prompts are ones whose greedy answer closes the object at once, so there is a document to check.
    for (const content of ["Weather in city 37?", "Weather in city 307?"]) {
      const params = { model: chat, messages: [{ role: "user" as const, content }], temperature: 0, max_tokens: 96, response_format: { type: "json_object" as const } };
      const completion = await openai.chat.completions.create(params);
      const choice = completion.choices[0]!;
      expect(choice.finish_reason, content).toBe("stop");
      const parsed: unknown = JSON.parse(choice.message.content!);
      expect(parsed !== null && typeof parsed === "object" && !Array.isArray(parsed), choice.message.content!).toBe(true);
      const streamed = await openai.chat.completions.stream({ ...params, stream: true }).finalChatCompletion();
      expect(streamed.choices[0]!.message.content).toBe(choice.message.content);
      expect(model.engine.requests.at(-1)!.constraint).toEqual({ format: { type: "json_object" } });
    }
  });

  it("at max_tokens the answer finishes with length and is an incomplete document", async () => {
    const completion = await openai.chat.completions.create({ model: chat, messages: user, temperature: 1, seed: 1, max_tokens: 3, response_format: { type: "json_schema", json_schema: { name: "person", schema } } });
    expect(completion.choices[0]!.finish_reason).toBe("length");
    expect(() => JSON.parse(completion.choices[0]!.message.content!)).toThrow();
  });

  it("a schema outside the supported subset is a 400 naming the keyword and where it is", async () => {
    const bad = { type: "object", properties: { tags: { type: "array", uniqueItems: true } } };
    const error = await openai.chat.completions.create({ model: chat, messages: user, response_format: { type: "json_schema", json_schema: { name: "x", schema: bad } } }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OpenAI.BadRequestError);
    expect((error as InstanceType<typeof OpenAI.BadRequestError>).message).toContain('the keyword "uniqueItems" is not supported (keyword uniqueItems, at /properties/tags)');
    expect((error as { param?: string }).param).toBe("response_format.json_schema.schema");
  });
});

describe("OpenAI tools", () => {
  // One call each (parallel_tool_calls false, or a named function): random weights rarely stop after a call on their own.
  it("tool_choice required and a named function: valid calls, finish_reason tool_calls, streamed as OpenAI streams them", async () => {
    const choices: OpenAI.ChatCompletionToolChoiceOption[] = ["required", { type: "function", function: { name: "get_time" } }];
    for (const [i, toolChoice] of choices.entries()) {
      const params = { model: chat, messages: user, tools: chatTools, tool_choice: toolChoice, parallel_tool_calls: false, temperature: 1, seed: 10 + i, max_tokens: 128 };
      const completion = await openai.chat.completions.create(params);
      const choice = completion.choices[0]!;
      expect(choice.finish_reason).toBe("tool_calls");
      expect(choice.message.tool_calls!.length).toBeGreaterThan(0);
      for (const call of choice.message.tool_calls!) {
        if (call.type !== "function") throw new Error("not a function call");
        expectValidCall(call.function.name, JSON.parse(call.function.arguments));
        if (typeof toolChoice === "object") expect(call.function.name).toBe("get_time");
      }
      const streamed = await openai.chat.completions.stream({ ...params, stream: true }).finalChatCompletion();
      expect(streamed.choices[0]!.finish_reason).toBe("tool_calls");
      expect(streamed.choices[0]!.message.tool_calls!.map((call) => call.type === "function" && call.function)).toEqual(choice.message.tool_calls!.map((call) => call.type === "function" && call.function));
    }
  });

  it("tool_choice auto: text, or calls that validate, and the call goes back as history", async () => {
    // Random weights rarely choose to call (none of 30 seeds here): every outcome is checked, text as well as calls.
    for (const seed of [20, 21, 22]) {
      const completion = await openai.chat.completions.create({ model: chat, messages: user, tools: chatTools, temperature: 1, seed, max_tokens: 64 });
      expect(model.engine.requests.at(-1)!.constraint).toMatchObject({ format: { type: "tool_calls", choice: "auto" } });
      const choice = completion.choices[0]!;
      if (choice.message.tool_calls) {
        expect(choice.finish_reason).toBe("tool_calls");
        for (const call of choice.message.tool_calls) if (call.type === "function") expectValidCall(call.function.name, JSON.parse(call.function.arguments));
      } else {
        // Text: the model's output as written (no call was taken out of it, no markup left in it).
        const raw = model.engine.outputs.get(completion.id)!;
        expect(choice.message.content).toBe(raw.text);
        expect(raw.text).not.toContain("<tool_call>");
        expect(choice.finish_reason).toBe(raw.reason === "length" ? "length" : "stop");
        expect(completion.usage!.completion_tokens === 64).toBe(raw.reason === "length");
      }
    }
    const forced = await openai.chat.completions.create({ model: chat, messages: user, tools: chatTools, tool_choice: "required", parallel_tool_calls: false, temperature: 1, seed: 3, max_tokens: 128 });
    const message = forced.choices[0]!.message;
    const next = await openai.chat.completions.create({
      model: chat, tools: chatTools, max_tokens: 4,
      messages: [...user, message, ...message.tool_calls!.map((call) => ({ role: "tool" as const, tool_call_id: call.id, content: "21 C" }))],
    });
    expect(next.choices[0]!.message.role).toBe("assistant");
  });
});

describe("Anthropic tools", () => {
  it("tool_choice any and a named tool: tool_use blocks whose input validates, stop_reason tool_use, streamed with input_json_delta", async () => {
    const choices: Anthropic.ToolChoice[] = [{ type: "any", disable_parallel_tool_use: true }, { type: "tool", name: "get_weather" }];
    for (const [i, toolChoice] of choices.entries()) {
      const params = { model: messages, max_tokens: 128, messages: user, tools: messageTools, tool_choice: toolChoice, temperature: 1, metadata: { user_id: `seed-${i}` } };
      const message = await anthropic.messages.create(params);
      expect(message.stop_reason).toBe("tool_use");
      const uses = message.content.filter((block) => block.type === "tool_use");
      expect(uses.length).toBeGreaterThan(0);
      for (const use of uses) {
        expectValidCall(use.name, use.input);
        if (toolChoice.type === "tool") expect(use.name).toBe("get_weather");
      }
      const deltas: string[] = [];
      const stream = anthropic.messages.stream(params);
      stream.on("inputJson", (partial) => deltas.push(partial));
      const streamed = await stream.finalMessage();
      expect(streamed.stop_reason).toBe("tool_use");
      const streamedUses = streamed.content.filter((block) => block.type === "tool_use");
      expect(streamedUses.length).toBeGreaterThan(0);
      for (const use of streamedUses) expectValidCall(use.name, use.input);
      expect(deltas.length).toBeGreaterThan(0);
    }
  });

  it("tool_result blocks go back in the next turn", async () => {
    const first = await anthropic.messages.create({ model: messages, max_tokens: 128, messages: user, tools: messageTools, tool_choice: { type: "any", disable_parallel_tool_use: true } });
    const uses = first.content.filter((block) => block.type === "tool_use");
    const next = await anthropic.messages.create({
      model: messages, max_tokens: 4, tools: messageTools,
      messages: [...user, { role: "assistant", content: first.content }, { role: "user", content: uses.map((use) => ({ type: "tool_result" as const, tool_use_id: use.id, content: "21 C" })) }],
    });
    expect(next.type).toBe("message");
  });

  it("an unsupported input_schema keyword is a 400 naming it", async () => {
    const error = await anthropic.messages.create({
      model: messages, max_tokens: 8, messages: user,
      tools: [{ name: "f", input_schema: { type: "object", properties: { a: { type: "string" } }, patternProperties: { "^x": {} } } as Anthropic.Tool.InputSchema }],
    }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(Anthropic.BadRequestError);
    const body = (error as InstanceType<typeof Anthropic.BadRequestError>).error as { error: { message: string } };
    expect(body.error.message).toBe('tools[0].input_schema: the keyword "patternProperties" is not supported (keyword patternProperties, at the schema root)');
  });
});
