// The quick start's model names: each slug with the formats that take it, and the first model's slug per format as
// that format's default (a messages snippet must not get a chat-completions name).
import { describe, expect, it } from "vitest";
import { servedModelNames } from "./model-names.js";

describe("servedModelNames", () => {
  it("says which format takes each name and marks the first model's first slug of each format as the default", () => {
    const first = { slugs: { openai: ["service/tim-a-27b", "a-chat"], anthropic: ["service/llama-marathon"] } };
    const second = { slugs: { openai: ["service/tim-b-27b"], anthropic: ["service/qwen3-marathon"] } };
    expect(servedModelNames([first, second])).toEqual([
      { id: "service/tim-a-27b", formats: ["openai"], default: true },
      { id: "a-chat", formats: ["openai"], default: false },
      { id: "service/llama-marathon", formats: ["anthropic"], default: true },
      { id: "service/tim-b-27b", formats: ["openai"], default: false },
      { id: "service/qwen3-marathon", formats: ["anthropic"], default: false },
    ]);
  });

  it("lists a slug both formats take once, with both; a format the first model lacks has no default", () => {
    expect(servedModelNames([{ slugs: { openai: ["same"], anthropic: ["same"] } }])).toEqual([{ id: "same", formats: ["openai", "anthropic"], default: true }]);
    expect(servedModelNames([{ slugs: { openai: ["chat-only"], anthropic: [] } }, { slugs: { openai: [], anthropic: ["messages-only"] } }])).toEqual([
      { id: "chat-only", formats: ["openai"], default: true },
      { id: "messages-only", formats: ["anthropic"], default: false },
    ]);
    expect(servedModelNames([])).toEqual([]);
  });
});
