// The non-streaming response body and the error body, shape for shape.
import type { StopReason, ThinkingBlock, ToolUseBlock, Usage } from "@anthropic-ai/sdk/resources/messages";
import { describe, expect, it } from "vitest";
import { type InternalEvent, ProtocolError } from "../../protocol/internal.js";
import { anthropicErrorBody } from "./errors.js";
import { type AnthropicMessage, messagesResponse } from "./response.js";
import { ThinkingSigner } from "./thinking-signature.js";

const signer = new ThinkingSigner("response-test-secret");
const meta = { id: "msg_01", model: "service/tim-marathon" };
const finish = (reason: "end_turn" | "max_tokens" | "stop_sequence" | "tool_use" = "end_turn", stopSequence?: string): Extract<InternalEvent, { type: "finish" }> => ({
  type: "finish",
  reason,
  stopSequence,
  usage: { promptTokens: 120, cachedTokens: 100, completionTokens: 7 },
});

describe("messagesResponse", () => {
  it("puts a signed thinking block before the text block, and splits input into uncached and cached tokens", () => {
    const body: AnthropicMessage = messagesResponse(meta, { thinking: "Add them.", text: "4", finish: finish() }, signer);
    expect(body).toEqual({
      id: "msg_01",
      type: "message",
      role: "assistant",
      model: "service/tim-marathon",
      content: [
        { type: "thinking", thinking: "Add them.", signature: signer.sign("Add them.") },
        { type: "text", text: "4" },
      ],
      stop_reason: "end_turn",
      stop_sequence: null,
      usage: { input_tokens: 20, output_tokens: 7, cache_read_input_tokens: 100, cache_creation_input_tokens: 0 },
    });
    // Field for field, these are the SDK's own types.
    const block: ThinkingBlock = body.content[0] as ThinkingBlock;
    const reason: StopReason | null = body.stop_reason;
    const usage: Pick<Usage, "input_tokens" | "output_tokens" | "cache_read_input_tokens" | "cache_creation_input_tokens"> = body.usage;
    expect(signer.verify(block.thinking, block.signature)).toBe(true);
    expect([reason, usage.input_tokens + (usage.cache_read_input_tokens ?? 0)]).toEqual(["end_turn", 120]);
  });

  it("has only a text block without thinking, and an empty text block for an empty response", () => {
    expect(messagesResponse(meta, { thinking: "", text: "Hi", finish: finish() }, signer).content).toEqual([{ type: "text", text: "Hi" }]);
    expect(messagesResponse(meta, { thinking: "", text: "", finish: finish() }, signer).content).toEqual([{ type: "text", text: "" }]);
  });

  it("has only the thinking block when the response was cut off while thinking", () => {
    const body = messagesResponse(meta, { thinking: "Hmm", text: "", finish: finish("max_tokens") }, signer);
    expect(body.content).toEqual([{ type: "thinking", thinking: "Hmm", signature: signer.sign("Hmm") }]);
    expect(body.stop_reason).toBe("max_tokens");
  });

  it("puts a tool_use block per call after the text, and leaves out an empty text block", () => {
    const toolCalls = [
      { id: "call_0123456789abcdef01234567", name: "get_weather", arguments: { city: "Paris" } },
      { id: "call_fedcba9876543210fedcba98", name: "get_time", arguments: {} },
    ];
    const body = messagesResponse(meta, { thinking: "", text: "Checking.", toolCalls, finish: finish("tool_use") }, signer);
    expect(body.content).toEqual([
      { type: "text", text: "Checking." },
      { type: "tool_use", id: "call_0123456789abcdef01234567", name: "get_weather", input: { city: "Paris" } },
      { type: "tool_use", id: "call_fedcba9876543210fedcba98", name: "get_time", input: {} },
    ]);
    expect(body.stop_reason).toBe("tool_use");
    const block: ToolUseBlock = body.content[1] as ToolUseBlock;
    expect(block.input).toEqual({ city: "Paris" });
    expect(messagesResponse(meta, { thinking: "", text: "", toolCalls, finish: finish("tool_use") }, signer).content.map((b) => b.type)).toEqual(["tool_use", "tool_use"]);
    expect(messagesResponse(meta, { thinking: "Hm.", text: "", toolCalls: toolCalls.slice(1), finish: finish("tool_use") }, signer).content.map((b) => b.type)).toEqual(["thinking", "tool_use"]);
  });

  it("reports the stop sequence that ended the response", () => {
    const body = messagesResponse(meta, { thinking: "", text: "a", finish: finish("stop_sequence", "END") }, signer);
    expect([body.stop_reason, body.stop_sequence]).toEqual(["stop_sequence", "END"]);
    expect(messagesResponse(meta, { thinking: "", text: "a", finish: finish("tool_use") }, signer).stop_reason).toBe("tool_use");
  });

  it("never reports negative uncached input", () => {
    const body = messagesResponse(meta, { thinking: "", text: "a", finish: { ...finish(), usage: { promptTokens: 5, cachedTokens: 9, completionTokens: 1 } } }, signer);
    expect(body.usage).toEqual({ input_tokens: 0, output_tokens: 1, cache_read_input_tokens: 5, cache_creation_input_tokens: 0 });
  });
});

describe("anthropicErrorBody", () => {
  it.each([
    ["invalid_request", 400, "invalid_request_error"],
    ["authentication", 401, "authentication_error"],
    ["permission", 403, "permission_error"],
    ["not_found", 404, "not_found_error"],
    ["request_too_large", 413, "request_too_large"],
    ["rate_limit", 429, "rate_limit_error"],
    ["internal", 500, "api_error"],
    ["overloaded", 529, "overloaded_error"],
  ] as const)("%s -> %i %s", (kind, status, type) => {
    expect(anthropicErrorBody(new ProtocolError(kind, "what went wrong", "field"))).toEqual({
      status,
      body: { type: "error", error: { type, message: "what went wrong" } },
      headers: {},
    });
  });

  it("adds retry-after, in whole seconds rounded up, when the error says when to retry", () => {
    expect(anthropicErrorBody(new ProtocolError("rate_limit", "slow down", undefined, 2.2)).headers).toEqual({ "retry-after": "3" });
    expect(anthropicErrorBody(new ProtocolError("overloaded", "busy", undefined, 0)).headers).toEqual({ "retry-after": "0" });
    expect(anthropicErrorBody(new ProtocolError("overloaded", "busy", undefined, Number.NaN)).headers).toEqual({});
  });
});
