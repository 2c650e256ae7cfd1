// Conversations for harmony templates (gpt-oss): reasoning as `thinking`, one call per assistant message with object
// arguments, each result after its own call; rendered by gpt-oss's own template, and through the prompt step with
// its real tokenizer.
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { preparePrompt } from "../prompt.js";
import { FIXTURES, REPOSITORY_ROOT, failIfMissing, missingFixtureReason, skipOutsideCi, titled } from "../testing/fixtures.js";
import { tokenizerFromHuggingFace } from "../tokenizer/huggingface.js";
import { harmonyMessages, harmonyTools, isHarmonyTemplate } from "./harmony.js";
import type { ChatMessage } from "./messages.js";
import { renderChatTemplate } from "./template.js";

const call = (id: string, name: string, args: string) => ({ id, type: "function" as const, function: { name, arguments: args } });

const CONVERSATION: ChatMessage[] = [
  { role: "system", content: "Be brief." },
  { role: "user", content: "Weather in Paris and Oslo?" },
  { role: "assistant", content: "Checking both.", reasoning_content: "Two cities: two calls.", tool_calls: [call("c1", "get_weather", '{"city":"Paris"}'), call("c2", "get_weather", '{"city":"Oslo"}')] },
  { role: "tool", content: "rain", tool_call_id: "c2" },
  { role: "tool", content: "sun", tool_call_id: "c1" },
  { role: "assistant", content: "Paris: sun. Oslo: rain.", reasoning_content: "Both known." },
  { role: "user", content: "Thanks!" },
];

describe("harmonyMessages", () => {
  it("splits calls into one message each, followed by the results that answer them, reasoning as thinking", () => {
    expect(harmonyMessages(CONVERSATION)).toEqual([
      { role: "system", content: "Be brief." },
      { role: "user", content: "Weather in Paris and Oslo?" },
      // Beside a call, the template refuses text and reasoning together: the reasoning stays.
      { role: "assistant", content: "", thinking: "Two cities: two calls.", tool_calls: [{ ...call("c1", "get_weather", ""), function: { name: "get_weather", arguments: { city: "Paris" } } }] },
      { role: "tool", content: "sun", tool_call_id: "c1" },
      { role: "assistant", content: "", tool_calls: [{ ...call("c2", "get_weather", ""), function: { name: "get_weather", arguments: { city: "Oslo" } } }] },
      { role: "tool", content: "rain", tool_call_id: "c2" },
      { role: "assistant", content: "Paris: sun. Oslo: rain.", thinking: "Both known." },
      { role: "user", content: "Thanks!" },
    ]);
  });

  it("joins leading system messages, keeps a call's text without reasoning, and arguments that are not JSON", () => {
    expect(harmonyMessages([
      { role: "system", content: "A." },
      { role: "system", content: "B." },
      { role: "assistant", content: "Let me look.", tool_calls: [call("c1", "f", "not json")] },
      { role: "tool", content: "x" },
    ])).toEqual([
      { role: "system", content: "A.\n\nB." },
      { role: "assistant", content: "Let me look.", tool_calls: [call("c1", "f", "not json")] },
      { role: "tool", content: "x" },
    ]);
  });

  it("takes reasoning sent back in the content between think tags (as chat completions returns it) as reasoning", () => {
    expect(harmonyMessages([{ role: "assistant", content: "<think>Easy.</think>It is 4." }, { role: "assistant", content: "<think>x</think>y", reasoning_content: "given" }])).toEqual([
      { role: "assistant", content: "It is 4.", thinking: "Easy." },
      { role: "assistant", content: "<think>x</think>y", thinking: "given" },
    ]);
  });

  it("knows a harmony template by its <|channel|> marker, when the vocabulary has it", () => {
    expect(isHarmonyTemplate("{{ '<|start|>assistant<|channel|>final<|message|>' }}")).toBe(true);
    expect(isHarmonyTemplate("{{ '<|start|>assistant<|channel|>final' }}", () => false)).toBe(false);
    expect(isHarmonyTemplate("{{ '<|im_start|>assistant' }}")).toBe(false);
    expect(isHarmonyTemplate(null)).toBe(false);
  });
});

const TEMPLATE = join(REPOSITORY_ROOT, "scripts", "chat-templates", "gpt-oss.jinja");
const WEATHER_TOOL = { type: "function", function: { name: "get_weather", description: "Weather now", parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] } } };

const templateReason = existsSync(TEMPLATE) ? undefined : `missing ${TEMPLATE}`;
describe.skipIf(skipOutsideCi(templateReason))(titled("gpt-oss's chat template", templateReason), () => {
  it("renders a multi-turn tool conversation as harmony: the pending call's reasoning, each call, each result under its own name", () => {
    failIfMissing(templateReason);
    const template = readFileSync(TEMPLATE, "utf8");
    const conversation = CONVERSATION.slice(0, 5);
    const prompt = renderChatTemplate(template, harmonyMessages(conversation), { addGenerationPrompt: true, kwargs: { reasoning_effort: "low" }, tools: [WEATHER_TOOL] });
    expect(prompt).toContain("Reasoning: low");
    expect(prompt).toContain("# Instructions\n\nBe brief.");
    expect(prompt.slice(prompt.indexOf("<|start|>user"))).toBe(
      "<|start|>user<|message|>Weather in Paris and Oslo?<|end|>" +
      "<|start|>assistant<|channel|>analysis<|message|>Two cities: two calls.<|end|>" +
      '<|start|>assistant to=functions.get_weather<|channel|>commentary json<|message|>{"city": "Paris"}<|call|>' +
      '<|start|>functions.get_weather to=assistant<|channel|>commentary<|message|>"sun"<|end|>' +
      '<|start|>assistant to=functions.get_weather<|channel|>commentary json<|message|>{"city": "Oslo"}<|call|>' +
      '<|start|>functions.get_weather to=assistant<|channel|>commentary<|message|>"rain"<|end|>' +
      "<|start|>assistant",
    );
    // A function without a description gets an empty one: the template adds it to a string.
    const bare = { type: "function", function: { name: "now", parameters: { type: "object", properties: {} } } };
    expect(() => renderChatTemplate(template, [{ role: "user", content: "Time?" }], { addGenerationPrompt: true, tools: [bare] })).toThrow(/undefined/);
    expect(renderChatTemplate(template, [{ role: "user", content: "Time?" }], { addGenerationPrompt: true, tools: harmonyTools([bare]) })).toContain("// \ntype now = () => any;");
    // Unadapted, the template refuses the turn (text and reasoning beside a call) or garbles the arguments.
    expect(() => renderChatTemplate(template, conversation.map((message) => message.reasoning_content ? { ...message, thinking: message.reasoning_content } : message), { addGenerationPrompt: true })).toThrow(/Cannot pass both content and thinking/);
  });

  const reason = templateReason ?? missingFixtureReason(FIXTURES.gptOssDirectory);
  it.skipIf(skipOutsideCi(reason))("prepares the prompt with the markers as single tokens, earlier reasoning dropped after a final answer", () => {
    failIfMissing(reason);
    const tokenizer = tokenizerFromHuggingFace(FIXTURES.gptOssDirectory);
    const template = readFileSync(TEMPLATE, "utf8");
    const { tokens } = preparePrompt({ tokenizer, chatTemplate: template, vocabSize: tokenizer.vocabSize }, { messages: CONVERSATION, tools: [WEATHER_TOOL], templateKwargs: { reasoning_effort: "high" } }, undefined);
    const text = tokenizer.decode(tokens);
    expect(text).toContain("Reasoning: high");
    expect(text).toContain("<|start|>assistant<|channel|>final<|message|>Paris: sun. Oslo: rain.<|end|><|start|>user<|message|>Thanks!<|end|><|start|>assistant");
    // A final answer came after the calls: their reasoning is dropped, as the template does for past turns.
    expect(text).not.toContain("Two cities");
    const channel = tokenizer.tokenId("<|channel|>")!;
    expect(tokens.filter((token) => token === channel).length).toBe((text.match(/<\|channel\|>/g) ?? []).length);
  }, 120_000);
});
