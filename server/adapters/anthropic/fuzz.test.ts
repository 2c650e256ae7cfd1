// Fuzzing the parser: random and mutated bodies either parse into a well-formed InternalRequest or fail with a
// ProtocolError naming its field; nothing else (TypeError, RangeError, a hang) may come out.
import { describe, expect, it } from "vitest";
import { type InternalRequest, ProtocolError, type ServedModels } from "../../protocol/internal.js";
import { parseMessagesRequest } from "./parse.js";
import { ThinkingSigner } from "./thinking-signature.js";
import { seededRandom } from "../../../engine/testing/seeded-random.js";

const MODEL = "service/tim-marathon";
const models: ServedModels = { slugs: () => [MODEL], hasVision: () => false };
const signer = new ThinkingSigner("fuzz-secret");


const KEYS = [
  "model", "max_tokens", "messages", "role", "content", "type", "text", "id", "name", "input", "tool_use_id", "is_error",
  "thinking", "signature", "source", "system", "temperature", "top_p", "top_k", "stop_sequences", "stream", "tools",
  "tool_choice", "input_schema", "description", "budget_tokens", "metadata", "user_id", "chat_template_kwargs",
  "enable_auto_compaction", "service_tier", "__proto__", "constructor", "toString",
];
const STRINGS = [
  "", " ", "user", "assistant", "system", "tool", "text", "image", "tool_use", "tool_result", "thinking", "redacted_thinking",
  "enabled", "disabled", "auto", "any", "none", "object", "base64", "image/png", MODEL, "get_weather", "t1", "\u0000", "\ud800", "😀",
  signer.sign("Let me think."), "x".repeat(300),
];
const NUMBERS = [0, -0, 1, -1, 0.5, 1.5, 2, 16, 17, 1023, 1024, 4096, 2 ** 53, -(2 ** 31), 1e308, Number.NaN, Number.POSITIVE_INFINITY];

function randomValue(rand: () => number, depth: number): unknown {
  const pick = <T>(items: readonly T[]): T => items[Math.floor(rand() * items.length)] as T;
  const roll = rand();
  if (depth <= 0 || roll < 0.35) {
    const leaf = rand();
    if (leaf < 0.1) return null;
    if (leaf < 0.2) return rand() < 0.5;
    if (leaf < 0.5) return pick(NUMBERS);
    return pick(STRINGS);
  }
  if (roll < 0.6) return Array.from({ length: Math.floor(rand() * 4) }, () => randomValue(rand, depth - 1));
  const object: Record<string, unknown> = {};
  for (let i = Math.floor(rand() * 5); i > 0; i--) object[pick(KEYS)] = randomValue(rand, depth - 1);
  return object;
}

/** A request using every feature, so mutations reach every rule. */
function richBody(): Record<string, unknown> {
  return {
    model: MODEL,
    max_tokens: 4096,
    system: [{ type: "text", text: "Be brief." }],
    temperature: 0.5,
    top_p: 0.9,
    top_k: 20,
    stop_sequences: ["END"],
    stream: true,
    tools: [{ name: "get_weather", description: "d", input_schema: { type: "object", properties: {} } }],
    tool_choice: { type: "auto" },
    thinking: { type: "enabled", budget_tokens: 2048 },
    metadata: { user_id: "u" },
    chat_template_kwargs: { enable_auto_compaction: true },
    messages: [
      { role: "user", content: [{ type: "text", text: "Weather?" }] },
      {
        role: "assistant",
        content: [
          { type: "thinking", thinking: "Let me think.", signature: signer.sign("Let me think.") },
          { type: "text", text: "Checking." },
          { type: "tool_use", id: "t1", name: "get_weather", input: { city: "Paris" } },
        ],
      },
      { role: "user", content: [{ type: "tool_result", tool_use_id: "t1", content: [{ type: "text", text: "18C" }] }, { type: "text", text: "Thanks" }] },
      { role: "assistant", content: "Prefill" },
    ],
  };
}

/** Replaces, deletes or rewraps one random node of `body` (mutating it). */
function mutate(body: unknown, rand: () => number): unknown {
  if (rand() < 0.15 || body === null || typeof body !== "object") return randomValue(rand, 3);
  const container = body as Record<string, unknown>;
  const keys = Object.keys(container);
  if (keys.length === 0) return randomValue(rand, 3);
  const key = keys[Math.floor(rand() * keys.length)] as string;
  const action = rand();
  if (action < 0.5) container[key] = mutate(container[key], rand);
  else if (action < 0.6) delete container[key];
  else if (action < 0.7) container[key] = null;
  else if (action < 0.8) container[key] = [container[key]];
  else if (action < 0.9 && Array.isArray(body)) body.push(structuredClone(body[0]));
  else container[key] = randomValue(rand, 2);
  return body;
}

function checkRequest(request: InternalRequest): void {
  expect(request.format).toBe("anthropic");
  expect(request.model).toBe(MODEL);
  expect(Number.isSafeInteger(request.maxTokens) && request.maxTokens! >= 1).toBe(true);
  expect(request.messages.length).toBeGreaterThan(0);
  for (const message of request.messages) {
    expect(["system", "user", "assistant", "tool"]).toContain(message.role);
    expect(typeof message.content).toBe("string");
  }
  expect(request.stop.every((s) => typeof s === "string" && s.length > 0)).toBe(true);
  expect(typeof request.stream).toBe("boolean");
  expect(typeof request.autoCompaction).toBe("boolean");
}

describe("parseMessagesRequest fuzz", () => {
  it("returns an InternalRequest or throws a ProtocolError for 2000 random and mutated bodies", () => {
    const rand = seededRandom(0x5eed);
    const params = new Set<string>();
    let parsed = 0;
    for (let i = 0; i < 2000; i++) {
      let body: unknown = undefined;
      if (i % 10 === 0) body = randomValue(rand, 4);
      else {
        const rich = richBody();
        // Half the mutations go to the conversation, where most rules live.
        for (let n = 1 + Math.floor(rand() * 3); n > 0; n--) {
          if (rand() < 0.5) rich.messages = mutate(rich.messages, rand);
          else body = mutate(rich, rand);
        }
        body ??= rich;
      }
      // JSON round trip half the time: real bodies come from JSON.parse (own __proto__ keys, no NaN).
      if (i % 2 === 1) body = JSON.parse(JSON.stringify(body) ?? "null");
      let outcome: InternalRequest | ProtocolError;
      try {
        outcome = parseMessagesRequest(body, models, signer);
      } catch (error) {
        if (!(error instanceof ProtocolError)) throw new Error(`body ${i} threw ${String(error)}: ${JSON.stringify(body)}`);
        outcome = error;
      }
      if (outcome instanceof ProtocolError) {
        expect(["invalid_request", "not_found"]).toContain(outcome.kind);
        expect(outcome.message.length).toBeGreaterThan(0);
        if (outcome.param !== undefined) {
          expect(outcome.message.startsWith(`${outcome.param}: `)).toBe(true);
          params.add(outcome.param.replace(/\[\d+\]/g, "[]"));
        }
      } else {
        checkRequest(outcome);
        parsed++;
      }
    }
    // The mutations must reach deep rules, and leave enough bodies valid to exercise the mapping.
    expect(parsed).toBeGreaterThan(100);
    expect(params.size).toBeGreaterThan(30);
  });
});
