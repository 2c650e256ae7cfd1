// Fuzz test: random and mutated request bodies must parse into an InternalRequest or throw a ProtocolError naming a
// field, never anything else (a TypeError from a wrong-typed field would become a 500).
import { describe, expect, it } from "vitest";
import { ProtocolError, type InternalRequest, type ServedModels } from "../../protocol/internal.js";
import { parseChatCompletionRequest } from "./parse.js";
import { seededRandom } from "../../../engine/testing/seeded-random.js";
import { jsonFuzzer } from "../testing/json-fuzz.js";

const MODEL = "service/tim-qwen-27b";
const models: ServedModels = { slugs: () => [MODEL, "service/tim-vision-27b"], hasVision: (slug) => slug.includes("vision") };


const KEYS = [
  "model", "messages", "role", "content", "type", "text", "image_url", "url", "tool_calls", "id", "function", "name", "arguments",
  "tool_call_id", "reasoning_content", "refusal", "max_tokens", "max_completion_tokens", "temperature", "top_p", "top_k", "seed",
  "frequency_penalty", "presence_penalty", "stop", "stream", "stream_options", "include_usage", "chat_template_kwargs",
  "enable_thinking", "enable_auto_compaction", "tools", "parameters", "tool_choice", "user", "n", "response_format", "logprobs",
  "top_logprobs", "__proto__", "constructor", "toString", "hasOwnProperty", "",
];
const STRINGS = [
  "", "NaN", "Infinity", "-Infinity", "1e309", "0x10", "true", "null", "user", "assistant", "system", "developer", "tool", "function",
  "text", "image_url", "refusal", "auto", "none", "required", "json_object", "json_schema", MODEL, "call_1", "get_weather", "\u0000",
  "x".repeat(5000), "💥", "__proto__",
];
const NUMBERS = [
  0, -0, 1, -1, 0.5, 2, 2.0000001, 4, 5, 20, 21, -2, 1e308, -1e308, Number.MAX_SAFE_INTEGER, Number.MAX_SAFE_INTEGER + 2, 2 ** 64,
  Number.MIN_VALUE, 1e-300, 3.14,
];

const { randomJson, mutate } = jsonFuzzer({ keys: KEYS, strings: STRINGS, numbers: NUMBERS });

/** A valid body using most features, to mutate. */
function validBody(): Record<string, unknown> {
  return {
    model: MODEL,
    messages: [
      { role: "developer", content: "Be brief." },
      { role: "user", content: [{ type: "text", text: "Weather?" }], name: "alice" },
      {
        role: "assistant",
        content: null,
        reasoning_content: "Need a tool.",
        tool_calls: [{ id: "call_1", type: "function", function: { name: "get_weather", arguments: '{"city":"Paris"}' } }],
      },
      { role: "tool", tool_call_id: "call_1", content: "18C" },
      { role: "assistant", content: "18C." },
      { role: "user", content: "Thanks" },
    ],
    tools: [{ type: "function", function: { name: "get_weather", description: "d", parameters: { type: "object" } } }],
    tool_choice: { type: "function", function: { name: "get_weather" } },
    max_tokens: 100,
    temperature: 0.5,
    top_p: 0.9,
    frequency_penalty: 0,
    presence_penalty: 0,
    stop: ["END"],
    seed: 7,
    stream: true,
    stream_options: { include_usage: true },
    chat_template_kwargs: { enable_thinking: true, enable_auto_compaction: false },
    user: "u",
    n: 1,
    response_format: { type: "text" },
  };
}

/** Parses a body and classifies the outcome, failing on anything but a request or a well-formed ProtocolError. */
function outcome(body: unknown): "accepted" | "rejected" {
  let request: InternalRequest;
  try {
    request = parseChatCompletionRequest(body, models);
  } catch (error) {
    if (!(error instanceof ProtocolError)) throw new Error(`non-ProtocolError for ${JSON.stringify(body)?.slice(0, 500)}: ${String(error)}`);
    expect(["invalid_request", "not_found"]).toContain(error.kind);
    expect(error.message.length).toBeGreaterThan(0);
    expect(error.message.length).toBeLessThan(1000);
    if (error.param !== undefined) expect(error.param).toMatch(/^[a-z_]+(\[\d+\]|\.[A-Za-z_$][\w$]*)*$/);
    return "rejected";
  }
  // An accepted request satisfies the internal type's invariants.
  expect(request.format).toBe("openai");
  expect(request.messages.length).toBeGreaterThan(0);
  for (const message of request.messages) {
    expect(["system", "user", "assistant", "tool"]).toContain(message.role);
    expect(typeof message.content).toBe("string");
  }
  expect(request.stop.length).toBeLessThanOrEqual(4);
  expect(typeof request.stream).toBe("boolean");
  expect(typeof request.includeUsage).toBe("boolean");
  expect(typeof request.thinking.enabled).toBe("boolean");
  if (request.maxTokens !== undefined) expect(Number.isSafeInteger(request.maxTokens) && request.maxTokens > 0).toBe(true);
  for (const value of Object.values(request.sampling)) expect(Number.isFinite(value)).toBe(true);
  return "accepted";
}

describe("parseChatCompletionRequest fuzz", () => {
  it("accepts the unmutated base body", () => {
    expect(outcome(validBody())).toBe("accepted");
  });

  it("2000 random and mutated bodies: an InternalRequest or a ProtocolError, nothing else", () => {
    // FUZZ_SEED=<n> explores other bodies; the default keeps the test deterministic.
    const random = seededRandom(Number(process.env.FUZZ_SEED ?? 0x10_0c));
    const counts = { accepted: 0, rejected: 0 };
    for (let iteration = 0; iteration < 2000; iteration++) {
      let body: unknown;
      const kind = iteration % 4;
      if (kind === 0) body = randomJson(random, 4);
      else if (kind === 1) {
        // A random object that at least names a real model and has messages, so parsing gets past the first checks.
        body = { ...(randomJson(random, 3) as object), model: MODEL, messages: randomJson(random, 3) };
      } else {
        body = validBody();
        for (let mutations = 1 + Math.floor(random() * (kind === 2 ? 1 : 4)); mutations > 0; mutations--) {
          mutate(random, body as Record<string, unknown>);
        }
      }
      // Half go through a JSON round trip, as the HTTP layer delivers them (own `__proto__` keys, no undefined).
      if (random() < 0.5) {
        const text = JSON.stringify(body);
        body = text === undefined ? body : JSON.parse(text);
      }
      counts[outcome(body)]++;
    }
    // Both outcomes must be common, or the fuzzing explores too little.
    expect(counts.accepted).toBeGreaterThan(50);
    expect(counts.rejected).toBeGreaterThan(1000);
  });

  it("survives bodies built from JSON text with prototype-named keys", () => {
    const text = `{"model":"${MODEL}","messages":[{"role":"user","content":"x","__proto__":{"role":"tool"}}],"__proto__":{"stream":"yes"},"constructor":1,"chat_template_kwargs":{"__proto__":true}}`;
    const error = (() => {
      try {
        parseChatCompletionRequest(JSON.parse(text), models);
      } catch (caught) {
        return caught;
      }
      return undefined;
    })();
    expect(error).toBeInstanceOf(ProtocolError);
    // The top-level __proto__ is an own key JSON.parse made, unrecognised like any other.
    expect((error as ProtocolError).message).toBe("Unrecognized request argument supplied: '__proto__'");
    const nested = `{"model":"${MODEL}","messages":[{"role":"user","content":"x","__proto__":{"role":"tool"}}],"chat_template_kwargs":{"__proto__":true}}`;
    expect(() => parseChatCompletionRequest(JSON.parse(nested), models)).toThrow(expect.objectContaining({ param: "chat_template_kwargs.__proto__" }));
  });
});
