// Gemma 4's chat template (scripts/chat-templates/gemma-4.jinja, google/gemma-4-31B-it's): how loom finds it, and
// conversations adapted to it (argument objects), rendered with a call, its result, reasoning and a later turn.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { REPOSITORY_ROOT } from "../testing/fixtures.js";
import { gemma4Messages, isGemma4Template, withGemma4ModelTurn } from "./gemma4.js";
import type { ChatMessage } from "./messages.js";
import { renderChatTemplate } from "./template.js";

const TEMPLATE = readFileSync(join(REPOSITORY_ROOT, "scripts", "chat-templates", "gemma-4.jinja"), "utf8");
const TOOLS = [{ type: "function", function: { name: "get_weather", description: "Weather now", parameters: { type: "object", properties: { city: { type: "string", description: "City" } }, required: ["city"] } } }];
const Q = '<|"|>';
const SYSTEM = `<bos><|turn>system\nBe brief.<|tool>declaration:get_weather{description:${Q}Weather now${Q},parameters:{properties:{city:{description:${Q}City${Q},type:${Q}STRING${Q}}},required:[${Q}city${Q}],type:${Q}OBJECT${Q}}}<tool|><turn|>\n`;
const CALL = `<|tool_call>call:get_weather{city:${Q}Paris${Q},days:2}<tool_call|><|tool_response>response:get_weather{value:${Q}sunny${Q}}<tool_response|>`;

const CONVERSATION: ChatMessage[] = [
  { role: "system", content: "Be brief." },
  { role: "user", content: "Weather in Paris?" },
  { role: "assistant", content: "", reasoning_content: "Need the tool.", tool_calls: [{ id: "call_1", type: "function", function: { name: "get_weather", arguments: '{"city": "Paris", "days": 2}' } }] },
  { role: "tool", tool_call_id: "call_1", content: "sunny" },
  { role: "assistant", content: "Sunny." },
  { role: "user", content: "Thanks" },
];

const render = (messages: ChatMessage[], thinking: boolean) =>
  renderChatTemplate(TEMPLATE, gemma4Messages(messages), { addGenerationPrompt: true, bosToken: "<bos>", tools: TOOLS, kwargs: { enable_thinking: thinking } });

describe("Gemma 4's template", () => {
  it("is told by its '<|tool_call>call:' and the vocabulary's call, string and channel tokens", () => {
    expect(isGemma4Template(TEMPLATE)).toBe(true);
    expect(isGemma4Template(TEMPLATE, (text) => text !== '<|"|>')).toBe(false);
    expect(isGemma4Template("{{ '<tool_call>' }}")).toBe(false);
    expect(isGemma4Template(null)).toBe(false);
  });

  it("renders a call (arguments given as JSON text), its result, and reasoning only after the last user turn", () => {
    expect(render(CONVERSATION.slice(0, 4), false)).toBe(`${SYSTEM}<|turn>user\nWeather in Paris?<turn|>\n<|turn>model\n<|channel>thought\nNeed the tool.\n<channel|>${CALL}`);
    expect(render(CONVERSATION, false)).toBe(`${SYSTEM}<|turn>user\nWeather in Paris?<turn|>\n<|turn>model\n${CALL}Sunny.<turn|>\n<|turn>user\nThanks<turn|>\n<|turn>model\n<|channel>thought\n<channel|>`);
    expect(render(CONVERSATION, true)).toBe(`${SYSTEM.replace("system\n", "system\n<|think|>\n")}<|turn>user\nWeather in Paris?<turn|>\n<|turn>model\n${CALL}Sunny.<turn|>\n<|turn>user\nThanks<turn|>\n<|turn>model\n`);
  });

  it("opens the model's turn where the template ends one without (text beside calls and their results), as llama.cpp does", () => {
    const texted: ChatMessage[] = [...CONVERSATION.slice(0, 2), { ...CONVERSATION[2]!, content: "Let me check." }, CONVERSATION[3]!];
    const prompt = render(texted, false);
    expect(prompt.endsWith(`${CALL}Let me check.<turn|>\n`)).toBe(true);
    expect(withGemma4ModelTurn(prompt)).toBe(`${prompt}<|turn>model\n`);
    // Where the template left the turn open for the model (after results alone), nothing is added.
    const open = render(CONVERSATION.slice(0, 4), false);
    expect(withGemma4ModelTurn(open)).toBe(open);
  });

  it("leaves an empty list of calls out and other messages as they are", () => {
    expect(gemma4Messages([{ role: "assistant", content: "Hi", tool_calls: [] }])).toEqual([{ role: "assistant", content: "Hi" }]);
    const object = { id: "c", type: "function" as const, function: { name: "f", arguments: { a: 1 } } };
    expect(gemma4Messages([{ role: "assistant", content: "", tool_calls: [object] }])[0]!.tool_calls).toEqual([object]);
  });
});
