// Tests for the default chat template (llama.cpp's ChatML fallback) and for choosing it.
import { describe, expect, it } from "vitest";
import { chatFormatOf, DEFAULT_CHAT_TEMPLATE, DEFAULT_TEMPLATE_TURN_MARKERS } from "./default-template.js";
import { renderChatTemplate } from "./template.js";

describe("the default chat template", () => {
  it("renders ChatML as llama.cpp's fallback does: every turn closed, the assistant's opened when asked, no BOS", () => {
    const messages = [
      { role: "system", content: "You are a helpful assistant" },
      { role: "user", content: "Hello" },
      { role: "assistant", content: "Hi there" },
      { role: "user", content: "How are you?" },
    ] as const;
    // The example conversation llama.cpp's server renders at start (chat_example), as it logs it for ChatML.
    const body =
      "<|im_start|>system\nYou are a helpful assistant<|im_end|>\n<|im_start|>user\nHello<|im_end|>\n" +
      "<|im_start|>assistant\nHi there<|im_end|>\n<|im_start|>user\nHow are you?<|im_end|>\n";
    expect(renderChatTemplate(DEFAULT_CHAT_TEMPLATE, [...messages], { addGenerationPrompt: true, bosToken: "<s>" })).toBe(`${body}<|im_start|>assistant\n`);
    expect(renderChatTemplate(DEFAULT_CHAT_TEMPLATE, [...messages], { addGenerationPrompt: false })).toBe(body);
  });

  it("is chosen only for a model without a template of its own, and then brings its turn markers", () => {
    expect(chatFormatOf("{{ messages[0].content }}")).toEqual({ template: "{{ messages[0].content }}", isDefault: false, endOfTurn: [] });
    for (const none of [null, undefined, "", " \n"]) {
      expect(chatFormatOf(none)).toEqual({ template: DEFAULT_CHAT_TEMPLATE, isDefault: true, endOfTurn: ["<|im_end|>", "<|im_start|>"] });
    }
    expect(Object.isFrozen(DEFAULT_TEMPLATE_TURN_MARKERS)).toBe(true);
  });
});
