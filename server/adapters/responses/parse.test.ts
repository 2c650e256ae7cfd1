// The Responses API request parser (parseResponsesRequest) and the conversation builder (chatMessagesOf): every
// validation rule is a ProtocolError 400 whose `param` names the field and whose message says what it must be;
// features this server does not have are refused by name; and the accepted shapes map to the InternalRequest (and
// the ResponsesState it carries) as the adapter documents.
import { describe, expect, it } from "vitest";
import type { ResponseCreateParams } from "openai/resources/responses/responses";
import type { InternalRequest, ServedModels } from "../../protocol/internal.js";
import { chatMessagesOf, parseInput, responseOfItem, type ConversationItem } from "./items.js";
import { REASONING_EFFORTS, parseResponsesRequest, responsesStateOf } from "./parse.js";
import { rejection } from "../testing/rejection.js";

const MODEL = "service/tim-qwen-27b";
const models: ServedModels = {
  slugs: (format) => (format === "openai" ? [MODEL] : ["service/other-marathon"]),
  hasVision: () => false,
};

function parse(extra: Record<string, unknown>): InternalRequest {
  return parseResponsesRequest({ model: MODEL, input: "Hi", ...extra }, models);
}

/** Expects a 400 naming `param` whose message matches `message`. */
function expectInvalid(call: () => unknown, param: string | undefined, message: string | RegExp): void {
  const error = rejection(call);
  expect(error.kind).toBe("invalid_request");
  expect(error.status).toBe(400);
  expect(error.param).toBe(param);
  if (typeof message === "string") expect(error.message).toBe(message);
  else expect(error.message).toMatch(message);
}

const fn = (name: string, extra: Record<string, unknown> = {}) => ({ type: "function", name, parameters: { type: "object", properties: { q: { type: "string" } } }, ...extra });

describe("parseResponsesRequest: the body and the model", () => {
  it.each([
    [[], "The request body must be a JSON object, got an array of 0"],
    ["hi", 'The request body must be a JSON object, got the string "hi"'],
    [null, "The request body must be a JSON object, got null"],
  ])("refuses a body that is not an object: %j", (body, message) => {
    expectInvalid(() => parseResponsesRequest(body, models), undefined, message);
  });

  it("refuses an unknown top-level field as OpenAI does", () => {
    expectInvalid(() => parse({ frequency_penalty: 1 }), undefined, "Unrecognized request argument supplied: 'frequency_penalty'");
    expectInvalid(() => parse({ messages: [] }), undefined, "Unrecognized request argument supplied: 'messages'");
  });

  it("requires a model, a string", () => {
    expectInvalid(() => parseResponsesRequest({ input: "Hi" }, models), "model", `model is required: one of ${MODEL}`);
    expectInvalid(() => parse({ model: 7 }), "model", `model must be a string, one of ${MODEL}, got 7`);
  });

  it("answers an unknown model with 404 naming it and the available ones", () => {
    const error = rejection(() => parse({ model: "gpt-4o" }));
    expect([error.kind, error.status, error.param]).toEqual(["not_found", 404, "model"]);
    expect(error.message).toBe(`The model 'gpt-4o' does not exist; available: ${MODEL}`);
    // Another format's slug is not this format's model.
    expect(rejection(() => parse({ model: "service/other-marathon" })).status).toBe(404);
  });
});

describe("parseResponsesRequest: input items", () => {
  it.each([
    [undefined, "input", "input is required: a string or a non-empty array of input items"],
    [null, "input", "input is required: a string or a non-empty array of input items"],
    [[], "input", "input must be a string or a non-empty array of input items, got an array of 0"],
    [5, "input", "input must be a string or a non-empty array of input items, got 5"],
    [["Hi"], "input[0]", 'input[0] must be an object, got the string "Hi"'],
    [[{ role: "user", content: "a" }, { type: "bogus" }], "input[1].type", `input[1].type must be 'message', 'function_call', 'function_call_output' or 'reasoning', got the string "bogus"`],
    [[{ type: 3 }], "input[0].type", "input[0].type must be 'message', 'function_call', 'function_call_output' or 'reasoning', got 3"],
    [[{ role: "user", content: "a", id: 9 }], "input[0].id", "input[0].id must be a string, got 9"],
    [[{ role: "user", content: "a" }, { type: "function_call_output", call_id: "c", output: "x", id: "" }], "input[1].id", 'input[1].id must be a non-empty string, got the string ""'],
    [[{ role: "robot", content: "a" }], "input[0].role", `input[0].role must be 'user', 'system', 'developer' or 'assistant', got the string "robot"`],
    [[{ content: "a" }], "input[0].role", "input[0].role must be 'user', 'system', 'developer' or 'assistant', got nothing"],
    [[{ role: "user" }], "input[0].content", "input[0].content must be a string or a non-empty array of content parts, got nothing"],
    [[{ role: "user", content: [] }], "input[0].content", "input[0].content must be a string or a non-empty array of content parts, got an array of 0"],
    [[{ role: "user", content: ["a"] }], "input[0].content[0]", 'input[0].content[0] must be an object, got the string "a"'],
    [[{ role: "user", content: [{ type: "output_text", text: "a" }] }], "input[0].content[0].type", `input[0].content[0].type must be 'input_text' in a user message, got the string "output_text"`],
    [[{ role: "assistant", content: [{ type: "input_text", text: "a" }] }], "input[0].content[0].type", `input[0].content[0].type must be 'output_text' or 'refusal' in a assistant message, got the string "input_text"`],
    [[{ role: "user", content: [{ type: "input_text", text: 1 }] }], "input[0].content[0].text", "input[0].content[0].text must be a string, got 1"],
    [[{ role: "assistant", content: [{ type: "refusal" }] }], "input[0].content[0].refusal", "input[0].content[0].refusal must be a string, got nothing"],
    [[{ type: "function_call", name: "f", arguments: "{}" }], "input[0].call_id", "input[0].call_id must be a string, got nothing"],
    [[{ type: "function_call", call_id: "c", arguments: "{}" }], "input[0].name", "input[0].name must be a string, got nothing"],
    [[{ type: "function_call", call_id: "c", name: "f", arguments: { q: 1 } }], "input[0].arguments", "input[0].arguments must be a string, got an object"],
    [[{ type: "function_call_output", output: "x" }], "input[0].call_id", "input[0].call_id must be a string, got nothing"],
    [[{ type: "function_call_output", call_id: "c", output: 5 }], "input[0].output", "input[0].output must be a string or an array of input_text parts, got 5"],
    [[{ type: "function_call_output", call_id: "c", output: [{ type: "output_text", text: "x" }] }], "input[0].output[0].type", `input[0].output[0].type must be 'input_text', got the string "output_text"`],
    [[{ type: "reasoning", summary: "thought" }], "input[0].summary", 'input[0].summary must be an array of summary_text parts, got the string "thought"'],
    [[{ type: "reasoning", summary: [{ type: "reasoning_text", text: "a" }] }], "input[0].summary[0].type", `input[0].summary[0].type must be 'summary_text', got the string "reasoning_text"`],
    [[{ type: "reasoning", summary: [], content: [{ type: "reasoning_text" }] }], "input[0].content[0].text", "input[0].content[0].text must be a string, got nothing"],
  ])("refuses input %j", (input, param, message) => {
    expectInvalid(() => parse({ input }), param, message);
  });

  it.each([
    [[{ type: "item_reference" }], "input[0].id", /^input\[0\]\.id is required: the id of an item of a stored response$/],
    [[{ type: "web_search_call", id: "ws_1", status: "completed" }], "input[0].type", /^input\[0\]\.type 'web_search_call' is not supported: this server has function tools only$/],
    [[{ type: "computer_call_output", call_id: "c", output: {} }], "input[0].type", /'computer_call_output' is not supported/],
    [[{ role: "user", content: "a" }, { role: "user", content: [{ type: "input_text", text: "look" }, { type: "input_image", image_url: "https://x/y.png" }] }], "input[1].content[1]", /^The model 'service\/tim-.*' has no vision input: input\[1\]\.content\[1\] is an input_image part; send text only$/],
    [[{ role: "user", content: [{ type: "input_file", file_id: "file_1" }] }], "input[0].content[0].type", /^input\[0\]\.content\[0\]: file input is not supported/],
    [[{ role: "user", content: [{ type: "input_audio", input_audio: {} }] }], "input[0].content[0].type", /audio input is not supported/],
    [[{ type: "function_call_output", call_id: "c", output: [{ type: "input_image", image_url: "x" }] }], "input[0].output[0].type", /^input\[0\]\.output\[0\]: images in a function_call_output are not supported by this server: send the image in a user message after the outputs$/],
    [[{ type: "reasoning", summary: [], encrypted_content: "gAAAA" }], "input[0].encrypted_content", /^input\[0\]\.encrypted_content is not supported: this server returns reasoning as visible text and never encrypts it$/],
  ])("refuses an unsupported input feature by name: %j", (input, param, message) => {
    expectInvalid(() => parse({ input }), param, message);
  });
});

describe("parseResponsesRequest: item ids and references", () => {
  const responseId = "resp_0123456789abcdef01234567";

  it("names the input items it gives ids after the response, keeping the client's", () => {
    const request = parseResponsesRequest({ model: MODEL, input: [{ role: "user", content: "a" }, { role: "user", content: "b", id: "msg_mine" }, { type: "function_call", call_id: "c", name: "f", arguments: "{}" }, { type: "function_call_output", call_id: "c", output: "1" }] }, models, responseId);
    expect(responsesStateOf(request).input.map((item) => item.id)).toEqual(["msg_0123456789abcdef01234567i0", "msg_mine", "fc_0123456789abcdef01234567i1", "fco_0123456789abcdef01234567i2"]);
    // Without a response id (a request parsed outside the server) they are random.
    expect(responsesStateOf(parse({})).input[0]!.id).toMatch(/^msg_[0-9a-f]{24}$/);
  });

  it("keeps item references for the endpoint to resolve, and leaves the messages to it", () => {
    const request = parse({ input: [{ role: "user", content: "a" }, { type: "item_reference", id: "msg_0123456789abcdef01234567o1" }] });
    expect(responsesStateOf(request).input[1]).toStrictEqual({ type: "item_reference", id: "msg_0123456789abcdef01234567o1" });
    expect(request.messages).toEqual([]);
    expect(responseOfItem("msg_0123456789abcdef01234567o1")).toBe(responseId);
    expect(responseOfItem("fco_0123456789abcdef01234567i12")).toBe(responseId);
    for (const foreign of ["msg_1", "msg_0123456789abcdef01234567", "msg_0123456789ABCDEF01234567o1", "call_0123456789abcdef01234567o1"]) expect(responseOfItem(foreign)).toBeUndefined();
  });

  it("accepts the include of encrypted reasoning, which changes nothing: reasoning is visible text here", () => {
    expect(responsesStateOf(parse({ include: ["reasoning.encrypted_content"] })).store).toBe(true);
  });
});

describe("parseResponsesRequest: scalar fields", () => {
  it.each([
    [{ instructions: 5 }, "instructions", "instructions must be a string, got 5"],
    [{ previous_response_id: "chatcmpl-1" }, "previous_response_id", 'previous_response_id must be a response id (resp_...), got the string "chatcmpl-1"'],
    [{ previous_response_id: "resp_a-b" }, "previous_response_id", 'previous_response_id must be a response id (resp_...), got the string "resp_a-b"'],
    [{ previous_response_id: 5 }, "previous_response_id", "previous_response_id must be a string, got 5"],
    [{ store: "yes" }, "store", 'store must be a boolean, got the string "yes"'],
    [{ stream: 1 }, "stream", "stream must be a boolean, got 1"],
    [{ stream_options: { include_obfuscation: false } }, "stream_options", "stream_options is only allowed when stream is true"],
    [{ stream: true, stream_options: { include_usage: true } }, "stream_options", "stream_options has an unsupported key 'include_usage': only include_obfuscation"],
    [{ stream: true, stream_options: { include_obfuscation: "no" } }, "stream_options.include_obfuscation", 'stream_options.include_obfuscation must be a boolean, got the string "no"'],
    [{ stream: true, stream_options: 1 }, "stream_options", "stream_options must be an object, got 1"],
    [{ max_output_tokens: 0 }, "max_output_tokens", "max_output_tokens must be a positive integer, got 0"],
    [{ max_output_tokens: 1.5 }, "max_output_tokens", "max_output_tokens must be a positive integer, got 1.5"],
    [{ max_output_tokens: "5" }, "max_output_tokens", 'max_output_tokens must be a positive integer, got the string "5"'],
    [{ temperature: 2.5 }, "temperature", "temperature must be a number between 0 and 2, got 2.5"],
    [{ temperature: -0.1 }, "temperature", "temperature must be a number between 0 and 2, got -0.1"],
    [{ top_p: 1.5 }, "top_p", "top_p must be a number between 0 and 1, got 1.5"],
    [{ parallel_tool_calls: "no" }, "parallel_tool_calls", 'parallel_tool_calls must be a boolean, got the string "no"'],
    [{ truncation: "middle" }, "truncation", `truncation must be 'auto' or 'disabled', got the string "middle"`],
    [{ user: 5 }, "user", "user must be a string, got 5"],
    [{ safety_identifier: 5 }, "safety_identifier", "safety_identifier must be a string, got 5"],
    [{ user: "u", safety_identifier: 5 }, "safety_identifier", "safety_identifier must be a string, got 5"],
    [{ max_tool_calls: 0 }, "max_tool_calls", "max_tool_calls must be a positive integer, got 0"],
    [{ prompt_cache_key: 5 }, "prompt_cache_key", "prompt_cache_key must be a string, got 5"],
    [{ prompt_cache_retention: "1h" }, "prompt_cache_retention", `prompt_cache_retention must be 'in_memory' or '24h', got the string "1h"`],
    [{ prompt_cache_options: [] }, "prompt_cache_options", "prompt_cache_options must be an object, got an array of 0"],
    [{ service_tier: "flex" }, "service_tier", `service_tier must be 'auto' or 'default' (this server has one tier), got the string "flex"`],
    [{ background: "yes" }, "background", 'background must be a boolean, got the string "yes"'],
  ])("refuses %j", (extra, param, message) => {
    expectInvalid(() => parse(extra), param, message);
  });
});

describe("parseResponsesRequest: unsupported features are refused by name, never ignored", () => {
  it.each([
    [{ background: true }, "background", /^background mode is not supported/],
    [{ conversation: "conv_123" }, "conversation", /^conversations are not supported: continue a stored response with previous_response_id$/],
    [{ conversation: { id: "conv_123" } }, "conversation", /^conversations are not supported/],
    [{ prompt: { id: "pmpt_1" } }, "prompt", /^prompt templates are not supported/],
    [{ include: ["message.input_image.image_url"] }, "include[0]", /^include\[0\] 'message\.input_image\.image_url' is not supported/],
    [{ include: ["reasoning.encrypted_content", "file_search_call.results"] }, "include[1]", /^include\[1\] 'file_search_call\.results' is not supported/],
    [{ include: "reasoning.encrypted_content" }, "include", /^include must be an array of strings, got the string/],
    [{ include: [5] }, "include[0]", /^include\[0\] must be a string, got 5$/],
    [{ top_logprobs: 5 }, "top_logprobs", /^top_logprobs needs include: \['message\.output_text\.logprobs'\]/],
    [{ ignore_eos: 1 }, "ignore_eos", /^ignore_eos must be a boolean, got 1$/],
    [{ min_tokens: 65, max_output_tokens: 64 }, "min_tokens", /^min_tokens \(65\) must not exceed max_output_tokens \(64\)$/],
    [{ top_logprobs: 21 }, "top_logprobs", /^top_logprobs must be an integer between 0 and 20, got 21$/],
    [{ context_management: [{ type: "compaction", compact_threshold: 1000 }] }, "context_management", /^context_management is not supported: use truncation: 'auto'/],
    [{ moderation: { mode: "block" } }, "moderation", /^moderation is not supported/],
    [{ text: { verbosity: "low" } }, "text.verbosity", /^text\.verbosity is not supported/],
    [{ text: { format: { type: "text" }, style: "x" } }, "text", /^text has an unsupported key 'style': only format$/],
    [{ tools: [{ type: "web_search" }] }, "tools[0].type", /^tools\[0\]\.type 'web_search' is not supported: this server has no built-in tools, only 'function' tools$/],
    [{ tools: [fn("f"), { type: "file_search", vector_store_ids: ["vs_1"] }] }, "tools[1].type", /^tools\[1\]\.type 'file_search' is not supported/],
    [{ tools: [{ type: "code_interpreter", container: { type: "auto" } }] }, "tools[0].type", /'code_interpreter' is not supported/],
    [{ tools: [{ type: "mcp", server_label: "x" }] }, "tools[0].type", /'mcp' is not supported/],
    [{ tools: [fn("f")], tool_choice: { type: "web_search_preview" } }, "tool_choice.type", /^tool_choice\.type 'web_search_preview' is not supported: use 'function'$/],
    [{ tools: [fn("f")], tool_choice: { type: "allowed_tools", mode: "auto", tools: [] } }, "tool_choice.type", /'allowed_tools' is not supported/],
  ])("refuses %j", (extra, param, message) => {
    expectInvalid(() => parse(extra), param, message);
  });

  it("accepts the harmless values of the same fields", () => {
    const request = parse({ background: false, include: [], top_logprobs: 0, context_management: [], max_tool_calls: 3, prompt_cache_key: "k", prompt_cache_retention: "24h", prompt_cache_options: {}, service_tier: "auto", text: { verbosity: null } });
    expect(request.messages).toEqual([{ role: "user", content: "Hi" }]);
  });
});

describe("parseResponsesRequest: tools and tool_choice", () => {
  it.each([
    [{ tools: { type: "function" } }, "tools", "tools must be an array of function tools, got an object"],
    [{ tools: ["f"] }, "tools[0]", 'tools[0] must be an object, got the string "f"'],
    [{ tools: [{ type: "functions", name: "f" }] }, "tools[0].type", `tools[0].type must be 'function', got the string "functions"`],
    [{ tools: [{ name: "f" }] }, "tools[0].type", "tools[0].type must be 'function', got nothing"],
    [{ tools: [{ type: "function" }] }, "tools[0].name", "tools[0].name must be a string, got nothing"],
    // The Chat Completions shape, `function: {name}`, is not the Responses API's.
    [{ tools: [{ type: "function", function: { name: "f" } }] }, "tools[0].name", "tools[0].name must be a string, got nothing"],
    [{ tools: [{ type: "function", name: "get weather" }] }, "tools[0].name", 'tools[0].name must be 1 to 64 letters, digits, underscores or dashes, got the string "get weather"'],
    [{ tools: [{ type: "function", name: "x".repeat(65) }] }, "tools[0].name", /^tools\[0\]\.name must be 1 to 64 letters/],
    [{ tools: [fn("f"), fn("f")] }, "tools[1].name", "tools[1].name 'f' is defined twice: tool names must be unique"],
    [{ tools: [fn("f", { description: 5 })] }, "tools[0].description", "tools[0].description must be a string, got 5"],
    [{ tools: [fn("f", { strict: "yes" })] }, "tools[0].strict", 'tools[0].strict must be a boolean, got the string "yes"'],
    [{ tools: [fn("f", { parameters: "object" })] }, "tools[0].parameters", 'tools[0].parameters must be an object, got the string "object"'],
    [
      { tools: [fn("f"), fn("g", { parameters: { type: "object", properties: { n: { type: "integer", minimum: 3, maximum: 1 } } } })] },
      "tools[1].parameters",
      /^tools\[1\]\.parameters: no integer satisfies these bounds/,
    ],
    [{ tool_choice: "required" }, "tool_choice", "tool_choice 'required' needs tools: no tools were given"],
    [{ tools: [], tool_choice: "required" }, "tool_choice", "tool_choice 'required' needs tools: no tools were given"],
    [{ tools: [fn("f")], tool_choice: "any" }, "tool_choice", `tool_choice must be 'auto', 'none', 'required' or {type: 'function', name}, got the string "any"`],
    [{ tools: [fn("f")], tool_choice: { name: "f" } }, "tool_choice.type", "tool_choice.type must be 'function', got nothing"],
    [{ tools: [fn("f")], tool_choice: { type: "function" } }, "tool_choice.name", "tool_choice.name must be a string, got nothing"],
    [{ tools: [fn("f")], tool_choice: { type: "function", function: { name: "f" } } }, "tool_choice.name", "tool_choice.name must be a string, got nothing"],
    [{ tools: [fn("f"), fn("g")], tool_choice: { type: "function", name: "h" } }, "tool_choice.name", "tool_choice.name 'h' is not one of the tools ('f', 'g')"],
    [{ tool_choice: { type: "function", name: "h" } }, "tool_choice.name", "tool_choice.name 'h' is not one of the tools (none were given)"],
  ])("refuses %j", (extra, param, message) => {
    expectInvalid(() => parse(extra), param, message);
  });

  it("maps function tools, the tool choice and parallel_tool_calls, and echoes them in the response's shape", () => {
    const weather = { type: "object", properties: { city: { type: "string" } }, required: ["city"] };
    const request = parse({
      tools: [{ type: "function", name: "weather", description: "Weather in a city", parameters: weather, strict: false }, { type: "function", name: "now" }],
      tool_choice: { type: "function", name: "weather" },
      parallel_tool_calls: false,
    });
    expect(request.tools).toStrictEqual([
      { name: "weather", description: "Weather in a city", parameters: weather },
      { name: "now", parameters: { type: "object", properties: {} } },
    ]);
    expect(request.toolChoice).toStrictEqual({ type: "tool", name: "weather" });
    expect(request.parallelToolCalls).toBe(false);
    const { echo } = responsesStateOf(request);
    expect(echo.tools).toStrictEqual([
      { type: "function", name: "weather", description: "Weather in a city", parameters: weather, strict: false },
      { type: "function", name: "now", description: null, parameters: { type: "object", properties: {} }, strict: true },
    ]);
    expect(echo.tool_choice).toStrictEqual({ type: "function", name: "weather" });
    expect(echo.parallel_tool_calls).toBe(false);
  });

  it.each([
    ["auto", { type: "auto" }, "auto"],
    ["none", { type: "none" }, "none"],
    ["required", { type: "any" }, "required"],
  ])("maps tool_choice %j", (choice, internal, echoed) => {
    const request = parse({ tools: [fn("f")], tool_choice: choice });
    expect(request.toolChoice).toStrictEqual(internal);
    expect(responsesStateOf(request).echo.tool_choice).toBe(echoed);
  });

  it("leaves tools, tool choice and parallel calls unset when absent (echoing auto, parallel, no tools)", () => {
    for (const request of [parse({}), parse({ tools: [], parallel_tool_calls: true })]) {
      expect(request.tools).toBeUndefined();
      expect(request.toolChoice).toBeUndefined();
      expect(request.parallelToolCalls).toBeUndefined();
      expect(responsesStateOf(request).echo).toMatchObject({ tools: [], tool_choice: "auto", parallel_tool_calls: true });
    }
  });
});

describe("parseResponsesRequest: text.format", () => {
  const schema = { type: "object", properties: { answer: { type: "string" } }, required: ["answer"] };
  it.each([
    [{ text: "json" }, "text", 'text must be an object, got the string "json"'],
    [{ text: { format: "json_object" } }, "text.format", 'text.format must be an object, got the string "json_object"'],
    [{ text: { format: { type: "yaml" } } }, "text.format.type", `text.format.type must be 'text', 'json_object' or 'json_schema', got the string "yaml"`],
    [{ text: { format: {} } }, "text.format.type", "text.format.type must be 'text', 'json_object' or 'json_schema', got nothing"],
    [{ text: { format: { type: "json_schema", schema } } }, "text.format.name", "text.format.name must be a string, got nothing"],
    [{ text: { format: { type: "json_schema", name: "an answer", schema } } }, "text.format.name", 'text.format.name must be 1 to 64 letters, digits, underscores or dashes, got the string "an answer"'],
    [{ text: { format: { type: "json_schema", name: "a" } } }, "text.format.schema", "text.format.schema is required for a json_schema format: a JSON Schema object"],
    [{ text: { format: { type: "json_schema", name: "a", schema: "object" } } }, "text.format.schema", 'text.format.schema must be a JSON Schema (an object or a boolean), got the string "object"'],
    [{ text: { format: { type: "json_schema", name: "a", schema: { type: "array", uniqueItems: true } } } }, "text.format.schema", 'text.format.schema: the keyword "uniqueItems" is not supported (keyword uniqueItems, at the schema root)'],
    [{ text: { format: { type: "json_schema", name: "a", schema, description: 1 } } }, "text.format.description", "text.format.description must be a string, got 1"],
    [{ text: { format: { type: "json_schema", name: "a", schema, strict: "yes" } } }, "text.format.strict", 'text.format.strict must be a boolean, got the string "yes"'],
  ])("refuses %j", (extra, param, message) => {
    expectInvalid(() => parse(extra), param, message);
  });

  it("maps json_schema to responseFormat and echoes the format", () => {
    const request = parse({ text: { format: { type: "json_schema", name: "answer", description: "One answer", schema, strict: true } } });
    expect(request.responseFormat).toStrictEqual({ type: "json_schema", schema });
    expect(responsesStateOf(request).echo.text).toStrictEqual({ format: { type: "json_schema", name: "answer", schema, strict: true, description: "One answer" } });
    expect(responsesStateOf(parse({ text: { format: { type: "json_schema", name: "answer", schema } } })).echo.text.format.strict).toBe(false);
  });

  it("maps json_object, and text (or nothing) to free text", () => {
    const json = parse({ text: { format: { type: "json_object" } } });
    expect(json.responseFormat).toStrictEqual({ type: "json_object" });
    expect(responsesStateOf(json).echo.text).toStrictEqual({ format: { type: "json_object" } });
    for (const text of [undefined, {}, { format: { type: "text" } }, { format: null }]) {
      const plain = parse(text === undefined ? {} : { text });
      expect(plain.responseFormat).toBeUndefined();
      expect(responsesStateOf(plain).echo.text).toStrictEqual({ format: { type: "text" } });
    }
  });
});

describe("parseResponsesRequest: reasoning", () => {
  it.each([
    [{ reasoning: "high" }, "reasoning", 'reasoning must be an object, got the string "high"'],
    [{ reasoning: { effort: "max" } }, "reasoning.effort", `reasoning.effort must be 'none', 'minimal', 'low', 'medium', 'high', 'xhigh', got the string "max"`],
    [{ reasoning: { effort: 3 } }, "reasoning.effort", `reasoning.effort must be 'none', 'minimal', 'low', 'medium', 'high', 'xhigh', got 3`],
    // Only the table's own keys: not those every object inherits.
    [{ reasoning: { effort: "toString" } }, "reasoning.effort", /^reasoning\.effort must be 'none'/],
    [{ reasoning: { effort: "constructor" } }, "reasoning.effort", /^reasoning\.effort must be 'none'/],
    [{ reasoning: { summary: "long" } }, "reasoning.summary", `reasoning.summary must be 'auto', 'concise' or 'detailed', got the string "long"`],
    [{ reasoning: { effort: "low", budget: 100 } }, "reasoning", "reasoning has an unsupported key 'budget': effort and summary"],
  ])("refuses %j", (extra, param, message) => {
    expectInvalid(() => parse(extra), param, message);
  });

  it("turns each effort into thinking as REASONING_EFFORTS says", () => {
    expect(Object.keys(REASONING_EFFORTS)).toEqual(["none", "minimal", "low", "medium", "high", "xhigh"]);
    for (const [effort, thinking] of Object.entries(REASONING_EFFORTS)) {
      const request = parse({ reasoning: { effort } });
      expect(request.thinking, effort).toStrictEqual(thinking);
      expect(responsesStateOf(request).echo.reasoning).toStrictEqual({ effort, summary: null });
    }
    expect(parse({ reasoning: { effort: "none" } }).thinking).toStrictEqual({ enabled: false });
    expect(parse({ reasoning: { effort: "low" } }).thinking).toStrictEqual({ enabled: true, budgetTokens: 1024, effort: "low" });
    expect(parse({ reasoning: { effort: "high" } }).thinking).toStrictEqual({ enabled: true, effort: "high" });
    expect(parse({ reasoning: { effort: "xhigh" } }).thinking).toStrictEqual({ enabled: true, effort: "high" });
  });

  it("caps the budget at max_output_tokens", () => {
    expect(parse({ reasoning: { effort: "medium" }, max_output_tokens: 100 }).thinking).toStrictEqual({ enabled: true, budgetTokens: 100, effort: "medium" });
    expect(parse({ reasoning: { effort: "medium" }, max_output_tokens: 10_000 }).thinking).toStrictEqual({ enabled: true, budgetTokens: 4096, effort: "medium" });
    expect(parse({ reasoning: { effort: "low" }, max_output_tokens: 1024 }).thinking).toStrictEqual({ enabled: true, budgetTokens: 1024, effort: "low" });
    // No budget to cap: high effort thinks until the output limit.
    expect(parse({ reasoning: { effort: "high" }, max_output_tokens: 100 }).thinking).toStrictEqual({ enabled: true, effort: "high" });
  });

  it("without reasoning thinking is off; a reasoning object without effort means medium; summaries are accepted", () => {
    expect(parse({}).thinking).toStrictEqual({ enabled: false });
    expect(responsesStateOf(parse({})).echo.reasoning).toStrictEqual({ effort: null, summary: null });
    expect(parse({ reasoning: {} }).thinking).toStrictEqual({ enabled: true, budgetTokens: 4096, effort: "medium" });
    expect(responsesStateOf(parse({ reasoning: { summary: "auto" } })).echo.reasoning).toStrictEqual({ effort: "medium", summary: "auto" });
    expect(responsesStateOf(parse({ reasoning: { effort: "low", generate_summary: "concise" } })).echo.reasoning).toStrictEqual({ effort: "low", summary: "concise" });
  });
});

describe("parseResponsesRequest: metadata", () => {
  const pairs = (count: number) => Object.fromEntries(Array.from({ length: count }, (_, i) => [`k${i}`, "v"]));
  it.each([
    [{ metadata: "x" }, "metadata", 'metadata must be an object, got the string "x"'],
    [{ metadata: pairs(17) }, "metadata", "metadata must have at most 16 key-value pairs, got 17"],
    [{ metadata: { ["k".repeat(65)]: "v" } }, "metadata", /^metadata keys must be at most 64 characters, got 'k{64}\.\.\.' \(65\)$/],
    [{ metadata: { n: 5 } }, "metadata.n", "metadata.n must be a string of at most 512 characters, got 5"],
    [{ metadata: { long: "v".repeat(513) } }, "metadata.long", /^metadata\.long must be a string of at most 512 characters, got the string "v{40}\.\.\."$/],
  ])("refuses %j", (extra, param, message) => {
    expectInvalid(() => parse(extra), param, message);
  });

  it("accepts 16 pairs at the bounds and echoes them", () => {
    const metadata = { ...pairs(15), ["k".repeat(64)]: "v".repeat(512) };
    expect(responsesStateOf(parse({ metadata })).echo.metadata).toStrictEqual(metadata);
    expect(responsesStateOf(parse({})).echo.metadata).toStrictEqual({});
  });
});

describe("parseResponsesRequest: accepted shapes", () => {
  it("maps a minimal body: a string input is one user message; stored, not streamed, truncation disabled", () => {
    const request = parse({});
    expect(request).toMatchObject({
      format: "openai",
      model: MODEL,
      messages: [{ role: "user", content: "Hi" }],
      sampling: {},
      stop: [],
      stream: false,
      includeUsage: false,
      thinking: { enabled: false },
      autoCompaction: false,
    });
    expect(request.maxTokens).toBeUndefined();
    const state = responsesStateOf(request);
    expect(state.store).toBe(true);
    expect(state.input).toStrictEqual([{ id: expect.stringMatching(/^msg_[0-9a-f]{24}$/), type: "message", role: "user", status: "completed", content: [{ type: "input_text", text: "Hi" }] }]);
    expect(state.echo).toStrictEqual({
      instructions: null,
      max_output_tokens: null,
      metadata: {},
      parallel_tool_calls: true,
      previous_response_id: null,
      reasoning: { effort: null, summary: null },
      temperature: 1,
      top_p: 1,
      text: { format: { type: "text" } },
      tool_choice: "auto",
      tools: [],
      truncation: "disabled",
      user: null,
    });
  });

  it("maps the scalar settings (typed as the SDK's params)", () => {
    const params: ResponseCreateParams = {
      model: MODEL,
      input: "Hi",
      instructions: "Be brief.",
      max_output_tokens: 64,
      temperature: 0.5,
      top_p: 0.9,
      store: false,
      stream: true,
      stream_options: { include_obfuscation: false },
      truncation: "auto",
      user: "user-1",
      previous_response_id: "resp_abc123",
    };
    const request = parseResponsesRequest(params, models);
    expect(request).toMatchObject({ stream: true, maxTokens: 64, sampling: { temperature: 0.5, topP: 0.9 }, autoCompaction: true, userId: "user-1" });
    // A continuation's messages are completed once the stored conversation is read (continueConversation).
    expect(request.messages).toEqual([]);
    const state = responsesStateOf(request);
    expect(state).toMatchObject({ store: false, instructions: "Be brief.", previousResponseId: "resp_abc123" });
    expect(state.echo).toMatchObject({ instructions: "Be brief.", max_output_tokens: 64, temperature: 0.5, top_p: 0.9, truncation: "auto", user: "user-1", previous_response_id: "resp_abc123" });
    expect(parse({ truncation: "disabled" }).autoCompaction).toBe(false);
    expect(parse({ safety_identifier: "s-1" }).userId).toBe("s-1");
  });

  it("puts instructions first as a system message; developer becomes system; string and part contents are joined", () => {
    const request = parse({
      instructions: "Answer in French.",
      input: [
        { role: "developer", content: "Be terse." },
        { type: "message", role: "system", content: [{ type: "input_text", text: "Rule one." }, { type: "input_text", text: "Rule two." }] },
        { role: "user", content: [{ type: "input_text", text: "Bonjour" }] },
        { role: "assistant", content: [{ type: "output_text", text: "Salut" }, { type: "refusal", refusal: "Non." }] },
        { role: "user", content: "Encore" },
      ],
    });
    expect(request.messages).toStrictEqual([
      { role: "system", content: "Answer in French." },
      { role: "system", content: "Be terse." },
      { role: "system", content: "Rule one.\nRule two." },
      { role: "user", content: "Bonjour" },
      { role: "assistant", content: "Salut\nNon." },
      { role: "user", content: "Encore" },
    ]);
    const state = responsesStateOf(request);
    // Items keep their role; the assistant's parts are output_text.
    expect(state.input.map((item) => (item.type === "message" ? item.role : item.type))).toEqual(["developer", "system", "user", "assistant", "user"]);
    expect(state.input[3]).toMatchObject({ content: [{ type: "output_text", text: "Salut", annotations: [] }, { type: "output_text", text: "Non.", annotations: [] }] });
    // Empty instructions add nothing.
    expect(parse({ instructions: "" }).messages).toEqual([{ role: "user", content: "Hi" }]);
  });

  it("maps function calls and their outputs; a call joins the assistant message before it; reasoning joins what follows it", () => {
    const request = parse({
      input: [
        { role: "user", content: "Weather in Paris and Rome?" },
        { type: "reasoning", id: "rs_1", summary: [], content: [{ type: "reasoning_text", text: "Two cities." }] },
        { type: "message", role: "assistant", content: [{ type: "output_text", text: "Checking." }] },
        { type: "function_call", id: "fc_1", call_id: "call_a", name: "weather", arguments: '{"city":"Paris"}' },
        { type: "function_call", call_id: "call_b", name: "weather", arguments: '{"city": "Rome"}', status: "incomplete" },
        { type: "function_call_output", call_id: "call_a", output: "18C" },
        { type: "function_call_output", call_id: "call_b", output: [{ type: "input_text", text: "21C" }, { type: "input_text", text: "sunny" }] },
        { type: "reasoning", summary: [{ type: "summary_text", text: "Summarised." }] },
        { type: "function_call", call_id: "call_c", name: "compare", arguments: "{}" },
        { type: "function_call_output", call_id: "call_c", output: "Rome is warmer" },
        { role: "assistant", content: "Rome is warmer." },
      ],
    });
    expect(request.messages).toStrictEqual([
      { role: "user", content: "Weather in Paris and Rome?" },
      {
        role: "assistant",
        content: "Checking.",
        reasoning_content: "Two cities.",
        tool_calls: [
          { id: "call_a", type: "function", function: { name: "weather", arguments: '{"city":"Paris"}' } },
          { id: "call_b", type: "function", function: { name: "weather", arguments: '{"city": "Rome"}' } },
        ],
      },
      { role: "tool", tool_call_id: "call_a", content: "18C" },
      { role: "tool", tool_call_id: "call_b", content: "21C\nsunny" },
      // Reasoning without content falls back to its summary; the call after a tool result starts a new turn.
      { role: "assistant", content: "", reasoning_content: "Summarised.", tool_calls: [{ id: "call_c", type: "function", function: { name: "compare", arguments: "{}" } }] },
      { role: "tool", tool_call_id: "call_c", content: "Rome is warmer" },
      { role: "assistant", content: "Rome is warmer." },
    ]);
    const items = responsesStateOf(request).input;
    // Ids as sent are kept, missing ones made; arguments stay the text the model wrote; an incomplete call stays so.
    expect(items[1]!.id).toBe("rs_1");
    expect(items[3]).toStrictEqual({ id: "fc_1", type: "function_call", call_id: "call_a", name: "weather", arguments: '{"city":"Paris"}', status: "completed" });
    expect(items[4]).toMatchObject({ id: expect.stringMatching(/^fc_[0-9a-f]{24}$/), status: "incomplete" });
    expect(items[5]).toStrictEqual({ id: expect.stringMatching(/^fco_[0-9a-f]{24}$/), type: "function_call_output", call_id: "call_a", output: "18C", status: "completed" });
    expect(items[6]).toMatchObject({ output: "21C\nsunny" });
    expect(items[7]).toStrictEqual({ id: expect.stringMatching(/^rs_[0-9a-f]{24}$/), type: "reasoning", summary: [{ type: "summary_text", text: "Summarised." }], content: [] });
  });

  it("gives every item a fresh id of its type's prefix", () => {
    const items = parseInput([{ role: "user", content: "a" }, { role: "user", content: "b" }]);
    expect(items[0]!.id).not.toBe(items[1]!.id);
  });
});

describe("chatMessagesOf: a conversation that does not hold together", () => {
  const user = (text: string): ConversationItem => ({ id: "msg_u", type: "message", role: "user", status: "completed", content: [{ type: "input_text", text }] });
  const call = (callId: string): ConversationItem => ({ id: `fc_${callId}`, type: "function_call", call_id: callId, name: "f", arguments: "{}", status: "completed" });
  const output = (callId: string): ConversationItem => ({ id: `fco_${callId}`, type: "function_call_output", call_id: callId, output: "ok", status: "completed" });
  const reasoning: ConversationItem = { id: "rs_1", type: "reasoning", summary: [], content: [{ type: "reasoning_text", text: "hmm" }] };

  it("refuses a function_call_output that answers no call, naming its call_id", () => {
    expectInvalid(() => chatMessagesOf(undefined, { earlier: [], input: [user("a"), output("call_x")] }), "input[1].call_id", "input[1].call_id 'call_x' answers no function call of the turn before it (it made none)");
    expectInvalid(() => chatMessagesOf(undefined, { earlier: [], input: [output("call_x")] }), "input[0].call_id", /answers no function call of the turn before it \(it made none\)$/);
    expectInvalid(
      () => chatMessagesOf(undefined, { earlier: [], input: [user("a"), call("call_a"), call("call_b"), output("call_a"), output("call_x")] }),
      "input[4].call_id",
      "input[4].call_id 'call_x' answers no function call of the turn before it (its calls: 'call_a', 'call_b')",
    );
    // A call of an earlier turn is not this turn's.
    expectInvalid(() => chatMessagesOf(undefined, { earlier: [], input: [user("a"), call("call_a"), output("call_a"), user("b"), output("call_a")] }), "input[4].call_id", /answers no function call/);
    // The same through the parser, with the index in the request.
    expectInvalid(() => parse({ input: [{ role: "user", content: "a" }, { type: "function_call_output", call_id: "call_x", output: "1" }] }), "input[1].call_id", /'call_x' answers no function call/);
  });

  it("refuses a reasoning item that no assistant message or call follows", () => {
    const dangling = /^input\[1\] is a reasoning item without the assistant message or function call that follows it$/;
    expectInvalid(() => chatMessagesOf(undefined, { earlier: [], input: [user("a"), reasoning] }), "input[1]", dangling);
    expectInvalid(() => chatMessagesOf(undefined, { earlier: [], input: [user("a"), reasoning, user("b")] }), "input[1]", dangling);
    expectInvalid(() => chatMessagesOf(undefined, { earlier: [], input: [user("a"), reasoning, reasoning, call("c")] }), "input[1]", dangling);
    expectInvalid(() => parse({ input: [{ role: "user", content: "a" }, { type: "reasoning", summary: [] }] }), "input[1]", dangling);
  });

  it("refuses anything but the results after a turn's function calls, until every call is answered", () => {
    expectInvalid(
      () => chatMessagesOf(undefined, { earlier: [], input: [user("a"), call("call_a"), user("b")] }),
      "input[2]",
      "input[2] follows an assistant turn whose function call 'call_a' has no function_call_output: send its result first",
    );
    expectInvalid(
      () => chatMessagesOf(undefined, { earlier: [], input: [user("a"), call("call_a"), call("call_b"), output("call_b"), reasoning, call("call_c"), output("call_c")] }),
      "input[4]",
      /function call 'call_a' has no function_call_output/,
    );
    expectInvalid(
      () => chatMessagesOf(undefined, { earlier: [], input: [user("a"), call("call_a"), call("call_b")] }),
      "input",
      "input ends after an assistant turn whose function calls 'call_a', 'call_b' have no function_call_output: send their results first",
    );
    // Continuing a response that called a function with anything but its result (OpenAI's API refuses it too).
    expectInvalid(() => chatMessagesOf(undefined, { earlier: [user("a"), call("call_a")], input: [user("b")] }), "input[0]", /'call_a' has no function_call_output/);
    // Answered in any order, the conversation goes on.
    expect(chatMessagesOf(undefined, { earlier: [], input: [user("a"), call("call_a"), call("call_b"), output("call_b"), output("call_a"), user("b")] })).toHaveLength(5);
  });

  it("continues an earlier conversation: its items come first, and a call of its last turn can be answered", () => {
    const messages = chatMessagesOf("New instructions", { earlier: [user("a"), call("call_a")], input: [output("call_a")] });
    expect(messages).toStrictEqual([
      { role: "system", content: "New instructions" },
      { role: "user", content: "a" },
      { role: "assistant", content: "", tool_calls: [{ id: "call_a", type: "function", function: { name: "f", arguments: "{}" } }] },
      { role: "tool", tool_call_id: "call_a", content: "ok" },
    ]);
    // A stored response that ended inside its reasoning (cut by the token limit) is a turn without text, not a 400:
    // the client cannot change the stored conversation.
    expect(chatMessagesOf(undefined, { earlier: [user("a"), reasoning], input: [user("b")] })).toStrictEqual([
      { role: "user", content: "a" },
      { role: "assistant", content: "", reasoning_content: "hmm" },
      { role: "user", content: "b" },
    ]);
    // An unanswerable output in this request is named by its index in `input`, not in the whole conversation.
    expectInvalid(() => chatMessagesOf(undefined, { earlier: [user("a"), call("call_a")], input: [output("call_b")] }), "input[0].call_id", /'call_b' answers no function call/);
  });
});

describe("parseResponsesRequest: logprobs, reasoning effort and the benchmark extensions", () => {
  it("asks for logprobs with include message.output_text.logprobs (top_logprobs as many alternatives)", () => {
    expect(parse({ include: ["message.output_text.logprobs"] }).logprobs).toStrictEqual({ top: 0 });
    expect(parse({ include: ["message.output_text.logprobs"], top_logprobs: 20 }).logprobs).toStrictEqual({ top: 20 });
    expect(parse({ top_logprobs: 0 }).logprobs).toBeUndefined();
  });

  it("maps ignore_eos and min_tokens", () => {
    const request = parse({ ignore_eos: true, min_tokens: 4 });
    expect([request.ignoreEndOfGeneration, request.minTokens]).toStrictEqual([true, 4]);
  });

  it("refuses an effort that turns reasoning on for a model that does not reason, and accepts 'none'", () => {
    const plain: ServedModels = { ...models, canReason: () => false };
    expectInvalid(() => parseResponsesRequest({ model: MODEL, input: "Hi", reasoning: { effort: "high" } }, plain), "reasoning.effort", /^Unsupported value: reasoning\.effort 'high' is not supported with the model/);
    expect(parseResponsesRequest({ model: MODEL, input: "Hi", reasoning: { effort: "none" } }, plain).thinking).toStrictEqual({ enabled: false });
  });
});
