// Field rules of the messages request: each accepted at its bounds and rejected with the field named in `param`.
import { describe, expect, it } from "vitest";
import { type InternalRequest, ProtocolError, type ServedModels } from "../../protocol/internal.js";
import { anthropicErrorBody } from "./errors.js";
import { parseMessagesRequest } from "./parse.js";
import { ThinkingSigner } from "./thinking-signature.js";

const MODEL = "service/tim-marathon";
const models: ServedModels = {
  slugs: (format) => (format === "anthropic" ? [MODEL] : ["service/tim-base-27b"]),
  hasVision: () => false,
};
const signer = new ThinkingSigner("parse-test-secret");

type Body = Record<string, unknown>;
const base = (): Body => ({ model: MODEL, max_tokens: 4096, messages: [{ role: "user", content: "Hi" }] });
const parse = (body: unknown): InternalRequest => parseMessagesRequest(body, models, signer);
const WEATHER = { name: "get_weather", description: "Weather for a city", input_schema: { type: "object", properties: { city: { type: "string" } } } };

/** The ProtocolError parse throws for `body` (fails the test when it does not throw one). */
function failure(body: unknown): ProtocolError {
  try {
    parse(body);
  } catch (error) {
    expect(error).toBeInstanceOf(ProtocolError);
    return error as ProtocolError;
  }
  throw new Error(`expected a ProtocolError for ${JSON.stringify(body)}`);
}

describe("parseMessagesRequest: minimal and full requests", () => {
  it("maps a minimal request with the defaults", () => {
    expect(parse(base())).toEqual({
      format: "anthropic",
      model: MODEL,
      messages: [{ role: "user", content: "Hi" }],
      maxTokens: 4096,
      sampling: {},
      stop: [],
      stream: false,
      includeUsage: false,
      thinking: { enabled: false },
      autoCompaction: true,
    } satisfies InternalRequest);
  });

  it("maps every field of a full request", () => {
    const request = parse({
      ...base(),
      system: "Be brief.",
      temperature: 0.7,
      top_p: 0.9,
      top_k: 40,
      stop_sequences: ["END", "\n\n"],
      stream: true,
      tools: [WEATHER],
      tool_choice: { type: "auto", disable_parallel_tool_use: true },
      thinking: { type: "enabled", budget_tokens: 2048 },
      metadata: { user_id: "user-42" },
      chat_template_kwargs: { enable_auto_compaction: false },
      service_tier: "auto",
    });
    expect(request).toEqual({
      format: "anthropic",
      model: MODEL,
      messages: [
        { role: "system", content: "Be brief." },
        { role: "user", content: "Hi" },
      ],
      tools: [{ name: "get_weather", description: "Weather for a city", parameters: WEATHER.input_schema }],
      toolChoice: { type: "auto" },
      parallelToolCalls: false,
      maxTokens: 4096,
      sampling: { temperature: 0.7, topP: 0.9, topK: 40 },
      stop: ["END", "\n\n"],
      stream: true,
      includeUsage: false,
      thinking: { enabled: true, budgetTokens: 2048 },
      autoCompaction: false,
      userId: "user-42",
    } satisfies InternalRequest);
  });

  it("treats null optional fields as absent, and accepts the annotations that change nothing", () => {
    const nulls = { temperature: null, top_p: null, top_k: null, stop_sequences: null, stream: null, tools: null, tool_choice: null, thinking: null, metadata: null, chat_template_kwargs: null, system: null, service_tier: null, thread: null, output_config: null, speed: null };
    expect(parse({ ...base(), ...nulls })).toEqual(parse(base()));
    const annotations = { cache_control: { type: "ephemeral" }, user_profile_id: "u1", workspace_id: "w1", speed: "standard", service_tier: "auto" };
    expect(parse({ ...base(), ...annotations })).toEqual(parse(base()));
  });

  it("refuses unknown top-level fields by name, and API fields it cannot honour with what to do instead", () => {
    expect(failure({ ...base(), some_future_field: { a: 1 } })).toMatchObject({ param: "some_future_field", message: expect.stringMatching(/^some_future_field: Extra inputs are not permitted/) });
    expect(failure({ ...base(), container: "x" })).toMatchObject({ param: "container", message: expect.stringMatching(/no tools/) });
    expect(failure({ ...base(), mcp_servers: [] })).toMatchObject({ param: "mcp_servers" });
    expect(failure({ ...base(), context_management: {} })).toMatchObject({ param: "context_management", message: expect.stringMatching(/enable_auto_compaction/) });
    expect(failure({ ...base(), speed: "fast" })).toMatchObject({ param: "speed" });
    expect(failure({ ...base(), inference_geo: "us" })).toMatchObject({ param: "inference_geo" });
    expect(failure({ ...base(), output_config: { effort: "high" } })).toMatchObject({ param: "output_config.effort" });
    expect(failure({ ...base(), " odd key": 1 })).toMatchObject({ param: undefined, message: expect.stringMatching(/' odd key' is not a field/) });
  });

  it("answers a message thread with the error the SDK's tool runner recovers from (it resends the full history)", () => {
    const error = failure({ ...base(), thread: { type: "continue", previous_message_id: "msg_1" } });
    expect(error).toMatchObject({ param: "thread", details: { error_code: "thread_unsupported_request", unsupported: ["thread"] } });
    expect(anthropicErrorBody(error).body.error.details).toEqual({ error_code: "thread_unsupported_request", unsupported: ["thread"] });
  });

  it("reads output_config.format as a JSON Schema answer, and thinking adaptive as thinking on", () => {
    const schema = { type: "object", properties: { a: { type: "integer" } }, required: ["a"], additionalProperties: false };
    expect(parse({ ...base(), output_config: { format: { type: "json_schema", schema } } }).responseFormat).toEqual({ type: "json_schema", schema });
    expect(parse({ ...base(), thinking: { type: "adaptive" } }).thinking).toEqual({ enabled: true });
    expect(failure({ ...base(), output_config: { format: { type: "json_schema", schema: { type: "object", not: {} } } } })).toMatchObject({ param: "output_config.format.schema" });
    // The structured-outputs beta's name for it, which older SDKs send.
    expect(parse({ ...base(), output_format: { type: "json_schema", schema } }).responseFormat).toEqual({ type: "json_schema", schema });
    expect(failure({ ...base(), output_format: { type: "json_schema", schema }, output_config: { format: { type: "json_schema", schema } } })).toMatchObject({ param: "output_format" });
  });

  it("ignores inherited names: a JSON __proto__ key is refused as an unknown field, never read through", () => {
    expect(failure(JSON.parse(`{"__proto__": {"max_tokens": -1}, "model": "${MODEL}", "max_tokens": 5, "messages": [{"role": "user", "content": "x"}]}`)).param).toBe("__proto__");
    expect(failure(JSON.parse(`{"model": "${MODEL}", "messages": [{"role": "user", "content": "x"}], "metadata": {"__proto__": {"user_id": 5}}}`)).param).toBe("max_tokens");
  });
});

describe("parseMessagesRequest: accepted bounds", () => {
  const accepted: Array<[string, Body, (r: InternalRequest) => unknown, unknown]> = [
    ["max_tokens 1", { max_tokens: 1 }, (r) => r.maxTokens, 1],
    ["max_tokens written 100.0 is an integer", { max_tokens: 100.0 }, (r) => r.maxTokens, 100],
    ["temperature 0", { temperature: 0 }, (r) => r.sampling.temperature, 0],
    ["temperature 1", { temperature: 1 }, (r) => r.sampling.temperature, 1],
    ["top_p 0", { top_p: 0 }, (r) => r.sampling.topP, 0],
    ["top_p 1", { top_p: 1 }, (r) => r.sampling.topP, 1],
    ["top_k 1", { top_k: 1 }, (r) => r.sampling.topK, 1],
    ["16 stop sequences", { stop_sequences: Array.from({ length: 16 }, (_, i) => `s${i}`) }, (r) => r.stop.length, 16],
    ["whitespace stop sequence", { stop_sequences: [" "] }, (r) => r.stop, [" "]],
    ["stream false", { stream: false }, (r) => r.stream, false],
    ["empty tools", { tools: [] }, (r) => r.tools, []],
    ["tool type custom, no description", { tools: [{ type: "custom", name: "a-B_9", input_schema: { type: "object" } }] }, (r) => r.tools, [{ name: "a-B_9", parameters: { type: "object" } }]],
    ["64-character tool name", { tools: [{ name: "x".repeat(64), input_schema: { type: "object" } }] }, (r) => r.tools?.[0]?.name.length, 64],
    ["tool_choice any", { tools: [WEATHER], tool_choice: { type: "any" } }, (r) => r.toolChoice, { type: "any" }],
    ["tool_choice none", { tools: [WEATHER], tool_choice: { type: "none" } }, (r) => r.toolChoice, { type: "none" }],
    ["tool_choice auto without tools", { tool_choice: { type: "auto" } }, (r) => r.toolChoice, { type: "auto" }],
    ["tool_choice tool", { tools: [WEATHER], tool_choice: { type: "tool", name: "get_weather" } }, (r) => r.toolChoice, { type: "tool", name: "get_weather" }],
    ["thinking budget 1024 under max_tokens 1025", { max_tokens: 1025, thinking: { type: "enabled", budget_tokens: 1024 } }, (r) => r.thinking, { enabled: true, budgetTokens: 1024 }],
    ["thinking disabled", { thinking: { type: "disabled" } }, (r) => r.thinking, { enabled: false }],
    ["thinking with tool_choice auto", { tools: [WEATHER], tool_choice: { type: "auto" }, thinking: { type: "enabled", budget_tokens: 1024 } }, (r) => r.thinking.enabled, true],
    ["metadata without user_id", { metadata: {} }, (r) => r.userId, undefined],
    ["metadata user_id null", { metadata: { user_id: null } }, (r) => r.userId, undefined],
    ["256-character user_id", { metadata: { user_id: "u".repeat(256) } }, (r) => r.userId?.length, 256],
    ["empty chat_template_kwargs", { chat_template_kwargs: {} }, (r) => r.autoCompaction, true],
    ["auto compaction on", { chat_template_kwargs: { enable_auto_compaction: true } }, (r) => r.autoCompaction, true],
    ["service_tier standard_only", { service_tier: "standard_only" }, (r) => r.format, "anthropic"],
  ];
  it.each(accepted)("%s", (_name, patch, read, expected) => {
    expect(read(parse({ ...base(), ...patch }))).toEqual(expected);
  });
});

describe("parseMessagesRequest: rejected fields name the param", () => {
  const tools = [WEATHER];
  const rejected: Array<[string, Body, string, RegExp]> = [
    ["model missing", { model: undefined }, "model", /model: is required/],
    ["model not a string", { model: 5 }, "model", /must be a string/],
    ["max_tokens missing", { max_tokens: undefined }, "max_tokens", /is required and must be a positive integer/],
    ["max_tokens null", { max_tokens: null }, "max_tokens", /is required/],
    ["max_tokens 0", { max_tokens: 0 }, "max_tokens", /positive integer \(got 0\)/],
    ["max_tokens negative", { max_tokens: -1 }, "max_tokens", /positive integer/],
    ["max_tokens fractional", { max_tokens: 1.5 }, "max_tokens", /positive integer/],
    ["max_tokens string", { max_tokens: "10" }, "max_tokens", /positive integer \(got "10"\)/],
    ["max_tokens unsafe", { max_tokens: 2 ** 60 }, "max_tokens", /positive integer/],
    ["messages missing", { messages: undefined }, "messages", /is required/],
    ["messages not an array", { messages: "hi" }, "messages", /must be an array/],
    ["messages empty", { messages: [] }, "messages", /at least one message/],
    ["temperature below 0", { temperature: -0.1 }, "temperature", /from 0 to 1/],
    ["temperature above 1", { temperature: 1.1 }, "temperature", /from 0 to 1/],
    ["temperature string", { temperature: "0.5" }, "temperature", /number/],
    ["temperature NaN", { temperature: Number.NaN }, "temperature", /number/],
    ["temperature infinite", { temperature: Number.POSITIVE_INFINITY }, "temperature", /number/],
    ["top_p above 1", { top_p: 1.5 }, "top_p", /from 0 to 1/],
    ["top_p negative", { top_p: -1 }, "top_p", /from 0 to 1/],
    ["top_p boolean", { top_p: true }, "top_p", /number/],
    ["top_k 0", { top_k: 0 }, "top_k", /positive integer/],
    ["top_k fractional", { top_k: 1.5 }, "top_k", /positive integer/],
    ["top_k string", { top_k: "5" }, "top_k", /positive integer/],
    ["stop_sequences a string", { stop_sequences: "END" }, "stop_sequences", /must be an array/],
    ["stop_sequences empty string", { stop_sequences: ["a", ""] }, "stop_sequences[1]", /non-empty string/],
    ["stop_sequences number", { stop_sequences: [1] }, "stop_sequences[0]", /non-empty string/],
    ["17 stop sequences", { stop_sequences: Array.from({ length: 17 }, (_, i) => `s${i}`) }, "stop_sequences", /at most 16/],
    ["stream string", { stream: "true" }, "stream", /boolean/],
    ["tools an object", { tools: {} }, "tools", /array/],
    ["tool not an object", { tools: [1] }, "tools[0]", /object/],
    ["tool name with a space", { tools: [{ ...WEATHER, name: "get weather" }] }, "tools[0].name", /letters, digits, underscores or hyphens/],
    ["tool name too long", { tools: [{ ...WEATHER, name: "x".repeat(65) }] }, "tools[0].name", /1 to 64/],
    ["tool name missing", { tools: [{ input_schema: { type: "object" } }] }, "tools[0].name", /1 to 64/],
    ["tool names repeated", { tools: [WEATHER, WEATHER] }, "tools[1].name", /unique/],
    ["tool input_schema missing", { tools: [{ name: "a" }] }, "tools[0].input_schema", /object/],
    ["tool input_schema not object-typed", { tools: [{ name: "a", input_schema: { type: "string" } }] }, "tools[0].input_schema.type", /"object"/],
    ["tool description a number", { tools: [{ ...WEATHER, description: 5 }] }, "tools[0].description", /string/],
    ["server tool", { tools: [{ type: "web_search_20250305", name: "web_search" }] }, "tools[0].type", /server tools are not supported/],
    ["tool_choice a string", { tools, tool_choice: "auto" }, "tool_choice", /object/],
    ["tool_choice unknown type", { tools, tool_choice: { type: "maybe" } }, "tool_choice.type", /"auto", "any", "none", "tool"/],
    ["tool_choice tool without name", { tools, tool_choice: { type: "tool" } }, "tool_choice.name", /must name one of the tools \(get_weather\)/],
    ["tool_choice tool unknown name", { tools, tool_choice: { type: "tool", name: "nope" } }, "tool_choice.name", /one of the tools/],
    ["tool_choice any without tools", { tool_choice: { type: "any" } }, "tool_choice", /needs a non-empty "tools"/],
    ["tool_choice tool without tools", { tools: [], tool_choice: { type: "tool", name: "x" } }, "tool_choice", /needs a non-empty "tools"/],
    ["disable_parallel_tool_use string", { tools, tool_choice: { type: "auto", disable_parallel_tool_use: "yes" } }, "tool_choice.disable_parallel_tool_use", /boolean/],
    ["thinking a string", { thinking: "on" }, "thinking", /object/],
    ["thinking unknown type", { thinking: { type: "between_tools" } }, "thinking.type", /"enabled", "adaptive" or "disabled"/],
    ["thinking display omitted", { thinking: { type: "adaptive", display: "omitted" } }, "thinking.display", /shown in full/],
    ["thinking budget missing", { thinking: { type: "enabled" } }, "thinking.budget_tokens", /is required when thinking is enabled/],
    ["thinking budget below 1024", { thinking: { type: "enabled", budget_tokens: 1023 } }, "thinking.budget_tokens", /at least 1024/],
    ["thinking budget at max_tokens", { max_tokens: 2048, thinking: { type: "enabled", budget_tokens: 2048 } }, "thinking.budget_tokens", /less than max_tokens \(2048\)/],
    ["thinking budget fractional", { thinking: { type: "enabled", budget_tokens: 2000.5 } }, "thinking.budget_tokens", /integer/],
    ["thinking with forced tool", { tools, tool_choice: { type: "any" }, thinking: { type: "enabled", budget_tokens: 1024 } }, "tool_choice", /not possible with thinking enabled/],
    ["metadata a string", { metadata: "u" }, "metadata", /object/],
    ["metadata user_id a number", { metadata: { user_id: 5 } }, "metadata.user_id", /string/],
    ["metadata user_id too long", { metadata: { user_id: "u".repeat(257) } }, "metadata.user_id", /at most 256/],
    ["chat_template_kwargs an array", { chat_template_kwargs: [] }, "chat_template_kwargs", /object/],
    ["chat_template_kwargs enable_thinking", { chat_template_kwargs: { enable_thinking: true } }, "chat_template_kwargs.enable_thinking", /"thinking" field/],
    ["chat_template_kwargs unknown key", { chat_template_kwargs: { foo: 1 } }, "chat_template_kwargs.foo", /only one is enable_auto_compaction/],
    ["enable_auto_compaction string", { chat_template_kwargs: { enable_auto_compaction: "no" } }, "chat_template_kwargs.enable_auto_compaction", /boolean/],
    ["system a number", { system: 5 }, "system", /string or an array of text blocks/],
    ["system block not text", { system: [{ type: "image" }] }, "system[0].type", /"text"/],
    ["system block without text", { system: [{ type: "text" }] }, "system[0].text", /string/],
    ["system block a string", { system: ["x"] }, "system[0]", /object/],
    ["service_tier unknown", { service_tier: "priority" }, "service_tier", /"auto" or "standard_only"/],
  ];
  it.each(rejected)("%s", (_name, patch, param, message) => {
    const error = failure({ ...base(), ...patch });
    expect(error.kind).toBe("invalid_request");
    expect(error.status).toBe(400);
    expect(error.param).toBe(param);
    expect(error.message.startsWith(`${param}: `)).toBe(true);
    expect(error.message).toMatch(message);
  });

  it("rejects a body that is not a JSON object", () => {
    for (const body of [null, undefined, [], "text", 1, true]) {
      const error = failure(body);
      expect(error.kind).toBe("invalid_request");
      expect(error.message).toMatch(/JSON object/);
    }
  });

  it("answers an unknown model with not_found (404) naming the served models", () => {
    const error = failure({ ...base(), model: "service/tim-base-27b" });
    expect(error.kind).toBe("not_found");
    expect(error.status).toBe(404);
    expect(error.param).toBe("model");
    expect(error.message).toContain(MODEL);
  });
});
