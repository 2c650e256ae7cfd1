// A harmony model (gpt-oss) over HTTP with the official openai and @anthropic-ai/sdk clients: a scripted engine writes
// harmony text as gpt-oss does (random-weight test models never write it), split so that markers straddle deltas, and
// each wire format serves the analysis channel as reasoning, final and preambles as the answer, and calls to
// functions.NAME as tool calls, streamed and whole; the engine gets the reasoning effort and the harmony constraint.
import { rmSync } from "node:fs";
import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { EngineRequest } from "../engine/request.js";
import { createEndpoints } from "./adapters/endpoints.js";
import { StaticKeys } from "./http/auth.js";
import { ModelRegistry } from "./models.js";
import { type LoomServer, startServer } from "./server.js";
import { type OpenedResponseStorage, openResponseStorage } from "./platform/store/response-storage.js";
import { migratedDataDir } from "./platform/testing/test-databases.js";
import { SCRIPTED_MODEL, ScriptedEngine } from "./testing/scripted-engine.js";

const KEY = "sk-harmony";
const CHAT = "service/tim-oss-27b";
const MESSAGES = "service/oss-marathon";
const CALL_ID = /^call_[0-9a-f]{24}$/;

/** `text` in deltas of three characters: every marker arrives in pieces. */
const deltas = (text: string) => text.match(/.{1,3}/gs)!;

const REASONING = "The user wants the weather in Paris. I need the tool.";
const PREAMBLE = "Let me check.";
const ANSWER_SCRIPT = deltas("<|channel|>analysis<|message|>A greeting. Reply in kind.<|end|><|start|>assistant<|channel|>final<|message|>Hello there!");
const CALL_SCRIPT = deltas(
  `<|channel|>analysis<|message|>${REASONING}<|end|><|start|>assistant<|channel|>commentary<|message|>${PREAMBLE}<|end|>` +
  '<|start|>assistant<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>{"city":"Paris"}',
);
const MARKUP = /<\||\|>|functions\.|analysis|commentary/;

describe("a harmony model over HTTP with the official SDKs", () => {
  const engine = new ScriptedEngine();
  let server: LoomServer;
  let base: string;
  let responses: OpenedResponseStorage;
  let responsesDir: string;

  beforeAll(async () => {
    responsesDir = await migratedDataDir();
    responses = openResponseStorage({ dataDir: responsesDir });
    const registry = new ModelRegistry([
      { model: { ...SCRIPTED_MODEL, architecture: "gpt-oss", syntax: "harmony" }, engine, slugs: { openai: [CHAT], anthropic: [MESSAGES] }, created: 1_700_000_000 },
    ]);
    const stored = { responses: responses.storage };
    server = await startServer({ registry, auth: new StaticKeys([KEY]), endpoints: createEndpoints(registry, stored), ...stored }, "127.0.0.1", 0);
    base = `http://127.0.0.1:${server.port}`;
  });

  afterAll(async () => {
    await server?.close();
    await responses?.close();
    rmSync(responsesDir, { recursive: true, force: true });
  });

  const openai = () => new OpenAI({ apiKey: KEY, baseURL: `${base}/v1`, maxRetries: 0 });
  const anthropic = () => new Anthropic({ apiKey: KEY, baseURL: base, maxRetries: 0 });
  const chatTools: OpenAI.ChatCompletionTool[] = [
    { type: "function", function: { name: "get_weather", description: "Weather by city", parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] } } },
  ];
  const messageTools: Anthropic.Tool[] = [{ name: "get_weather", description: "Weather by city", input_schema: { type: "object", properties: { city: { type: "string" } }, required: ["city"] } }];
  const lastRequest = (): EngineRequest => engine.requests.at(-1)!;
  const templateKwargs = () => (lastRequest().input as { templateKwargs?: Record<string, unknown> }).templateKwargs;

  it("chat completions: the analysis as reasoning in the content, the final message as the answer, streamed as whole", async () => {
    engine.script = { deltas: ANSWER_SCRIPT };
    const params = { model: CHAT, messages: [{ role: "user" as const, content: "Hi!" }] };
    const whole = (await openai().chat.completions.create(params)).choices[0]!;
    expect(whole.finish_reason).toBe("stop");
    expect(whole.message.content).toBe("<think>A greeting. Reply in kind.</think>Hello there!");
    // Thinking off: the least effort gpt-oss has (it always reasons), and nothing constrained without tools.
    expect(templateKwargs()).toEqual({ enable_thinking: false, reasoning_effort: "low" });
    expect(lastRequest().constraint).toBeUndefined();
    const streamed = (await openai().chat.completions.stream({ ...params, stream: true }).finalChatCompletion()).choices[0]!;
    expect(streamed.message.content).toBe(whole.message.content);
  });

  it("chat completions: a commentary call as tool_calls, the preamble as content, constrained by the harmony grammar", async () => {
    engine.script = { deltas: CALL_SCRIPT };
    const params = { model: CHAT, messages: [{ role: "user" as const, content: "Weather in Paris?" }], tools: chatTools, tool_choice: "required" as const, chat_template_kwargs: { enable_thinking: true } };
    const whole = (await openai().chat.completions.create(params as OpenAI.ChatCompletionCreateParamsNonStreaming)).choices[0]!;
    expect(whole.finish_reason).toBe("tool_calls");
    expect(whole.message.content).toBe(`<think>${REASONING}</think>${PREAMBLE}`);
    expect(whole.message.tool_calls!.map((call) => [call.id, call.function.name, call.function.arguments])).toEqual([[expect.stringMatching(CALL_ID), "get_weather", '{"city":"Paris"}']]);
    expect(lastRequest().constraint).toEqual({ format: { type: "harmony", tools: [{ name: "get_weather", parameters: chatTools[0]!.function.parameters }], choice: "required" } });
    expect(templateKwargs()).toEqual({ enable_thinking: true, reasoning_effort: "medium" });

    const streamed = (await openai().chat.completions.stream({ ...params, stream: true } as OpenAI.ChatCompletionStreamParams).finalChatCompletion()).choices[0]!;
    expect([streamed.finish_reason, streamed.message.content]).toEqual(["tool_calls", whole.message.content]);
    expect(streamed.message.tool_calls!.map((call) => call.function)).toEqual(whole.message.tool_calls!.map((call) => call.function));

    // The call and its result go back to the engine as the conversation's history.
    engine.script = { deltas: ANSWER_SCRIPT };
    const call = whole.message.tool_calls![0]!;
    await openai().chat.completions.create({ model: CHAT, tools: chatTools, messages: [...params.messages, { role: "assistant", content: null, tool_calls: [call] }, { role: "tool", tool_call_id: call.id, content: "21 C" }] });
    expect((lastRequest().input as { messages: unknown[] }).messages.slice(1)).toMatchObject([
      { role: "assistant", tool_calls: [{ id: call.id, function: { name: "get_weather", arguments: '{"city":"Paris"}' } }] },
      { role: "tool", tool_call_id: call.id, content: "21 C" },
    ]);
  });

  it("messages: a thinking block, the preamble, a tool_use block; the effort from the budget; the turn goes back with its reasoning", async () => {
    engine.script = { deltas: CALL_SCRIPT };
    const params = { model: MESSAGES, max_tokens: 4096, thinking: { type: "enabled" as const, budget_tokens: 2048 }, messages: [{ role: "user" as const, content: "Weather in Paris?" }], tools: messageTools };
    const whole = await anthropic().messages.create(params);
    expect(whole.stop_reason).toBe("tool_use");
    expect(whole.content.map((block) => block.type)).toEqual(["thinking", "text", "tool_use"]);
    expect(whole.content[0]).toMatchObject({ type: "thinking", thinking: REASONING });
    expect(whole.content[1]).toEqual({ type: "text", text: PREAMBLE });
    expect(whole.content[2]).toEqual({ type: "tool_use", id: expect.stringMatching(CALL_ID), name: "get_weather", input: { city: "Paris" } });
    expect(templateKwargs()).toEqual({ enable_thinking: true, reasoning_effort: "low" });
    expect(lastRequest().thinkingBudget).toBeUndefined();
    expect(lastRequest().constraint?.format).toMatchObject({ type: "harmony", choice: "auto" });

    const streamed = await anthropic().messages.stream(params).finalMessage();
    expect(streamed.content.map((block) => (block.type === "tool_use" ? { ...block, id: "" } : block))).toEqual(whole.content.map((block) => (block.type === "tool_use" ? { ...block, id: "" } : block)));

    engine.script = { deltas: ANSWER_SCRIPT };
    const toolUse = whole.content[2] as Anthropic.ToolUseBlock;
    await anthropic().messages.create({ ...params, messages: [...params.messages, { role: "assistant", content: whole.content }, { role: "user", content: [{ type: "tool_result", tool_use_id: toolUse.id, content: "21 C" }] }] });
    expect((lastRequest().input as { messages: unknown[] }).messages.slice(1)).toMatchObject([
      { role: "assistant", reasoning_content: REASONING, tool_calls: [{ id: toolUse.id, function: { name: "get_weather" } }] },
      { role: "tool", tool_call_id: toolUse.id, content: "21 C" },
    ]);
  });

  it("responses: a reasoning item, a message and a function_call item, the effort as named, streamed as whole", async () => {
    engine.script = { deltas: CALL_SCRIPT };
    const tools: OpenAI.Responses.Tool[] = [{ type: "function", name: "get_weather", description: "Weather by city", parameters: chatTools[0]!.function.parameters!, strict: false }];
    const params = { model: CHAT, input: "Weather in Paris?", tools, reasoning: { effort: "high" as const } };
    const whole = await openai().responses.create(params);
    expect(whole.output.map((item) => item.type)).toEqual(["reasoning", "message", "function_call"]);
    expect(whole.output[0]).toMatchObject({ type: "reasoning", content: [{ type: "reasoning_text", text: REASONING }] });
    expect(whole.output_text).toBe(PREAMBLE);
    expect(whole.output[2]).toMatchObject({ type: "function_call", name: "get_weather", arguments: '{"city":"Paris"}', call_id: expect.stringMatching(CALL_ID) });
    expect(templateKwargs()).toEqual({ enable_thinking: true, reasoning_effort: "high" });

    const streamed = await openai().responses.stream(params).finalResponse();
    expect(streamed.output.map((item) => item.type)).toEqual(["reasoning", "message", "function_call"]);
    expect([streamed.output_text, (streamed.output[2] as OpenAI.Responses.ResponseFunctionToolCall).arguments]).toEqual([PREAMBLE, '{"city":"Paris"}']);
  });

  it("cut by max_tokens inside the call's arguments: no markup reaches the content, the partial call is kept, finish length", async () => {
    const cut = CALL_SCRIPT.join("").slice(0, -8); // ...{"city":
    engine.script = { deltas: deltas(cut), reason: "length" };
    const params = { model: CHAT, max_tokens: 60, messages: [{ role: "user" as const, content: "Weather in Paris?" }], tools: chatTools };
    const whole = (await openai().chat.completions.create(params)).choices[0]!;
    expect(whole.finish_reason).toBe("length");
    expect(whole.message.content).toBe(`<think>${REASONING}</think>${PREAMBLE}`);
    expect(whole.message.content!.replace(/<\/?think>/g, "")).not.toMatch(MARKUP);
    expect(whole.message.tool_calls!.map((call) => [call.function.name, call.function.arguments])).toEqual([["get_weather", '{"city":']]);

    const message = await anthropic().messages.create({ model: MESSAGES, max_tokens: 60, messages: params.messages, tools: messageTools });
    expect(message.stop_reason).toBe("max_tokens");
    expect(message.content.map((block) => block.type)).toEqual(["thinking", "text", "tool_use"]);
    expect(message.content[2]).toMatchObject({ name: "get_weather", input: {} });
  });
});
