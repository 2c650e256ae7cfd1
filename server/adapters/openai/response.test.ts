// Non-streaming response and error shapes, typed against the official SDK's ChatCompletion.
import { describe, expect, it } from "vitest";
import type { ChatCompletion } from "openai/resources/chat/completions";
import { ProtocolError, type InternalEvent, type InternalStopReason } from "../../protocol/internal.js";
import { openAiErrorBody } from "./errors.js";
import { chatCompletionResponse } from "./response.js";

const meta = { id: "chatcmpl-1", model: "service/tim-qwen-27b", created: 1_700_000_000 };
const usage = { promptTokens: 12, cachedTokens: 8, completionTokens: 5 };
const finish = (reason: InternalStopReason): Extract<InternalEvent, { type: "finish" }> => ({ type: "finish", reason, usage });

describe("chatCompletionResponse", () => {
  it("has exactly the OpenAI shape", () => {
    const body: ChatCompletion = chatCompletionResponse(meta, { reasoning: "", text: "Hello!", finish: finish("end_turn") });
    expect(body).toStrictEqual({
      id: "chatcmpl-1",
      object: "chat.completion",
      created: 1_700_000_000,
      model: "service/tim-qwen-27b",
      choices: [{ index: 0, message: { role: "assistant", content: "Hello!", refusal: null }, finish_reason: "stop", logprobs: null }],
      usage: { prompt_tokens: 12, completion_tokens: 5, total_tokens: 17, prompt_tokens_details: { cached_tokens: 8 } },
    });
  });

  it("puts visible reasoning between think tags before the answer", () => {
    const body = chatCompletionResponse(meta, { reasoning: "2+2=4", text: "4", finish: finish("end_turn") });
    expect(body.choices[0]!.message.content).toBe("<think>2+2=4</think>4");
  });

  it("uses the given tag pair", () => {
    const body = chatCompletionResponse(meta, { reasoning: "r", text: "a", finish: finish("end_turn") }, { open: "<reasoning>", close: "</reasoning>" });
    expect(body.choices[0]!.message.content).toBe("<reasoning>r</reasoning>a");
  });

  it("closes the tags when generation stopped inside the reasoning", () => {
    const body = chatCompletionResponse(meta, { reasoning: "hmm", text: "", finish: finish("max_tokens") });
    expect(body.choices[0]!.message.content).toBe("<think>hmm</think>");
    expect(body.choices[0]!.finish_reason).toBe("length");
  });

  it("returns tool calls with JSON-string arguments, and null content when there is no text", () => {
    const toolCalls = [
      { id: "call_0123456789abcdef01234567", name: "get_weather", arguments: { city: "Paris", days: [1, 2] } },
      { id: "call_fedcba9876543210fedcba98", name: "get_time", arguments: {} },
    ];
    const body: ChatCompletion = chatCompletionResponse(meta, { reasoning: "", text: "", toolCalls, finish: finish("tool_use") });
    expect(body.choices[0]).toStrictEqual({
      index: 0,
      message: {
        role: "assistant",
        content: null,
        refusal: null,
        tool_calls: [
          { id: "call_0123456789abcdef01234567", type: "function", function: { name: "get_weather", arguments: '{"city":"Paris","days":[1,2]}' } },
          { id: "call_fedcba9876543210fedcba98", type: "function", function: { name: "get_time", arguments: "{}" } },
        ],
      },
      finish_reason: "tool_calls",
      logprobs: null,
    });
    const withText = chatCompletionResponse(meta, { reasoning: "r", text: "Checking.", toolCalls: toolCalls.slice(0, 1), finish: finish("tool_use") });
    expect(withText.choices[0]!.message.content).toBe("<think>r</think>Checking.");
    expect(withText.choices[0]!.message.tool_calls).toHaveLength(1);
  });

  it("has no tool_calls field without tool calls", () => {
    expect(chatCompletionResponse(meta, { reasoning: "", text: "", toolCalls: [], finish: finish("end_turn") }).choices[0]!.message).toStrictEqual({
      role: "assistant",
      content: "",
      refusal: null,
    });
  });

  it.each([
    ["end_turn", "stop"],
    ["stop_sequence", "stop"],
    ["max_tokens", "length"],
    ["tool_use", "tool_calls"],
  ] as const)("maps finish %s to %s", (reason, expected) => {
    expect(chatCompletionResponse(meta, { reasoning: "", text: "", finish: finish(reason) }).choices[0]!.finish_reason).toBe(expected);
  });
});

describe("openAiErrorBody", () => {
  it.each([
    [new ProtocolError("invalid_request", "temperature must be ...", "temperature"), 400, "invalid_request_error", "temperature", null],
    [new ProtocolError("authentication", "Missing API key"), 401, "authentication_error", null, null],
    [new ProtocolError("permission", "No access"), 403, "permission_error", null, null],
    [new ProtocolError("not_found", "The model 'x' does not exist", "model"), 404, "invalid_request_error", "model", "model_not_found"],
    [new ProtocolError("not_found", "No such thing"), 404, "invalid_request_error", null, null],
    [new ProtocolError("request_too_large", "Body over 10 MiB"), 413, "request_too_large", null, null],
    [new ProtocolError("rate_limit", "Slow down", undefined, 3), 429, "rate_limit_error", null, "rate_limit_exceeded"],
    [new ProtocolError("internal", "Engine failed"), 500, "server_error", null, null],
    [new ProtocolError("overloaded", "Queue full", undefined, 2), 503, "server_error", null, "server_overloaded"],
  ])("maps %s", (error, status, type, param, code) => {
    const response = openAiErrorBody(error);
    expect(response.status).toBe(status);
    expect(response.body).toStrictEqual({ error: { message: error.message, type, param, code } });
  });

  it("sets Retry-After in whole seconds, rounded up, only when the error carries one", () => {
    expect(openAiErrorBody(new ProtocolError("overloaded", "Queue full", undefined, 1.2)).headers).toStrictEqual({ "Retry-After": "2" });
    expect(openAiErrorBody(new ProtocolError("rate_limit", "Slow down", undefined, 30)).headers).toStrictEqual({ "Retry-After": "30" });
    expect(openAiErrorBody(new ProtocolError("overloaded", "Queue full")).headers).toStrictEqual({});
    expect(openAiErrorBody(new ProtocolError("invalid_request", "x")).headers).toStrictEqual({});
  });
});
