// The engine request a parsed request becomes: token limits, the output constraint and its JSON layout.
import { describe, expect, it } from "vitest";
import type { InternalRequest } from "./internal.js";
import { toEngineRequest } from "./run.js";

const base: InternalRequest = {
  format: "openai", model: "m", messages: [{ role: "user", content: "hi" }], sampling: {}, stop: [], stream: false,
  includeUsage: false, thinking: { enabled: false }, autoCompaction: true,
};
const schema = { type: "object", properties: { a: { type: "integer" } }, required: ["a"] };

describe("toEngineRequest", () => {
  it("passes a client's token limit as is, and lets generation fill the context without one", () => {
    expect(toEngineRequest("r", { ...base, maxTokens: 7 }).maxTokens).toBe(7);
    expect(toEngineRequest("r", base).maxTokens).toBe("context");
  });

  it("constrains structured output with the server's JSON layout (compact unless configured)", () => {
    const request: InternalRequest = { ...base, responseFormat: { type: "json_schema", schema } };
    expect(toEngineRequest("r", request).constraint).toEqual({ format: { type: "json_schema", schema } });
    expect(toEngineRequest("r", request, { whitespace: "pretty" }).constraint).toEqual({ format: { type: "json_schema", schema }, whitespace: "pretty" });
    expect(toEngineRequest("r", base, { whitespace: "pretty" }).constraint).toBeUndefined();
  });
});
