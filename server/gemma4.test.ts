// Gemma 4 served: tiny-gemma4's weights (Q8_0) with the generator's Gemma 4 vocabulary and chat template (tokenizer
// "gemma4", scripts/gemma4-tokenizer.ts) behind `loom serve`'s server, with the official SDKs. The model is served in
// Gemma 4's format; the prompt the engine gets is the template's text as llama.cpp tokenizes it; with a tool required,
// the grammar makes the random model write `<|tool_call>call:get_weather{city:<|"|>...<|"|>}<tool_call|>`, served as
// tool_calls / tool_use (schema-valid arguments, no markup), whole and streamed, and the call and its result go back
// through the template as it writes them.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type Anthropic from "@anthropic-ai/sdk";
import type OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type LlamaCppReference, openLlamaCppReference } from "../engine/testing/llama-cpp.js";
import { failIfMissing, skipOutsideCi, titled } from "../engine/testing/fixtures.js";
import { GENERATOR_VERSION } from "../scripts/generate-model.js";
import { type ModelPreset, getPreset } from "../scripts/model-presets.js";
import { missingTokenizerFiles } from "../scripts/tokenizer-files.js";
import { testModelSkipReason } from "../scripts/test-models.js";
import { writeGgufModel } from "../scripts/write-gguf-model.js";
import { type ModelServer, startModelServer } from "./testing/model-server.js";

const missing = missingTokenizerFiles("gemma4");
const skip = testModelSkipReason("tiny-gemma4") ?? (missing.length > 0 ? `missing: ${missing.join(", ")}` : undefined);
/**
 * tiny-gemma4 with the Gemma 4 vocabulary and template.
 * NOTE: the cast goes once the preset's TokenizerName lists "gemma4" (the preset may then take it itself).
 */
const PRESET = { ...getPreset("tiny-gemma4"), name: "tiny-gemma4-chat", tokenizer: "gemma4" } as unknown as ModelPreset;

const Q = '<|"|>';
const SCHEMA = { type: "object", properties: { city: { type: "string", enum: ["Paris", "Lyon", "Nice"] } }, required: ["city"] };
const QUESTION = "Weather in Paris?";
/** The tool as the template declares it. */
const DECLARATION = `<|tool>declaration:get_weather{description:${Q}Weather by city${Q},parameters:{properties:{city:{enum:[${Q}Paris${Q},${Q}Lyon${Q},${Q}Nice${Q}],type:${Q}STRING${Q}}},required:[${Q}city${Q}],type:${Q}OBJECT${Q}}}<tool|>`;
/** Markup that must never reach a client. */
const MARKUP = /<\|?(tool_call|tool_response|turn|channel|"|tool)\|?>/;

describe.skipIf(skipOutsideCi(skip))(titled("tiny-gemma4 with Gemma 4's tokenizer and template through the server", skip), () => {
  let directory: string;
  let model: ModelServer;
  let llama: LlamaCppReference;
  let openai: OpenAI;
  let anthropic: Anthropic;
  beforeAll(async () => {
    failIfMissing(skip);
    directory = mkdtempSync(join(tmpdir(), "loom-gemma4-"));
    const path = join(directory, "tiny-gemma4-chat.q8_0.gguf");
    writeGgufModel(PRESET, "q8_0", 1, path, { version: GENERATOR_VERSION, seed: 1 });
    llama = await openLlamaCppReference(path, { vocabOnly: true });
    model = await startModelServer({ modelPath: path, contextSize: 1024 });
    openai = model.openai();
    anthropic = model.anthropic();
  }, 300_000);
  afterAll(async () => {
    await model?.close();
    await llama?.dispose();
    if (directory) rmSync(directory, { recursive: true, force: true });
  });

  /** The prompt tokens the engine makes of the last request the server sent it. */
  const engineTokens = async () => (await model.worker.prepareAhead(model.engine.requests.at(-1)!))?.tokens;
  /** llama.cpp's tokens of a rendered prompt that spells out <bos> (which its tokenize adds again). */
  const llamaTokens = (rendered: string) => {
    const tokens = llama.tokenize(rendered);
    return tokens[0] === 2 && tokens[1] === 2 ? tokens.slice(1) : tokens;
  };

  it("is served in Gemma 4's format, its prompt tokenized as llama.cpp tokenizes the template's text", async () => {
    expect(model.worker.model.syntax).toBe("gemma4");
    expect(model.worker.model.thinkTags).toEqual({ open: "<|channel>thought", close: "<channel|>" });
    const messages = [{ role: "system" as const, content: "Answer briefly." }, { role: "user" as const, content: "What is the capital of France?" }];
    const whole = await openai.chat.completions.create({ model: model.chatModel, messages, max_tokens: 4, temperature: 0 });
    const prompt = llamaTokens("<bos><|turn>system\nAnswer briefly.<turn|>\n<|turn>user\nWhat is the capital of France?<turn|>\n<|turn>model\n<|channel>thought\n<channel|>");
    expect(await engineTokens()).toEqual(prompt);
    expect(whole.usage?.prompt_tokens).toBe(prompt.length);
  }, 120_000);

  const chatTools: OpenAI.ChatCompletionTool[] = [{ type: "function", function: { name: "get_weather", description: "Weather by city", parameters: SCHEMA } }];
  const messageTools: Anthropic.Tool[] = [{ name: "get_weather", description: "Weather by city", input_schema: SCHEMA as Anthropic.Tool.InputSchema }];
  const checkedCity = (args: Record<string, unknown>) => {
    expect(Object.keys(args)).toEqual(["city"]);
    expect(SCHEMA.properties.city.enum).toContain(args.city);
    return args.city as string;
  };

  it("chat completions: a required tool is called in Gemma 4's notation, served as tool_calls whole and streamed; the call and its result render back", async () => {
    const params = { model: model.chatModel, messages: [{ role: "user" as const, content: QUESTION }], tools: chatTools, tool_choice: "required" as const, parallel_tool_calls: false, max_tokens: 40, temperature: 0 };
    const whole = await openai.chat.completions.create(params);
    expect(await engineTokens()).toEqual(llamaTokens(`<bos><|turn>system\n${DECLARATION}<turn|>\n<|turn>user\n${QUESTION}<turn|>\n<|turn>model\n<|channel>thought\n<channel|>`));
    const raw = [...model.engine.outputs.values()].at(-1)!.text;
    expect(raw).toMatch(/^<\|tool_call>call:get_weather\{city:<\|"\|>(Paris|Lyon|Nice)<\|"\|>\}<tool_call\|>/);
    const choice = whole.choices[0]!;
    expect(choice.finish_reason).toBe("tool_calls");
    expect(choice.message.content ?? "").not.toMatch(MARKUP);
    const call = choice.message.tool_calls![0]! as OpenAI.ChatCompletionMessageFunctionToolCall;
    expect(call.function.name).toBe("get_weather");
    const city = checkedCity(JSON.parse(call.function.arguments) as Record<string, unknown>);
    const streamed = (await openai.chat.completions.stream({ ...params, stream: true }).finalChatCompletion()).choices[0]!;
    expect(streamed.finish_reason).toBe("tool_calls");
    expect((streamed.message.tool_calls![0]! as OpenAI.ChatCompletionMessageFunctionToolCall).function).toEqual(call.function);
    expect(streamed.message.content ?? "").toBe(choice.message.content ?? "");

    // The follow-up turn: the call and the tool's result, as the template writes them (the model's turn stays open).
    const next = await openai.chat.completions.create({
      ...params,
      tool_choice: "auto",
      max_tokens: 4,
      messages: [...params.messages, { role: "assistant", content: null, tool_calls: [call] }, { role: "tool", tool_call_id: call.id, content: "21 C" }],
    });
    expect(next.choices[0]!.message.content ?? "").not.toMatch(MARKUP);
    expect(await engineTokens()).toEqual(llamaTokens(
      `<bos><|turn>system\n${DECLARATION}<turn|>\n<|turn>user\n${QUESTION}<turn|>\n<|turn>model\n` +
      `<|tool_call>call:get_weather{city:${Q}${city}${Q}}<tool_call|><|tool_response>response:get_weather{value:${Q}21 C${Q}}<tool_response|>`,
    ));
  }, 180_000);

  it("messages: the call as a tool_use block, whole and streamed", async () => {
    const params = { model: model.messagesModel, max_tokens: 40, temperature: 0, messages: [{ role: "user" as const, content: QUESTION }], tools: messageTools, tool_choice: { type: "tool" as const, name: "get_weather" } };
    const whole = await anthropic.messages.create(params);
    const streamed = await anthropic.messages.stream(params).finalMessage();
    expect(whole.stop_reason).toBe("tool_use");
    const withoutIds = (content: Anthropic.ContentBlock[]) => content.map((block) => (block.type === "tool_use" ? { ...block, id: "" } : block));
    expect(withoutIds(streamed.content)).toEqual(withoutIds(whole.content));
    for (const block of whole.content) if (block.type === "text") expect(block.text).not.toMatch(MARKUP);
    const call = whole.content.find((block): block is Anthropic.ToolUseBlock => block.type === "tool_use")!;
    expect(call.name).toBe("get_weather");
    checkedCity(call.input as Record<string, unknown>);
  }, 180_000);
});
