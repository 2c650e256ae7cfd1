// Tests for rendering real chat templates (SmolLM2's ChatML, Qwen3's) and for template errors.

import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { FIXTURES, failIfMissing, missingFixtureReason, skipOutsideCi, titled } from "../testing/fixtures.js";
import { compileChatTemplate, compiledTemplateCount } from "./compile.js";
import { ChatTemplateError, NoChatTemplateError } from "./errors.js";
import type { ChatMessage } from "./messages.js";
import { renderChatTemplate } from "./template.js";

// Expected strings below were worked out by reading each template, and agree with Python jinja2 3.1 rendering the
// same templates with transformers' settings (trim_blocks, lstrip_blocks, tojson with ensure_ascii=False).

/** SmolLM2's template from the shared folder; Qwen3's tokenizer_config.json from a dev dependency. */
const smollm2Reason = missingFixtureReason(FIXTURES.smollm2Template);
const qwen3Reason = missingFixtureReason(FIXTURES.qwen3Directory);
const QWEN3_CONFIG = join(FIXTURES.qwen3Directory, "tokenizer_config.json");

/** SmolLM2's template (its group is skipped outside CI when the file is missing; under CI the test fails). */
function smollm2Template(): string {
  failIfMissing(smollm2Reason);
  return readFileSync(FIXTURES.smollm2Template, "utf8");
}

/** Qwen3's template, under the same rule. */
function qwen3Template(): string {
  failIfMissing(qwen3Reason);
  return (JSON.parse(readFileSync(QWEN3_CONFIG, "utf8")) as { chat_template: string }).chat_template;
}

const DEFAULT_SMOLLM_SYSTEM = "<|im_start|>system\nYou are a helpful AI assistant named SmolLM, trained by Hugging Face<|im_end|>\n";

describe.skipIf(skipOutsideCi(smollm2Reason))(titled("SmolLM2 template (ChatML)", smollm2Reason), () => {
  it("inserts its default system prompt when the conversation has none", () => {
    const template = smollm2Template();
    const rendered = renderChatTemplate(template, [{ role: "user", content: "Hi" }], { addGenerationPrompt: true });
    expect(rendered).toBe(`${DEFAULT_SMOLLM_SYSTEM}<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n`);
  });

  it("uses the given system prompt, renders every turn, and adds the generation prompt only when asked", () => {
    const template = smollm2Template();
    const messages: ChatMessage[] = [
      { role: "system", content: "S" },
      { role: "user", content: "What is 2+2?" },
      { role: "assistant", content: "4" },
      { role: "user", content: "And 3+3?" },
    ];
    const body =
      "<|im_start|>system\nS<|im_end|>\n<|im_start|>user\nWhat is 2+2?<|im_end|>\n" +
      "<|im_start|>assistant\n4<|im_end|>\n<|im_start|>user\nAnd 3+3?<|im_end|>\n";
    expect(renderChatTemplate(template, messages, { addGenerationPrompt: true })).toBe(`${body}<|im_start|>assistant\n`);
    expect(renderChatTemplate(template, messages, { addGenerationPrompt: false })).toBe(body);
  });
});

describe.skipIf(skipOutsideCi(qwen3Reason))(titled("Qwen3 template", qwen3Reason), () => {
  const systemAndUser: ChatMessage[] = [
    { role: "system", content: "You are terse." },
    { role: "user", content: "Hi" },
  ];
  const prefix = "<|im_start|>system\nYou are terse.<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n";

  it("opens a plain assistant turn by default and with enable_thinking true", () => {
    const template = qwen3Template();
    expect(renderChatTemplate(template, systemAndUser, { addGenerationPrompt: true })).toBe(
      `${prefix}<|im_start|>assistant\n`,
    );
    expect(
      renderChatTemplate(template, systemAndUser, { addGenerationPrompt: true, kwargs: { enable_thinking: true } }),
    ).toBe(`${prefix}<|im_start|>assistant\n`);
  });

  it("inserts an empty think block with enable_thinking false", () => {
    const template = qwen3Template();
    expect(
      renderChatTemplate(template, systemAndUser, { addGenerationPrompt: true, kwargs: { enable_thinking: false } }),
    ).toBe(`${prefix}<|im_start|>assistant\n<think>\n\n</think>\n\n`);
  });

  it("drops the reasoning of assistant turns before the last user message", () => {
    const template = qwen3Template();
    const messages: ChatMessage[] = [
      { role: "system", content: "S" },
      { role: "user", content: "What is 2+2?" },
      { role: "assistant", content: "4", reasoning_content: "Add them." },
      { role: "user", content: "And 3+3?" },
    ];
    expect(renderChatTemplate(template, messages, { addGenerationPrompt: true, kwargs: { enable_thinking: false } })).toBe(
      "<|im_start|>system\nS<|im_end|>\n<|im_start|>user\nWhat is 2+2?<|im_end|>\n" +
        "<|im_start|>assistant\n4<|im_end|>\n<|im_start|>user\nAnd 3+3?<|im_end|>\n" +
        "<|im_start|>assistant\n<think>\n\n</think>\n\n",
    );
  });

  it("keeps the reasoning_content of the final assistant turn in a think block, trimmed of newlines", () => {
    const template = qwen3Template();
    const messages: ChatMessage[] = [
      { role: "user", content: "What is 2+2?" },
      { role: "assistant", content: "4", reasoning_content: "\nAdd them.\n" },
    ];
    expect(renderChatTemplate(template, messages, { addGenerationPrompt: false })).toBe(
      "<|im_start|>user\nWhat is 2+2?<|im_end|>\n<|im_start|>assistant\n<think>\nAdd them.\n</think>\n\n4<|im_end|>\n",
    );
  });

  it("splits inline <think> content when reasoning_content is absent (an undefined field counts as absent)", () => {
    const template = qwen3Template();
    const expected = "<|im_start|>user\nQ<|im_end|>\n<|im_start|>assistant\n<think>\nhmm\n</think>\n\nA<|im_end|>\n";
    const assistant: ChatMessage = { role: "assistant", content: "<think>\nhmm\n</think>\n\nA" };
    expect(renderChatTemplate(template, [{ role: "user", content: "Q" }, assistant], { addGenerationPrompt: false })).toBe(expected);
    const withUndefined: ChatMessage = { ...assistant, reasoning_content: undefined };
    expect(renderChatTemplate(template, [{ role: "user", content: "Q" }, withUndefined], { addGenerationPrompt: false })).toBe(
      expected,
    );
  });

  it("renders tools, tool calls (object and string arguments) and grouped tool responses", () => {
    const template = qwen3Template();
    const tools = [
      {
        type: "function",
        function: {
          name: "get_weather",
          description: "Weather now",
          parameters: {
            type: "object",
            properties: { city: { type: "string" }, unit: { type: "string", enum: ["c", "f"] } },
            required: ["city"],
          },
        },
      },
    ];
    const messages: ChatMessage[] = [
      { role: "system", content: "Use tools." },
      { role: "user", content: "Weather in Paris?" },
      {
        role: "assistant",
        content: "",
        tool_calls: [
          { id: "call_1", type: "function", function: { name: "get_weather", arguments: { city: "Paris", unit: "c" } } },
          { type: "function", function: { name: "get_time", arguments: '{"tz": "CET"}' } },
        ],
      },
      { role: "tool", content: "18C", tool_call_id: "call_1" },
      { role: "tool", content: "14:00" },
    ];
    expect(renderChatTemplate(template, messages, { addGenerationPrompt: true, tools })).toBe(
      "<|im_start|>system\nUse tools.\n\n# Tools\n\nYou may call one or more functions to assist with the user query.\n\n" +
        "You are provided with function signatures within <tools></tools> XML tags:\n<tools>\n" +
        '{"type": "function", "function": {"name": "get_weather", "description": "Weather now", "parameters": ' +
        '{"type": "object", "properties": {"city": {"type": "string"}, "unit": {"type": "string", "enum": ["c", "f"]}}, ' +
        '"required": ["city"]}}}\n</tools>\n\n' +
        "For each function call, return a json object with function name and arguments within <tool_call></tool_call> XML tags:\n" +
        '<tool_call>\n{"name": <function-name>, "arguments": <args-json-object>}\n</tool_call><|im_end|>\n' +
        "<|im_start|>user\nWeather in Paris?<|im_end|>\n" +
        '<|im_start|>assistant\n<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris", "unit": "c"}}\n</tool_call>\n' +
        '<tool_call>\n{"name": "get_time", "arguments": {"tz": "CET"}}\n</tool_call><|im_end|>\n' +
        "<|im_start|>user\n<tool_response>\n18C\n</tool_response>\n<tool_response>\n14:00\n</tool_response><|im_end|>\n" +
        "<|im_start|>assistant\n",
    );
  });
});

describe("template variables", () => {
  it("passes bos_token, eos_token, add_generation_prompt and kwargs through; tools is None when absent", () => {
    const template =
      "{{ bos_token }}{% for m in messages %}[{{ m.role }}:{{ m.content }}]{{ eos_token }}{% endfor %}" +
      "{% if add_generation_prompt %}>{% endif %}{{ custom }}|{{ tools is none }}";
    const messages: ChatMessage[] = [{ role: "user", content: "a" }, { role: "assistant", content: "b" }];
    expect(
      renderChatTemplate(template, messages, { addGenerationPrompt: true, bosToken: "<s>", eosToken: "</s>", kwargs: { custom: 7 } }),
    ).toBe("<s>[user:a]</s>[assistant:b]</s>>7|true");
  });

  it("compiles each distinct template once", () => {
    const template = "{% for m in messages %}{{ m.content }}{% endfor %}";
    const first = compileChatTemplate(template);
    const count = compiledTemplateCount();
    renderChatTemplate(template, [{ role: "user", content: "x" }], { addGenerationPrompt: false });
    expect(compileChatTemplate(template)).toBe(first);
    expect(compiledTemplateCount()).toBe(count);
    compileChatTemplate(`${template} `);
    expect(compiledTemplateCount()).toBe(count + 1);
  });
});

describe("errors", () => {
  function failure(run: () => unknown): ChatTemplateError {
    try {
      run();
    } catch (error) {
      if (error instanceof ChatTemplateError) return error;
      throw error;
    }
    throw new Error("expected a ChatTemplateError");
  }
  const user: ChatMessage[] = [{ role: "user", content: "x" }];

  it("reports a template that does not parse", () => {
    const error = failure(() => renderChatTemplate("{% for m in messages %}{{ m.content }}", user, { addGenerationPrompt: false }));
    expect(error.failure).toBe("syntax");
    expect(error.message).toMatch(/^chat template does not parse: /);
  });

  it("reports raise_exception as the template rejecting the conversation, with its message", () => {
    const template =
      "{% for m in messages %}{% if m.role == 'assistant' %}{{ raise_exception('Conversation roles must alternate') }}" +
      "{% endif %}{{ m.content }}{% endfor %}";
    expect(renderChatTemplate(template, user, { addGenerationPrompt: false })).toBe("x");
    const error = failure(() => renderChatTemplate(template, [{ role: "assistant", content: "y" }], { addGenerationPrompt: false }));
    expect(error.failure).toBe("rejected");
    expect(error.message).toBe("chat template rejected the conversation: Conversation roles must alternate");
  });

  it("reports a failure while rendering", () => {
    const error = failure(() => renderChatTemplate("{{ messages | no_such_filter }}", user, { addGenerationPrompt: false }));
    expect(error.failure).toBe("render");
    expect(error.message).toMatch(/^chat template failed while rendering: .*no_such_filter/);
  });

  it("names malformed messages and reserved kwargs", () => {
    const template = "{{ messages | length }}";
    const badRole = [{ role: "developer", content: "x" }] as unknown as ChatMessage[];
    expect(failure(() => renderChatTemplate(template, badRole, { addGenerationPrompt: false })).message).toMatch(/messages\[0\]\.role/);
    const badContent = [{ role: "user", content: 3 }] as unknown as ChatMessage[];
    expect(failure(() => renderChatTemplate(template, badContent, { addGenerationPrompt: false })).message).toMatch(
      /messages\[0\]\.content must be a string/,
    );
    const error = failure(() => renderChatTemplate(template, user, { addGenerationPrompt: false, kwargs: { messages: [] } }));
    expect(error.failure).toBe("input");
    expect(error.message).toMatch(/kwargs\.messages/);
  });

  it("refuses an empty template: the model has no chat template", () => {
    expect(() => renderChatTemplate("", user, { addGenerationPrompt: true })).toThrow(NoChatTemplateError);
    expect(() => renderChatTemplate("  \n", user, { addGenerationPrompt: true })).toThrow(
      "model has no chat template (chatFormatOf gives it the default, ChatML)",
    );
  });
});
