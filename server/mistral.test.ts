// Mistral served: tiny-mistral (Q8_0; Mistral Nemo's Tekken tokenizer and chat template) behind `loom serve`'s server,
// both official SDKs, whole and streamed. The prompt the engine gets is the Nemo format as the file's own template
// renders it (the system prompt folded into the last user turn, the tools in [AVAILABLE_TOOLS] before it), tokenized
// as llama.cpp tokenizes that text, and the greedy reply is llama.cpp's greedy continuation of the same tokens. With a
// tool required, Mistral's grammar makes the random model write `[TOOL_CALLS][{"name": ..., "arguments": ...}]`,
// served as tool_calls / tool_use blocks (9-character ids, schema-valid arguments, no markup), and the call and its
// result go back through the template as it writes them.
import type Anthropic from "@anthropic-ai/sdk";
import type OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { mistralToolCallId } from "../engine/chat/mistral.js";
import { readGgufHeader } from "../engine/model/gguf/reader.js";
import { type LlamaCppReference, openLlamaCppReference } from "../engine/testing/llama-cpp.js";
import { failIfMissing, skipOutsideCi, titled } from "../engine/testing/fixtures.js";
import { type Tokenizer, tokenizerFromGguf } from "../engine/tokenizer/index.js";
import { ensureTestModel, testModelSkipReason } from "../scripts/test-models.js";
import { type ModelServer, startModelServer } from "./testing/model-server.js";

const skip = testModelSkipReason("tiny-mistral");
const SYSTEM = "Answer briefly.";
const USER = "What is the capital of France?";
/** The Nemo chat format for SYSTEM + USER, as its template renders it (no generation prompt: the turn ends at [/INST]). */
const RENDERED = `<s>[INST]${SYSTEM}\n\n${USER}[/INST]`;
const END_OF_TEXT = 2; // </s>

const SCHEMA = { type: "object", properties: { city: { type: "string", maxLength: 12 } }, required: ["city"], additionalProperties: false };
const QUESTION = "Weather in Paris?";
/** The tools as the template lists them (tojson's separators, keys in order). */
const AVAILABLE_TOOLS = '[AVAILABLE_TOOLS][{"type": "function", "function": {"name": "get_weather", "description": "Weather by city", ' +
  '"parameters": {"type": "object", "properties": {"city": {"type": "string", "maxLength": 12}}, "required": ["city"], "additionalProperties": false}}}][/AVAILABLE_TOOLS]';
/** Markup that must never reach a client. */
const MARKUP = /\[(TOOL_CALLS|\/?INST|\/?TOOL_RESULTS|\/?AVAILABLE_TOOLS)\]/;

describe.skipIf(skipOutsideCi(skip))(titled("tiny-mistral through the server", skip), () => {
  let model: ModelServer;
  let tokenizer: Tokenizer;
  let llama: LlamaCppReference;
  let openai: OpenAI;
  let anthropic: Anthropic;
  beforeAll(async () => {
    failIfMissing(skip);
    const path = await ensureTestModel("tiny-mistral", "gguf", "q8_0");
    tokenizer = tokenizerFromGguf(readGgufHeader(path).metadata, path);
    llama = await openLlamaCppReference(path);
    model = await startModelServer({ modelPath: path, contextSize: 1024 });
    openai = model.openai();
    anthropic = model.anthropic();
  }, 180_000);
  afterAll(async () => {
    await model?.close();
    await llama?.dispose();
  });

  /** The prompt tokens the engine makes of the last request the server sent it. */
  const engineTokens = async () => (await model.worker.prepareAhead(model.engine.requests.at(-1)!))?.tokens;
  /** llama.cpp's tokens of a rendered prompt that spells out <s> (which its tokenize adds again). */
  const llamaTokens = (rendered: string) => {
    const tokens = llama.tokenize(rendered);
    return tokens[0] === 1 && tokens[1] === 1 ? tokens.slice(1) : tokens;
  };
  /** llama.cpp's greedy reply to `prompt`, up to </s> or `count` tokens. */
  async function reference(prompt: number[], count: number): Promise<number[]> {
    const tokens = await llama.greedy(prompt, count);
    const end = tokens.indexOf(END_OF_TEXT);
    expect(end, "llama.cpp's reply is not empty").not.toBe(0);
    return end < 0 ? tokens : tokens.slice(0, end);
  }

  it("is served as a Mistral model with the JSON-list call layout", () => {
    expect(model.worker.model.syntax).toBe("mistral");
    expect(model.worker.model.chatTemplate).toBe("model");
    expect(model.worker.model.thinkTags).toBeUndefined(); // Nemo's Tekken has no [THINK] tokens
  });

  it("renders Mistral's chat format and replies as llama.cpp does, in chat completions, whole and streamed", async () => {
    const prompt = llamaTokens(RENDERED);
    const reply = await reference(prompt, 12);
    const messages = [{ role: "system" as const, content: SYSTEM }, { role: "user" as const, content: USER }];
    const whole = await openai.chat.completions.create({ model: model.chatModel, messages, max_tokens: 12, temperature: 0 });
    expect(await engineTokens()).toEqual(prompt);
    expect(whole.usage?.prompt_tokens).toBe(prompt.length);
    const expected = tokenizer.decode(reply);
    expect(whole.choices[0]!.message.content).toBe(expected);
    let streamed = "";
    for await (const chunk of await openai.chat.completions.create({ model: model.chatModel, messages, max_tokens: 12, temperature: 0, stream: true })) {
      streamed += chunk.choices[0]?.delta.content ?? "";
    }
    expect(streamed).toBe(expected);
  }, 120_000);

  it("renders the same prompt from Anthropic messages, whole and streamed", async () => {
    const prompt = llamaTokens(RENDERED);
    const reply = await reference(prompt, 12);
    const request = { model: model.messagesModel, system: SYSTEM, messages: [{ role: "user" as const, content: USER }], max_tokens: 12, temperature: 0 };
    const whole = await anthropic.messages.create(request);
    expect(await engineTokens()).toEqual(prompt);
    expect(whole.usage.input_tokens + (whole.usage.cache_read_input_tokens ?? 0) + (whole.usage.cache_creation_input_tokens ?? 0)).toBe(prompt.length);
    const expected = tokenizer.decode(reply);
    expect(whole.content.map((block) => (block.type === "text" ? block.text : "")).join("")).toBe(expected);
    let streamed = "";
    for await (const event of anthropic.messages.stream(request)) {
      if (event.type === "content_block_delta" && event.delta.type === "text_delta") streamed += event.delta.text;
    }
    expect(streamed).toBe(expected);
  }, 120_000);

  const chatTools: OpenAI.ChatCompletionTool[] = [{ type: "function", function: { name: "get_weather", description: "Weather by city", parameters: SCHEMA } }];
  const messageTools: Anthropic.Tool[] = [{ name: "get_weather", description: "Weather by city", input_schema: SCHEMA as Anthropic.Tool.InputSchema }];

  /** Checks a served call's arguments against SCHEMA and returns them. */
  const checkedArguments = (text: string) => {
    const args = JSON.parse(text) as Record<string, unknown>;
    expect(Object.keys(args)).toEqual(["city"]);
    expect(typeof args.city === "string" && args.city.length <= 12).toBe(true);
    return args as { city: string };
  };

  it("chat completions: a required tool is called in Mistral's format, served as tool_calls whole and streamed; the call and its result render back", async () => {
    // One call: the random model would otherwise go on listing calls until max_tokens.
    const params = { model: model.chatModel, messages: [{ role: "user" as const, content: QUESTION }], tools: chatTools, tool_choice: "required" as const, parallel_tool_calls: false, max_tokens: 80, temperature: 0 };
    const whole = await openai.chat.completions.create(params);
    expect(await engineTokens()).toEqual(llamaTokens(`<s>${AVAILABLE_TOOLS}[INST]${QUESTION}[/INST]`));
    const raw = [...model.engine.outputs.values()].at(-1)!.text;
    expect(raw).toMatch(/^\[TOOL_CALLS\]\[\{"name": ?"get_weather", ?"arguments": ?\{/);
    const choice = whole.choices[0]!;
    expect(choice.finish_reason).toBe("tool_calls");
    expect(choice.message.content ?? "").not.toMatch(MARKUP);
    const call = choice.message.tool_calls![0]! as OpenAI.ChatCompletionMessageFunctionToolCall;
    expect(call.id).toMatch(/^[A-Za-z0-9]{9}$/);
    expect(call.function.name).toBe("get_weather");
    const args = checkedArguments(call.function.arguments);
    const streamed = (await openai.chat.completions.stream({ ...params, stream: true }).finalChatCompletion()).choices[0]!;
    expect(streamed.finish_reason).toBe("tool_calls");
    const streamedCall = streamed.message.tool_calls![0]! as OpenAI.ChatCompletionMessageFunctionToolCall;
    expect(streamedCall.function).toEqual(call.function);
    expect(streamed.message.content ?? "").toBe(choice.message.content ?? "");

    // The follow-up turn: the call (with the id loom gave it) and the tool's result, as the template writes them.
    const next = await openai.chat.completions.create({
      ...params,
      tool_choice: "auto",
      max_tokens: 4,
      messages: [...params.messages, { role: "assistant", content: null, tool_calls: [call] }, { role: "tool", tool_call_id: call.id, content: "21 C" }],
    });
    expect(next.choices[0]!.message.content ?? "").not.toMatch(MARKUP);
    expect(await engineTokens()).toEqual(llamaTokens(
      `<s>${AVAILABLE_TOOLS}[INST]${QUESTION}[/INST][TOOL_CALLS][{"name": "get_weather", "arguments": ${JSON.stringify({ city: args.city }).replace('":', '": ')}, "id": "${call.id}"}]</s>` +
      `[TOOL_RESULTS]{"content": 21 C, "call_id": "${call.id}"}[/TOOL_RESULTS]`,
    ));
  }, 180_000);

  it("messages: the call as a tool_use block, whole and streamed; a client's own ids render as 9-character ones", async () => {
    const params = { model: model.messagesModel, max_tokens: 80, temperature: 0, messages: [{ role: "user" as const, content: QUESTION }], tools: messageTools, tool_choice: { type: "tool" as const, name: "get_weather" } };
    const whole = await anthropic.messages.create(params);
    const streamed = await anthropic.messages.stream(params).finalMessage();
    expect(whole.stop_reason).toBe("tool_use");
    const withoutIds = (content: Anthropic.ContentBlock[]) => content.map((block) => (block.type === "tool_use" ? { ...block, id: "" } : block));
    expect(withoutIds(streamed.content)).toEqual(withoutIds(whole.content));
    for (const block of whole.content) if (block.type === "text") expect(block.text).not.toMatch(MARKUP);
    const call = whole.content.find((block): block is Anthropic.ToolUseBlock => block.type === "tool_use")!;
    expect(call.id).toMatch(/^[A-Za-z0-9]{9}$/);
    const args = checkedArguments(JSON.stringify(call.input));

    // Sent back under an id of another client's making, the call and its result still render (the id mapped alike).
    const clientId = "toolu_01XFDUDYJgAACzvnptvVer6u";
    const next = await anthropic.messages.create({
      ...params,
      tool_choice: { type: "auto" },
      max_tokens: 4,
      messages: [...params.messages, { role: "assistant", content: [{ ...call, id: clientId }] }, { role: "user", content: [{ type: "tool_result", tool_use_id: clientId, content: "21 C" }] }],
    });
    expect(next.usage.input_tokens).toBeGreaterThan(whole.usage.input_tokens);
    const id = mistralToolCallId(clientId);
    expect(await engineTokens()).toEqual(llamaTokens(
      `<s>${AVAILABLE_TOOLS}[INST]${QUESTION}[/INST][TOOL_CALLS][{"name": "get_weather", "arguments": ${JSON.stringify({ city: args.city }).replace('":', '": ')}, "id": "${id}"}]</s>` +
      `[TOOL_RESULTS]{"content": 21 C, "call_id": "${id}"}[/TOOL_RESULTS]`,
    ));
  }, 180_000);
});
