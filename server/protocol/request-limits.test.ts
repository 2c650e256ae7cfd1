// The per-request limits on messages, input items and tools, through each wire format's parser: at the limit a
// request parses, one past it is a 400 naming the parameter and the limit, and the limit is checked before the
// entries themselves (a body past it is refused even where its entries are malformed).
import { describe, expect, it } from "vitest";
import { parseMessagesRequest } from "../adapters/anthropic/parse.js";
import { ThinkingSigner } from "../adapters/anthropic/thinking-signature.js";
import { parseChatCompletionRequest } from "../adapters/openai/parse.js";
import { continueConversation, parseResponsesRequest } from "../adapters/responses/parse.js";
import type { ConversationItem } from "../adapters/responses/items.js";
import { rejection } from "../adapters/testing/rejection.js";
import type { ServedModels } from "./internal.js";
import { REQUEST_LIMITS } from "./request-limits.js";

const MODEL = "service/tim-base-27b";
const models: ServedModels = { slugs: () => [MODEL], hasVision: () => false };
const signer = new ThinkingSigner("request-limits-test-secret");

/** `count` short messages, users and assistants in turn, a user last. */
const messages = (count: number) => Array.from({ length: count }, (_, i) => ({ role: (count - 1 - i) % 2 === 0 ? "user" : "assistant", content: `hello ${i}` }));
/** `count` tools in a format's shape, each with `properties` string properties. */
const tools = (count: number, shape: "openai" | "anthropic" | "responses", properties = 1) => Array.from({ length: count }, (_, i) => {
  const parameters = { type: "object", properties: Object.fromEntries(Array.from({ length: properties }, (_, p) => [`field${p}`, { type: "string" }])) };
  if (shape === "anthropic") return { name: `tool_${i}`, input_schema: parameters };
  if (shape === "responses") return { type: "function", name: `tool_${i}`, parameters };
  return { type: "function", function: { name: `tool_${i}`, parameters } };
});

const chat = (body: Record<string, unknown>) => parseChatCompletionRequest({ model: MODEL, ...body }, models);
const anthropic = (body: Record<string, unknown>) => parseMessagesRequest({ model: MODEL, max_tokens: 16, ...body }, models, signer);
const responses = (body: Record<string, unknown>) => parseResponsesRequest({ model: MODEL, ...body }, models, "resp_limits");

describe("messages per request", () => {
  const limit = REQUEST_LIMITS.messages;

  it("chat completions: the limit parses, one more is a 400 naming messages and the limit", () => {
    expect(chat({ messages: messages(limit) }).messages).toHaveLength(limit);
    const error = rejection(() => chat({ messages: messages(limit + 1) }));
    expect(error.kind).toBe("invalid_request");
    expect(error.param).toBe("messages");
    expect(error.message).toBe(`messages has ${limit + 1} messages; a request may have at most ${limit} (limit on messages per request)`);
  });

  it("messages: the limit parses, one more is a 400 naming messages", () => {
    expect(anthropic({ messages: messages(limit) }).messages).toHaveLength(limit);
    const error = rejection(() => anthropic({ messages: messages(limit + 1) }));
    expect(error.param).toBe("messages");
    expect(error.message).toContain(`at most ${limit} (limit on messages per request)`);
  });

  it("responses: the limit parses, one more input item is a 400 naming input", () => {
    expect(responses({ input: messages(limit) }).messages).toHaveLength(limit);
    const error = rejection(() => responses({ input: messages(limit + 1) }));
    expect(error.param).toBe("input");
    expect(error.message).toBe(`input has ${limit + 1} items; a request may have at most ${limit} (limit on items per request)`);
  });

  it("responses: a stored conversation counts with the input it continues", () => {
    const request = responses({ input: "next", previous_response_id: "resp_earlier" });
    const earlier = messages(limit).map((message, index) => ({ id: `msg_${index}`, type: "message", role: message.role, status: "completed", content: [{ type: message.role === "user" ? "input_text" : "output_text", text: message.content }] })) as ConversationItem[];
    const input = [{ id: "msg_next", type: "message", role: "user", status: "completed", content: [{ type: "input_text", text: "next" }] }] as ConversationItem[];
    const error = rejection(() => continueConversation(request, earlier, input));
    expect(error.param).toBe("previous_response_id");
    expect(error.message).toContain(`${limit + 1} items (${limit} stored, 1 in input); a request may have at most ${limit}`);
    continueConversation(request, earlier.slice(1), input);
    expect(request.messages).toHaveLength(limit);
  });

  it("is checked before the entries: a body past it is refused for its length, not for a malformed entry", () => {
    const malformed = Array.from({ length: limit + 1 }, () => ({ role: "nobody" }));
    expect(rejection(() => chat({ messages: malformed })).param).toBe("messages");
    expect(rejection(() => anthropic({ messages: malformed })).param).toBe("messages");
    expect(rejection(() => responses({ input: malformed })).param).toBe("input");
  });
});

describe("tools per request", () => {
  const limit = REQUEST_LIMITS.tools;
  const formats = [
    { name: "chat completions", shape: "openai" as const, parse: (list: unknown[]) => chat({ messages: messages(1), tools: list }) },
    { name: "messages", shape: "anthropic" as const, parse: (list: unknown[]) => anthropic({ messages: messages(1), tools: list }) },
    { name: "responses", shape: "responses" as const, parse: (list: unknown[]) => responses({ input: "hi", tools: list }) },
  ];

  for (const format of formats) {
    it(`${format.name}: ${limit} tools parse, one more is a 400 naming tools and the limit`, () => {
      expect(format.parse(tools(limit, format.shape)).tools).toHaveLength(limit);
      const error = rejection(() => format.parse(tools(limit + 1, format.shape)));
      expect(error.param).toBe("tools");
      expect(error.message).toBe(`tools has ${limit + 1} tools; a request may have at most ${limit} (limit on tools per request)`);
    });

    it(`${format.name}: definitions longer than the limit as JSON are a 400 before any schema is compiled`, () => {
      // 100 tools of 200 properties: under the count, over the size; compiled, they would also pass the subschema limit.
      const large = tools(100, format.shape, 200);
      expect(JSON.stringify(large).length).toBeGreaterThan(REQUEST_LIMITS.toolCharacters);
      const error = rejection(() => format.parse(large));
      expect(error.param).toBe("tools");
      expect(error.message).toContain(`a request's tool definitions may take at most ${REQUEST_LIMITS.toolCharacters} (limit on tool definitions per request)`);
    });
  }
});

describe("responses: a turn of many parallel calls", () => {
  it("matches each output to its call and names the one that answers none", () => {
    const calls = 2000;
    const input = [
      { role: "user", content: "do it all" },
      ...Array.from({ length: calls }, (_, i) => ({ type: "function_call", call_id: `call_${i}`, name: "f", arguments: "{}" })),
      ...Array.from({ length: calls }, (_, i) => ({ type: "function_call_output", call_id: `call_${calls - 1 - i}`, output: `${i}` })),
    ];
    const request = responses({ input });
    expect(request.messages).toHaveLength(2 + calls);
    expect(request.messages[1]!.tool_calls).toHaveLength(calls);
    const stray = [...input.slice(0, -1), { type: "function_call_output", call_id: "call_unknown", output: "?" }];
    const error = rejection(() => responses({ input: stray }));
    expect(error.param).toBe(`input[${2 * calls}].call_id`);
    expect(error.message).toContain("its calls: 'call_0', 'call_1'");
    expect(error.message).toContain(`and ${calls - 8} more`);
  });
});
