// Fuzz test: random and mutated Responses API bodies must parse into an InternalRequest (whose conversation turns into
// chat messages, also when it continues stored items) or throw a ProtocolError naming a field, never anything else: a
// TypeError from a wrong-typed field would become a 500.
import { describe, expect, it } from "vitest";
import { seededRandom } from "../../../engine/testing/seeded-random.js";
import { ProtocolError, type InternalRequest, type ServedModels } from "../../protocol/internal.js";
import { jsonFuzzer } from "../testing/json-fuzz.js";
import type { ConversationItem } from "./items.js";
import { continueConversation, parseResponsesRequest, responsesStateOf } from "./parse.js";

const MODEL = "service/tim-qwen-27b";
const models: ServedModels = { slugs: () => [MODEL], hasVision: () => false };

const KEYS = [
  "model", "input", "instructions", "role", "content", "type", "text", "id", "call_id", "name", "arguments", "output", "summary",
  "status", "refusal", "encrypted_content", "max_output_tokens", "temperature", "top_p", "tools", "parameters", "strict", "tool_choice",
  "parallel_tool_calls", "format", "schema", "reasoning", "effort", "metadata", "store", "previous_response_id", "stream",
  "stream_options", "truncation", "include", "background", "__proto__", "constructor", "",
];
const STRINGS = [
  "", "user", "assistant", "system", "developer", "message", "function_call", "function_call_output", "reasoning", "input_text",
  "output_text", "reasoning_text", "summary_text", "input_image", "item_reference", "web_search", "function", "auto", "none",
  "required", "low", "high", "json_schema", "json_object", "disabled", MODEL, "call_1", "get_weather", "resp_abc", "\u0000",
  "x".repeat(5000), "💥", "__proto__",
];
const NUMBERS = [0, -0, 1, -1, 0.5, 2, 2.0000001, 16, 17, 1e308, Number.MAX_SAFE_INTEGER + 2, 3.14];

const { randomJson, mutate } = jsonFuzzer({ keys: KEYS, strings: STRINGS, numbers: NUMBERS });

/** A valid body using most features, to mutate. */
function validBody(): Record<string, unknown> {
  return {
    model: MODEL,
    instructions: "Be brief.",
    input: [
      { role: "developer", content: "Use tools." },
      { type: "message", role: "user", content: [{ type: "input_text", text: "Weather?" }] },
      { type: "reasoning", id: "rs_1", summary: [], content: [{ type: "reasoning_text", text: "Need a tool." }] },
      { type: "function_call", call_id: "call_1", name: "get_weather", arguments: '{"city":"Paris"}' },
      { type: "function_call_output", call_id: "call_1", output: "18C" },
      { type: "message", role: "assistant", content: [{ type: "output_text", text: "18C." }] },
      { role: "user", content: "Thanks" },
    ],
    tools: [{ type: "function", name: "get_weather", description: "d", parameters: { type: "object" }, strict: true }],
    tool_choice: { type: "function", name: "get_weather" },
    parallel_tool_calls: false,
    max_output_tokens: 100,
    temperature: 0.5,
    top_p: 0.9,
    reasoning: { effort: "low" },
    text: { format: { type: "text" } },
    metadata: { run: "fuzz" },
    store: true,
    stream: true,
    truncation: "auto",
    user: "u",
  };
}

/** Stored items a continuation puts before the input (as an earlier response left them). */
const EARLIER: ConversationItem[] = [
  { id: "msg_1", type: "message", role: "user", status: "completed", content: [{ type: "input_text", text: "Hi" }] },
  { id: "fc_1", type: "function_call", call_id: "call_1", name: "get_weather", arguments: "{}", status: "completed" },
];

/** Parses a body and classifies the outcome, failing on anything but a request or a well-formed ProtocolError. */
function outcome(body: unknown): "accepted" | "rejected" {
  let request: InternalRequest;
  try {
    request = parseResponsesRequest(body, models);
    // A continuation (or a reference) is completed as the endpoint completes it, with stored items.
    if (request.messages.length === 0) {
      const input = responsesStateOf(request).input.map((item): ConversationItem => (item.type === "item_reference" ? { ...EARLIER[0]!, id: item.id } : item));
      continueConversation(request, EARLIER, input);
    }
  } catch (error) {
    if (!(error instanceof ProtocolError)) throw new Error(`non-ProtocolError for ${JSON.stringify(body)?.slice(0, 500)}: ${String(error)}`);
    expect(["invalid_request", "not_found"]).toContain(error.kind);
    expect(error.message.length).toBeGreaterThan(0);
    expect(error.message.length).toBeLessThan(1000);
    if (error.param !== undefined) expect(error.param).toMatch(/^[a-z_]+(\[\d+\]|\.[A-Za-z_$][\w$]*)*$/);
    return "rejected";
  }
  expect(request.messages.length).toBeGreaterThan(0);
  for (const message of request.messages) {
    expect(["system", "user", "assistant", "tool"]).toContain(message.role);
    expect(typeof message.content).toBe("string");
  }
  expect(typeof request.stream).toBe("boolean");
  expect(typeof request.thinking.enabled).toBe("boolean");
  if (request.maxTokens !== undefined) expect(Number.isSafeInteger(request.maxTokens) && request.maxTokens > 0).toBe(true);
  for (const value of Object.values(request.sampling)) expect(Number.isFinite(value)).toBe(true);
  // The response object echoes the settings: they must survive JSON.
  expect(() => JSON.stringify(request.wireState)).not.toThrow();
  return "accepted";
}

describe("parseResponsesRequest fuzz", () => {
  it("accepts the unmutated base body", () => {
    expect(outcome(validBody())).toBe("accepted");
  });

  it("2000 random and mutated bodies: an InternalRequest or a ProtocolError, nothing else", () => {
    // FUZZ_SEED=<n> explores other bodies; the default keeps the test deterministic.
    const random = seededRandom(Number(process.env.FUZZ_SEED ?? 0x2e5));
    const counts = { accepted: 0, rejected: 0 };
    for (let iteration = 0; iteration < 2000; iteration++) {
      let body: unknown;
      const kind = iteration % 4;
      if (kind === 0) body = randomJson(random, 4);
      else if (kind === 1) body = { ...(randomJson(random, 3) as object), model: MODEL, input: randomJson(random, 3) };
      else {
        body = validBody();
        // Some continue a stored conversation (the input's function_call_output may then answer its call).
        if (random() < 0.3) (body as Record<string, unknown>).previous_response_id = "resp_0123";
        for (let mutations = 1 + Math.floor(random() * (kind === 2 ? 1 : 4)); mutations > 0; mutations--) mutate(random, body as Record<string, unknown>);
      }
      if (random() < 0.5) {
        const text = JSON.stringify(body);
        body = text === undefined ? body : JSON.parse(text);
      }
      counts[outcome(body)]++;
    }
    expect(counts.accepted).toBeGreaterThan(50);
    expect(counts.rejected).toBeGreaterThan(1000);
  });
});
