// Tests for choosing a model's chat template, and the error when it has none.

import { describe, expect, it } from "vitest";
import { ChatTemplateError, NoChatTemplateError } from "./errors.js";
import { requireChatTemplate } from "./template-source.js";

describe("requireChatTemplate", () => {
  it("returns a plain template as is", () => {
    expect(requireChatTemplate("{{ x }}")).toBe("{{ x }}");
  });

  it("throws a clear error, naming the model, when there is no template", () => {
    for (const field of [undefined, null, "", []]) {
      expect(() => requireChatTemplate(field, { model: "tiny-base" })).toThrow(NoChatTemplateError);
      expect(() => requireChatTemplate(field, { model: "tiny-base" })).toThrow(
        "tiny-base: model has no chat template (chatFormatOf gives it the default, ChatML)",
      );
    }
  });

  it("picks from named templates as transformers does", () => {
    const named = [
      { name: "default", template: "D" },
      { name: "tool_use", template: "T" },
    ];
    expect(requireChatTemplate(named)).toBe("D");
    expect(requireChatTemplate(named, { hasTools: true })).toBe("T");
    expect(requireChatTemplate([{ name: "default", template: "D" }], { hasTools: true })).toBe("D");
    expect(requireChatTemplate(named, { name: "tool_use" })).toBe("T");
    expect(() => requireChatTemplate(named, { name: "rag", model: "m" })).toThrow(ChatTemplateError);
    expect(() => requireChatTemplate(named, { name: "rag", model: "m" })).toThrow(/m has no chat template named "rag" \(it has: default, tool_use\)/);
  });
});
