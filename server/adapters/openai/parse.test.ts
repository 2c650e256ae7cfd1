// Top-level field rules of the chat-completions request parser: each accepted and rejected, with the param named.
import { describe, expect, it } from "vitest";
import type { ChatCompletionCreateParams } from "openai/resources/chat/completions";
import type { InternalRequest, ServedModels } from "../../protocol/internal.js";
import { parseChatCompletionRequest } from "./parse.js";
import { rejection } from "../testing/rejection.js";

const MODEL = "service/tim-qwen-27b";
const models: ServedModels = {
  slugs: (format) => (format === "openai" ? [MODEL, "service/tim-vision-27b"] : ["service/other-marathon"]),
  hasVision: (slug) => slug === "service/tim-vision-27b",
  // The vision model stands for one that does not reason.
  canReason: (slug) => slug !== "service/tim-vision-27b",
};

function parse(extra: Record<string, unknown>): InternalRequest {
  return parseChatCompletionRequest({ model: MODEL, messages: [{ role: "user", content: "Hi" }], ...extra }, models);
}

describe("parseChatCompletionRequest: defaults", () => {
  it("maps a minimal body with every default", () => {
    const params: ChatCompletionCreateParams = { model: MODEL, messages: [{ role: "user", content: "Hi" }] };
    expect(parseChatCompletionRequest(params, models)).toStrictEqual({
      format: "openai",
      model: MODEL,
      messages: [{ role: "user", content: "Hi" }],
      sampling: {},
      stop: [],
      stream: false,
      includeUsage: false,
      thinking: { enabled: false },
      autoCompaction: true,
    } satisfies InternalRequest);
  });

  it("maps every supported field (typed as the SDK's params)", () => {
    const params: ChatCompletionCreateParams & { chat_template_kwargs: object; top_k: number } = {
      model: MODEL,
      messages: [{ role: "developer", content: "Be brief." }, { role: "user", content: "Hi" }],
      stream: true,
      stream_options: { include_usage: true },
      max_completion_tokens: 64,
      temperature: 0.7,
      top_p: 0.9,
      top_k: 20,
      frequency_penalty: -0.5,
      presence_penalty: 1.5,
      seed: -42,
      stop: ["END", "\n\n"],
      user: "user-1",
      n: 1,
      response_format: { type: "text" },
      logprobs: false,
      top_logprobs: 0,
      parallel_tool_calls: true,
      chat_template_kwargs: { enable_thinking: true, enable_auto_compaction: false },
    };
    expect(parseChatCompletionRequest(params, models)).toStrictEqual({
      format: "openai",
      model: MODEL,
      messages: [
        { role: "system", content: "Be brief." },
        { role: "user", content: "Hi" },
      ],
      maxTokens: 64,
      fieldNames: { maxTokens: "max_completion_tokens" },
      sampling: { temperature: 0.7, topP: 0.9, topK: 20, frequencyPenalty: -0.5, presencePenalty: 1.5, seed: -42 },
      stop: ["END", "\n\n"],
      stream: true,
      includeUsage: true,
      thinking: { enabled: true },
      autoCompaction: false,
      userId: "user-1",
    } satisfies InternalRequest);
  });

  it("treats null as absent for optional fields, as Python clients send it", () => {
    const request = parse({
      temperature: null,
      top_p: null,
      max_tokens: null,
      stop: null,
      seed: null,
      stream: null,
      stream_options: null,
      n: null,
      logprobs: null,
      chat_template_kwargs: null,
      tools: null,
      tool_choice: null,
      user: null,
    });
    expect(request.sampling).toStrictEqual({});
    expect(request.stop).toStrictEqual([]);
    expect(request.stream).toBe(false);
    expect(request.maxTokens).toBeUndefined();
    expect(request.tools).toBeUndefined();
  });

  it("accepts the annotations that change nothing, and refuses unrecognised fields by name, as OpenAI does", () => {
    const annotated = { metadata: { a: "b" }, store: false, service_tier: "auto", prompt_cache_key: "k", prompt_cache_retention: "24h", prediction: { type: "content", content: "x" }, reasoning_effort: null };
    expect(parse(annotated).model).toBe(MODEL);
    const unknown = rejection(() => parse({ some_extension: [1, 2] }));
    expect([unknown.kind, unknown.param, unknown.message]).toStrictEqual(["invalid_request", undefined, "Unrecognized request argument supplied: 'some_extension'"]);
  });

  it.each([
    [{ store: true }, "store", /does not keep completions/],
    [{ service_tier: "priority" }, "service_tier", /one tier/],
    [{ reasoning_effort: "huge" }, "reasoning_effort", /^reasoning_effort must be 'none', 'minimal', 'low', 'medium', 'high', 'xhigh', got the string "huge"$/],
    [{ reasoning_effort: "low", chat_template_kwargs: { enable_thinking: false } }, "reasoning_effort", /turns reasoning on but chat_template_kwargs.enable_thinking is false/],
    [{ model: "service/tim-vision-27b", reasoning_effort: "low" }, "reasoning_effort", /^Unsupported value: reasoning_effort 'low' is not supported with the model 'service\/tim-vision-27b', which does not reason/],
    [{ verbosity: "low" }, "verbosity", /not supported/],
    [{ web_search_options: {} }, "web_search_options", /no tools/],
    [{ metadata: { a: 1 } }, "metadata.a", /string/],
  ])("refuses an annotation it cannot honour: %j", (fields, param, message) => {
    const error = rejection(() => parse(fields));
    expect(error.param).toBe(param);
    expect(error.message).toMatch(message);
  });
});

describe("parseChatCompletionRequest: body and model", () => {
  it.each([null, [], "text", 3, true])("rejects a body that is not an object: %j", (body) => {
    const error = rejection(() => parseChatCompletionRequest(body, models));
    expect(error.kind).toBe("invalid_request");
    expect(error.message).toMatch(/^The request body must be a JSON object, got /);
    expect(error.param).toBeUndefined();
  });

  it("requires model", () => {
    const error = rejection(() => parseChatCompletionRequest({ messages: [{ role: "user", content: "x" }] }, models));
    expect([error.kind, error.param, error.message]).toStrictEqual([
      "invalid_request",
      "model",
      `model is required: one of ${MODEL}, service/tim-vision-27b`,
    ]);
  });

  it("rejects a non-string model", () => {
    const error = rejection(() => parse({ model: 27 }));
    expect([error.kind, error.param]).toStrictEqual(["invalid_request", "model"]);
    expect(error.message).toBe(`model must be a string, one of ${MODEL}, service/tim-vision-27b, got 27`);
  });

  it("answers an unknown model with not_found listing the OpenAI slugs", () => {
    const error = rejection(() => parse({ model: "service/other-marathon" }));
    expect([error.kind, error.status, error.param]).toStrictEqual(["not_found", 404, "model"]);
    expect(error.message).toBe(`The model 'service/other-marathon' does not exist; available: ${MODEL}, service/tim-vision-27b`);
  });

  it("echoes at most 64 characters of an unknown model name", () => {
    const error = rejection(() => parse({ model: "m".repeat(100_000) }));
    expect(error.message).toBe(`The model '${"m".repeat(64)}...' does not exist; available: ${MODEL}, service/tim-vision-27b`);
  });

  it("checks the model before the messages", () => {
    expect(rejection(() => parseChatCompletionRequest({ model: "nope", messages: 3 }, models)).kind).toBe("not_found");
  });
});

describe("parseChatCompletionRequest: numeric ranges", () => {
  it.each([
    ["temperature", 0, { temperature: 0 }],
    ["temperature", 2, { temperature: 2 }],
    ["top_p", 0, { topP: 0 }],
    ["top_p", 1, { topP: 1 }],
    ["frequency_penalty", -2, { frequencyPenalty: -2 }],
    ["frequency_penalty", 2, { frequencyPenalty: 2 }],
    ["presence_penalty", -2, { presencePenalty: -2 }],
    ["presence_penalty", 0.25, { presencePenalty: 0.25 }],
    ["seed", 0, { seed: 0 }],
    ["seed", Number.MAX_SAFE_INTEGER, { seed: Number.MAX_SAFE_INTEGER }],
    ["top_k", 5, { topK: 5 }],
    ["top_k", -1, {}],
    ["top_k", 0, {}],
  ])("accepts %s = %j", (name, value, sampling) => {
    expect(parse({ [name]: value }).sampling).toStrictEqual(sampling);
  });

  it.each([
    ["temperature", 3, "temperature must be a number between 0 and 2, got 3"],
    ["temperature", -0.1, "temperature must be a number between 0 and 2, got -0.1"],
    ["temperature", "0.5", 'temperature must be a number between 0 and 2, got the string "0.5"'],
    ["temperature", true, "temperature must be a number between 0 and 2, got true"],
    ["top_p", 1.01, "top_p must be a number between 0 and 1, got 1.01"],
    ["top_p", [], "top_p must be a number between 0 and 1, got an array of 0"],
    ["frequency_penalty", -2.5, "frequency_penalty must be a number between -2 and 2, got -2.5"],
    ["presence_penalty", 1e308, "presence_penalty must be a number between -2 and 2, got 1e+308"],
    ["presence_penalty", {}, "presence_penalty must be a number between -2 and 2, got an object"],
    ["seed", 1.5, "seed must be an integer, got 1.5"],
    ["seed", 2 ** 60, "seed must be an integer, got 1152921504606847000"],
    ["seed", "NaN", 'seed must be an integer, got the string "NaN"'],
    ["top_k", -2, "top_k must be an integer, -1 or 0 for no limit, got -2"],
    ["top_k", 2.5, "top_k must be an integer, -1 or 0 for no limit, got 2.5"],
  ])("rejects %s = %j", (name, value, message) => {
    const error = rejection(() => parse({ [name]: value }));
    expect([error.kind, error.param, error.message]).toStrictEqual(["invalid_request", name, message]);
  });
});

describe("parseChatCompletionRequest: max_tokens", () => {
  it.each([
    [{ max_tokens: 1 }, 1],
    [{ max_completion_tokens: 100 }, 100],
    [{ max_tokens: 7, max_completion_tokens: 7 }, 7],
  ])("accepts %j", (extra, maxTokens) => {
    expect(parse(extra).maxTokens).toBe(maxTokens);
  });

  it.each([
    ["max_tokens", 0],
    ["max_tokens", -5],
    ["max_tokens", 1.5],
    ["max_tokens", "100"],
    ["max_completion_tokens", 0],
    ["max_completion_tokens", Number.POSITIVE_INFINITY],
    ["max_completion_tokens", 1e20],
  ])("rejects %s = %j", (name, value) => {
    const error = rejection(() => parse({ [name]: value }));
    expect([error.kind, error.param]).toStrictEqual(["invalid_request", name]);
    expect(error.message).toMatch(new RegExp(`^${name} must be a positive integer, got `));
  });

  it("rejects both names with different values", () => {
    const error = rejection(() => parse({ max_tokens: 10, max_completion_tokens: 20 }));
    expect([error.param, error.message]).toStrictEqual([
      "max_completion_tokens",
      "max_tokens (10) and max_completion_tokens (20) disagree: send only one",
    ]);
  });
});

describe("parseChatCompletionRequest: stop", () => {
  it.each([
    ["END", ["END"]],
    [["a"], ["a"]],
    [["a", "b", "c", "d"], ["a", "b", "c", "d"]],
  ])("accepts %j", (stop, expected) => {
    expect(parse({ stop }).stop).toStrictEqual(expected);
  });

  it.each([
    ["", "stop"],
    [[], "stop"],
    [["a", "b", "c", "d", "e"], "stop"],
    [5, "stop"],
    [{}, "stop"],
    [["a", ""], "stop[1]"],
    [["a", 3], "stop[1]"],
    [[null], "stop[0]"],
  ])("rejects %j (param %s)", (stop, param) => {
    const error = rejection(() => parse({ stop }));
    expect([error.kind, error.param]).toStrictEqual(["invalid_request", param]);
  });

  it("says what stop must be", () => {
    expect(rejection(() => parse({ stop: ["a", "b", "c", "d", "e"] })).message).toBe(
      "stop must be a non-empty string or an array of 1 to 4 non-empty strings, got an array of 5",
    );
    expect(rejection(() => parse({ stop: ["a", 3] })).message).toBe("stop[1] must be a non-empty string, got 3");
  });
});

describe("parseChatCompletionRequest: stream and stream_options", () => {
  it("reads include_usage only with stream true", () => {
    expect(parse({ stream: true, stream_options: { include_usage: true } }).includeUsage).toBe(true);
    expect(parse({ stream: true, stream_options: { include_usage: false } }).includeUsage).toBe(false);
    expect(parse({ stream: true, stream_options: {} }).includeUsage).toBe(false);
    expect(parse({ stream: true, stream_options: { include_obfuscation: false } }).includeUsage).toBe(false);
    expect(parse({ stream: true }).includeUsage).toBe(false);
  });

  it.each([
    [{ stream: "yes" }, "stream", 'stream must be a boolean, got the string "yes"'],
    [{ stream: 1 }, "stream", "stream must be a boolean, got 1"],
    [{ stream_options: { include_usage: true } }, "stream_options", "stream_options is only allowed when stream is true"],
    [{ stream: false, stream_options: {} }, "stream_options", "stream_options is only allowed when stream is true"],
    [{ stream: true, stream_options: true }, "stream_options", "stream_options must be an object, got true"],
    [
      { stream: true, stream_options: { include_usage: "true" } },
      "stream_options.include_usage",
      'stream_options.include_usage must be a boolean, got the string "true"',
    ],
    [
      { stream: true, stream_options: { include_obfuscation: 0 } },
      "stream_options.include_obfuscation",
      "stream_options.include_obfuscation must be a boolean, got 0",
    ],
  ])("rejects %j", (extra, param, message) => {
    const error = rejection(() => parse(extra));
    expect([error.kind, error.param, error.message]).toStrictEqual(["invalid_request", param, message]);
  });
});

describe("parseChatCompletionRequest: chat_template_kwargs", () => {
  it.each([
    [{}, false, true],
    [{ enable_thinking: true }, true, true],
    [{ enable_thinking: false, enable_auto_compaction: false }, false, false],
    [{ enable_auto_compaction: true }, false, true],
  ])("maps %j", (kwargs, thinking, autoCompaction) => {
    const request = parse({ chat_template_kwargs: kwargs });
    expect(request.thinking).toStrictEqual({ enabled: thinking });
    expect(request.autoCompaction).toBe(autoCompaction);
  });

  it.each([
    [[], "chat_template_kwargs", "chat_template_kwargs must be an object, got an array of 0"],
    [{ enable_thinking: "true" }, "chat_template_kwargs.enable_thinking", 'chat_template_kwargs.enable_thinking must be a boolean, got the string "true"'],
    [{ enable_auto_compaction: 0 }, "chat_template_kwargs.enable_auto_compaction", "chat_template_kwargs.enable_auto_compaction must be a boolean, got 0"],
    [
      { enable_thinking: true, tools_in_user_message: true },
      "chat_template_kwargs.tools_in_user_message",
      "chat_template_kwargs.tools_in_user_message is not supported: the supported keys are enable_thinking and enable_auto_compaction",
    ],
    [
      { constructor: true },
      "chat_template_kwargs.constructor",
      "chat_template_kwargs.constructor is not supported: the supported keys are enable_thinking and enable_auto_compaction",
    ],
    [
      { "": true },
      "chat_template_kwargs",
      "chat_template_kwargs has an unsupported key '': the supported keys are enable_thinking and enable_auto_compaction",
    ],
    [
      { ["k".repeat(1000)]: true },
      "chat_template_kwargs",
      `chat_template_kwargs has an unsupported key '${"k".repeat(64)}...': the supported keys are enable_thinking and enable_auto_compaction`,
    ],
  ])("rejects %j", (kwargs, param, message) => {
    const error = rejection(() => parse({ chat_template_kwargs: kwargs }));
    expect([error.kind, error.param, error.message]).toStrictEqual(["invalid_request", param, message]);
  });
});

describe("parseChatCompletionRequest: unsupported features are rejected, not ignored", () => {
  it.each([
    [{ n: 17 }, "n", "n must be an integer between 1 and 16, got 17"],
    [{ n: 0 }, "n", "n must be an integer between 1 and 16, got 0"],
    [{ n: "1" }, "n", 'n must be an integer between 1 and 16, got the string "1"'],
    [{ response_format: { type: "json_schema" } }, "response_format.json_schema", "response_format.json_schema must be an object, got nothing"],
    [{ response_format: { type: "json_schema", json_schema: { schema: {} } } }, "response_format.json_schema.name", "response_format.json_schema.name must be a string, got nothing"],
    [
      { response_format: { type: "json_schema", json_schema: { name: "x", schema: { type: "array", uniqueItems: true } } } },
      "response_format.json_schema.schema",
      'response_format.json_schema.schema: the keyword "uniqueItems" is not supported (keyword uniqueItems, at the schema root)',
    ],
    [
      { response_format: { type: "json_schema", json_schema: { name: "x", schema: { properties: { at: { type: "string", format: "iri" } } } } } },
      "response_format.json_schema.schema",
      'response_format.json_schema.schema: format "iri" is not supported (enforced: date-time, date, time, uuid, email, uri, hostname, ipv4, ipv6, duration, int32, int64, float, double; unknown names are ignored) (keyword format=iri, at /properties/at)',
    ],
    [
      { tools: [{ type: "function", function: { name: "f", parameters: { type: "object", properties: { n: { type: "integer", minimum: 3, maximum: 1 } } } } }] },
      "tools[0].function.parameters",
      "tools[0].function.parameters: no integer satisfies these bounds (or it needs more than 15 digits) (keyword minimum, at /properties/n)",
    ],
    [{ response_format: { type: "yaml" } }, "response_format.type", `response_format.type must be 'text', 'json_object' or 'json_schema', got the string "yaml"`],
    [{ response_format: {} }, "response_format.type", `response_format.type must be 'text', 'json_object' or 'json_schema', got nothing`],
    [{ response_format: "json" }, "response_format", 'response_format must be an object, got the string "json"'],
    [{ logprobs: "no" }, "logprobs", 'logprobs must be a boolean, got the string "no"'],
    [{ top_logprobs: 3 }, "top_logprobs", "top_logprobs requires logprobs: true"],
    [{ logprobs: true, top_logprobs: -1 }, "top_logprobs", "top_logprobs must be an integer between 0 and 20, got -1"],
    [{ ignore_eos: "yes" }, "ignore_eos", 'ignore_eos must be a boolean, got "yes"'],
    [{ min_tokens: -1 }, "min_tokens", "min_tokens must be a non-negative integer, got -1"],
    [{ min_tokens: 9, max_tokens: 8 }, "min_tokens", "min_tokens (9) must not exceed max_tokens (8)"],
    [{ min_tokens: 9, max_completion_tokens: 8 }, "min_tokens", "min_tokens (9) must not exceed max_completion_tokens (8)"],
    [{ top_logprobs: 21 }, "top_logprobs", "top_logprobs must be an integer between 0 and 20, got 21"],
    [{ functions: [{ name: "f" }] }, "functions", "functions is deprecated and not supported: use tools"],
    [{ function_call: "auto" }, "function_call", "function_call is deprecated and not supported: use tool_choice"],
    [{ logit_bias: { "50256": -100 } }, "logit_bias", "logit_bias is not supported yet"],
    [{ logit_bias: 1 }, "logit_bias", "logit_bias must be an object, got 1"],
    [{ audio: { voice: "alloy", format: "mp3" } }, "audio", "audio output is not supported: this server generates text only"],
    [{ modalities: ["text", "audio"] }, "modalities", "audio output is not supported: this server generates text only"],
    [{ modalities: ["video"] }, "modalities", "modalities must be an array of 'text' and 'audio', got an array of 1"],
    [{ user: 5 }, "user", "user must be a string, got 5"],
    [{ parallel_tool_calls: "yes" }, "parallel_tool_calls", 'parallel_tool_calls must be a boolean, got the string "yes"'],
  ])("rejects %j", (extra, param, message) => {
    const error = rejection(() => parse(extra));
    expect([error.kind, error.status, error.param, error.message]).toStrictEqual(["invalid_request", 400, param, message]);
  });

  it("accepts response_format json_object and json_schema (a missing schema admits any JSON)", () => {
    expect(parse({ response_format: { type: "json_object" } }).responseFormat).toEqual({ type: "json_object" });
    const schema = { type: "object", properties: { a: { type: "integer" } }, required: ["a"] };
    expect(parse({ response_format: { type: "json_schema", json_schema: { name: "thing", schema, strict: true } } }).responseFormat).toEqual({ type: "json_schema", schema });
    expect(parse({ response_format: { type: "json_schema", json_schema: { name: "any" } } }).responseFormat).toEqual({ type: "json_schema", schema: true });
  });

  it("accepts the harmless forms of those fields", () => {
    const request = parse({ n: 1, response_format: { type: "text" }, logprobs: false, top_logprobs: 0, logit_bias: {}, modalities: ["text"] });
    expect(request.model).toBe(MODEL);
  });

  it("uses safety_identifier when user is absent", () => {
    expect(parse({ safety_identifier: "hash-1" }).userId).toBe("hash-1");
    expect(parse({ user: "u", safety_identifier: "hash-1" }).userId).toBe("u");
    // Checked even when user is there.
    expect(() => parse({ user: "u", safety_identifier: 7 })).toThrow(expect.objectContaining({ param: "safety_identifier" }));
  });
});

describe("describe() keeps error messages bounded", () => {
  it("truncates a huge string value", () => {
    const error = rejection(() => parse({ temperature: "x".repeat(1_000_000) }));
    expect(error.message.length).toBeLessThan(200);
    expect(error.message).toContain('got the string "xxxx');
  });
});

describe("parseChatCompletionRequest: choices, logprobs, reasoning effort and the benchmark extensions", () => {
  it("maps n (1 is the default, left out), logprobs and top_logprobs", () => {
    expect(parse({ n: 1 }).choices).toBeUndefined();
    expect(parse({ n: 16 }).choices).toBe(16);
    expect(parse({ logprobs: true }).logprobs).toStrictEqual({ top: 0 });
    expect(parse({ logprobs: true, top_logprobs: 20 }).logprobs).toStrictEqual({ top: 20 });
    expect(parse({ logprobs: false, top_logprobs: 0 }).logprobs).toBeUndefined();
  });

  it.each([
    ["none", { enabled: false }],
    ["minimal", { enabled: false }],
    ["low", { enabled: true, budgetTokens: 1024, effort: "low" }],
    ["medium", { enabled: true, budgetTokens: 4096, effort: "medium" }],
    ["high", { enabled: true, effort: "high" }],
  ])("maps reasoning_effort %s to thinking %j", (effort, thinking) => {
    expect(parse({ reasoning_effort: effort }).thinking).toStrictEqual(thinking);
  });

  it("caps an effort's budget at the token limit, takes an agreeing enable_thinking, and lets a model that does not reason turn reasoning off", () => {
    expect(parse({ reasoning_effort: "medium", max_tokens: 100 }).thinking).toStrictEqual({ enabled: true, budgetTokens: 100, effort: "medium" });
    expect(parse({ reasoning_effort: "low", chat_template_kwargs: { enable_thinking: true } }).thinking.enabled).toBe(true);
    expect(parse({ model: "service/tim-vision-27b", reasoning_effort: "none" }).thinking).toStrictEqual({ enabled: false });
  });

  it("maps ignore_eos and min_tokens", () => {
    const request = parse({ ignore_eos: true, min_tokens: 8, max_tokens: 8 });
    expect([request.ignoreEndOfGeneration, request.minTokens]).toStrictEqual([true, 8]);
    const plain = parse({ ignore_eos: false, min_tokens: 0 });
    expect([plain.ignoreEndOfGeneration, plain.minTokens]).toStrictEqual([undefined, undefined]);
  });
});
