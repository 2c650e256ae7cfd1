// gpt-oss end to end: the random-weight tiny-gpt-oss (o200k_harmony tokenizer, gpt-oss's own chat template) served on
// an engine thread and asked through the official openai and @anthropic-ai/sdk clients. Its words are random, so the
// tests hold what must be true whatever it writes: with tools, the harmony grammar makes its reply a harmony reply
// from the first token, every wire format serves it without markup, streamed as whole, and a call's arguments follow
// the tool's schema; the conversation with its reasoning, call and result renders through the template.
import type Anthropic from "@anthropic-ai/sdk";
import type OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { missingTestModelFixtures } from "../scripts/test-models.js";
import { failIfMissing, skipOutsideCi, titled } from "../engine/testing/fixtures.js";
import { type ModelServer, startModelServer } from "./testing/model-server.js";

const missing = missingTestModelFixtures("tiny-gpt-oss");
const reason = missing.length > 0 ? `missing ${missing.join(", ")}` : undefined;

/** Harmony markup, or the start of a recipient, in served text. */
const MARKUP = /<\|(channel|message|start|end|constrain|return|call)\|>|to=functions\./;
const SCHEMA = { type: "object", properties: { city: { type: "string", maxLength: 12 } }, required: ["city"], additionalProperties: false };

describe.skipIf(skipOutsideCi(reason))(titled("tiny-gpt-oss over HTTP with the official SDKs", reason), () => {
  let model: ModelServer;
  let openai: OpenAI;
  let anthropic: Anthropic;

  beforeAll(async () => {
    failIfMissing(reason);
    model = await startModelServer({ preset: "tiny-gpt-oss", key: "sk-oss", contextSize: 2048 });
    openai = model.openai();
    anthropic = model.anthropic();
  }, 300_000);

  afterAll(() => model?.close());

  const chatTools: OpenAI.ChatCompletionTool[] = [{ type: "function", function: { name: "get_weather", description: "Weather by city", parameters: SCHEMA } }];
  const messageTools: Anthropic.Tool[] = [{ name: "get_weather", description: "Weather by city", input_schema: SCHEMA as Anthropic.Tool.InputSchema }];
  const question = "Weather in Paris?";

  it("is served as a harmony model: its template renders the prompt and takes the reasoning effort", async () => {
    expect(model.worker.model.syntax).toBe("harmony");
    const params = { model: model.chatModel, messages: [{ role: "user" as const, content: "Hi" }], max_tokens: 24, temperature: 0, chat_template_kwargs: { enable_thinking: true } };
    const whole = await openai.chat.completions.create(params as OpenAI.ChatCompletionCreateParamsNonStreaming);
    const streamed = await openai.chat.completions.stream({ ...params, stream: true } as OpenAI.ChatCompletionStreamParams).finalChatCompletion();
    expect(streamed.choices[0]!.message.content).toBe(whole.choices[0]!.message.content);
    expect(model.engine.requests.at(-1)!.input).toMatchObject({ templateKwargs: { reasoning_effort: "medium" } });
    const counted = await anthropic.messages.countTokens({ model: model.messagesModel, messages: [{ role: "user", content: "Hi" }] });
    expect(counted.input_tokens).toBe(whole.usage!.prompt_tokens);
  });

  for (const stream of [false, true]) {
    it(`${stream ? "streamed" : "whole"}: with a tool required, the reply is harmony from its first token and comes out as reasoning and a call, never markup`, async () => {
      const params = { model: model.chatModel, messages: [{ role: "user" as const, content: question }], tools: chatTools, tool_choice: "required" as const, max_tokens: 160, temperature: 0 };
      const completion = stream
        ? await openai.chat.completions.stream({ ...params, stream: true }).finalChatCompletion()
        : await openai.chat.completions.create(params);
      const choice = completion.choices[0]!;
      const raw = [...model.engine.outputs.values()].at(-1)!.text;
      expect(raw).toMatch(/^(<\|channel\|>| to=functions\.get_weather)/);
      expect((choice.message.content ?? "").replace(/<\/?think>/g, "")).not.toMatch(MARKUP);
      expect(["tool_calls", "length"]).toContain(choice.finish_reason);
      if (choice.finish_reason === "tool_calls") {
        const call = choice.message.tool_calls![0]!;
        expect(call.function.name).toBe("get_weather");
        const args = JSON.parse(call.function.arguments) as Record<string, unknown>;
        expect(Object.keys(args)).toEqual(["city"]);
        expect(typeof args.city === "string" && args.city.length <= 12).toBe(true);
      }
    }, 120_000);
  }

  it("messages: the same reply as thinking, text and tool_use blocks; the turn goes back through the template", async () => {
    const params = { model: model.messagesModel, max_tokens: 160, temperature: 0, messages: [{ role: "user" as const, content: question }], tools: messageTools, tool_choice: { type: "tool" as const, name: "get_weather" } };
    const whole = await anthropic.messages.create(params);
    const streamed = await anthropic.messages.stream(params).finalMessage();
    const withoutIds = (content: Anthropic.ContentBlock[]) => content.map((block) => (block.type === "tool_use" ? { ...block, id: "" } : block));
    expect(withoutIds(streamed.content)).toEqual(withoutIds(whole.content));
    expect(["tool_use", "max_tokens"]).toContain(whole.stop_reason);
    for (const block of whole.content) {
      if (block.type === "text") expect(block.text).not.toMatch(MARKUP);
      if (block.type === "thinking") expect(block.thinking).not.toMatch(MARKUP);
    }
    const call = whole.content.find((block): block is Anthropic.ToolUseBlock => block.type === "tool_use");
    if (whole.stop_reason === "tool_use") expect(Object.keys(call!.input as object)).toEqual(["city"]);
    if (!call) return;
    // The assistant turn (its reasoning and call) and the tool's result render through gpt-oss's template.
    const next = await anthropic.messages.create({
      ...params,
      tool_choice: { type: "auto" },
      max_tokens: 8,
      messages: [...params.messages, { role: "assistant", content: whole.content }, { role: "user", content: [{ type: "tool_result", tool_use_id: call.id, content: "21 C" }] }],
    });
    expect(next.usage.input_tokens).toBeGreaterThan(whole.usage.input_tokens);
  }, 180_000);
});
