// Tool calls end to end without a model: a scripted engine writes Hermes `<tool_call>` text (random-weight test models
// never call tools), run.ts turns it into InternalEvents, and the real HTTP server answers the official openai and
// @anthropic-ai/sdk clients, streamed and not.
import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { EngineEvent } from "../engine/request.js";
import { createEndpoints } from "./adapters/endpoints.js";
import { StaticKeys } from "./http/auth.js";
import { type LoomServer, startServer } from "./server.js";
import { ModelRegistry } from "./models.js";
import type { InternalEvent, InternalRequest } from "./protocol/internal.js";
import { internalEvents } from "./protocol/run.js";
import { SCRIPTED_MODEL, type Script, ScriptedEngine, engineEvents, replay } from "./testing/scripted-engine.js";

const KEY = "sk-tools";
const CHAT = "service/tim-scripted-27b";
const MESSAGES = "service/scripted-marathon";
const CALL = /^call_[0-9a-f]{24}$/;

const weather = (city: string) => `<tool_call>\n{"name": "get_weather", "arguments": {"city": "${city}"}}\n</tool_call>`;
/** Two calls after some text, cut into awkward deltas (tags split across them). */
const TWO_CALLS = [..."I'll check both.\n\n", ...`${weather("Paris")}\n${weather("Oslo")}`.match(/.{1,5}/gs)!];

/** A minimal request; fields as the adapters would parse them. */
function request(overrides: Partial<InternalRequest> = {}): InternalRequest {
  return {
    format: "openai",
    model: CHAT,
    messages: [{ role: "user", content: "Weather in Paris and Oslo?" }],
    tools: [{ name: "get_weather", parameters: { type: "object", properties: { city: { type: "string" } } } }],
    sampling: {},
    stop: [],
    stream: false,
    includeUsage: false,
    thinking: { enabled: false },
    autoCompaction: true,
    ...overrides,
  };
}

async function collect(script: Script, req: InternalRequest): Promise<InternalEvent[]> {
  const events: InternalEvent[] = [];
  for await (const event of internalEvents(replay(engineEvents(script)), req)) events.push(event);
  return events;
}

/** Events without ids (random) and usage, consecutive text (or thinking) merged. */
function shape(events: InternalEvent[]): unknown[] {
  const out: unknown[] = [];
  for (const event of events) {
    const last = out.at(-1) as { type: string; text: string } | undefined;
    if ((event.type === "text" || event.type === "thinking") && last?.type === event.type) last.text += event.text;
    else if (event.type === "text" || event.type === "thinking") out.push({ ...event });
    else if (event.type === "tool_call") out.push({ type: "tool_call", name: event.name, arguments: event.arguments });
    else if (event.type === "tool_call_start" || event.type === "tool_call_delta") continue; // checked in "streams each call"
    else if (event.type === "finish") out.push({ type: "finish", reason: event.reason, stopSequence: event.stopSequence });
    else out.push({ type: event.type });
  }
  return out;
}

describe("run.ts: engine text to tool-call events", () => {
  it("takes the calls out of the answer, after its text, and finishes with tool_use", async () => {
    const events = await collect({ deltas: TWO_CALLS }, request());
    expect(shape(events)).toEqual([
      { type: "start" },
      { type: "text", text: "I'll check both." },
      { type: "tool_call", name: "get_weather", arguments: { city: "Paris" } },
      { type: "tool_call", name: "get_weather", arguments: { city: "Oslo" } },
      { type: "finish", reason: "tool_use", stopSequence: undefined },
    ]);
    const ids = events.flatMap((e) => (e.type === "tool_call" ? [e.id] : []));
    expect(ids.every((id) => CALL.test(id)) && new Set(ids).size === 2).toBe(true);
  });

  it("streams each call: its start with the name, argument fragments that join to its arguments, then the call", async () => {
    const events = await collect({ deltas: TWO_CALLS }, request());
    const calls = events.filter((e) => e.type.startsWith("tool_call"));
    expect(calls.map((e) => e.type).filter((type, i, all) => type !== all[i - 1])).toEqual(["tool_call_start", "tool_call_delta", "tool_call", "tool_call_start", "tool_call_delta", "tool_call"]);
    for (const index of [0, 1]) {
      const start = calls.find((e) => e.type === "tool_call_start" && e.index === index) as Extract<InternalEvent, { type: "tool_call_start" }>;
      const done = calls.find((e) => e.type === "tool_call" && e.index === index) as Extract<InternalEvent, { type: "tool_call" }>;
      const fragments = calls.flatMap((e) => (e.type === "tool_call_delta" && e.index === index ? [e.arguments] : []));
      expect(fragments.length).toBeGreaterThan(1); // 5-character deltas split the arguments
      expect([start.id, start.name]).toEqual([done.id, done.name]);
      expect(fragments.join("")).toBe(done.argumentsText);
      expect(JSON.parse(done.argumentsText!)).toEqual(done.arguments);
    }
  });

  it("leaves the text untouched without tools, or with tool_choice none", async () => {
    const text = { type: "text", text: `I'll check both.\n\n${weather("Paris")}\n${weather("Oslo")}` };
    expect(shape(await collect({ deltas: TWO_CALLS }, request({ tools: undefined })))).toEqual([{ type: "start" }, text, { type: "finish", reason: "end_turn", stopSequence: undefined }]);
    expect(shape(await collect({ deltas: TWO_CALLS }, request({ toolChoice: { type: "none" } })))).toEqual([{ type: "start" }, text, { type: "finish", reason: "end_turn", stopSequence: undefined }]);
  });

  it("reads calls after the reasoning, and keeps a call-like text inside the reasoning as reasoning", async () => {
    const deltas = ["<think>\nMaybe ", weather("Rome"), "?</think>\n\n", weather("Paris")];
    expect(shape(await collect({ deltas }, request({ thinking: { enabled: true } })))).toEqual([
      { type: "start" },
      { type: "thinking", text: `Maybe ${weather("Rome")}?` },
      { type: "tool_call", name: "get_weather", arguments: { city: "Paris" } },
      { type: "finish", reason: "tool_use", stopSequence: undefined },
    ]);
  });

  it("keeps max_tokens, and replaces a stop sequence by tool_use", async () => {
    // The first call streamed as it came; the second, cut inside its name, is markup the model did not finish: dropped.
    const cut = await collect({ deltas: [weather("Paris"), "\n<tool_call>\n{\"name\": \"get_w"], reason: "length" }, request());
    expect(shape(cut).slice(1)).toEqual([
      { type: "tool_call", name: "get_weather", arguments: { city: "Paris" } },
      { type: "finish", reason: "max_tokens", stopSequence: undefined },
    ]);
    const stopped = await collect({ deltas: [weather("Paris")], stopSequence: "END" }, request());
    expect(shape(stopped).at(-1)).toEqual({ type: "finish", reason: "tool_use", stopSequence: undefined });
  });

  it("passes invalid call JSON on as text and finishes normally", async () => {
    const bad = '<tool_call>\n{"name": get_weather}\n</tool_call>';
    expect(shape(await collect({ deltas: [bad] }, request())).slice(1)).toEqual([{ type: "text", text: bad }, { type: "finish", reason: "end_turn", stopSequence: undefined }]);
  });
});

describe("over HTTP with the official SDKs", () => {
  const engine = new ScriptedEngine();
  let server: LoomServer;
  let base: string;

  beforeAll(async () => {
    const registry = new ModelRegistry([
      { model: SCRIPTED_MODEL, engine, slugs: { openai: [CHAT], anthropic: [MESSAGES] }, created: 1_700_000_000 },
    ]);
    server = await startServer({ registry, auth: new StaticKeys([KEY]), endpoints: createEndpoints(registry) }, "127.0.0.1", 0);
    base = `http://127.0.0.1:${server.port}`;
  });

  afterAll(() => server?.close());

  const openai = () => new OpenAI({ apiKey: KEY, baseURL: `${base}/v1`, maxRetries: 0 });
  const anthropic = () => new Anthropic({ apiKey: KEY, baseURL: base, maxRetries: 0 });
  const chatTools: OpenAI.ChatCompletionTool[] = [
    { type: "function", function: { name: "get_weather", description: "Weather by city", parameters: { type: "object", properties: { city: { type: "string" } } } } },
  ];
  const messageTools: Anthropic.Tool[] = [{ name: "get_weather", description: "Weather by city", input_schema: { type: "object", properties: { city: { type: "string" } } } }];
  const question = "Weather in Paris and Oslo?";

  it("OpenAI: tool_calls with finish_reason tool_calls, streamed and not, and the calls go back as history", async () => {
    engine.script = { deltas: TWO_CALLS };
    const completion = await openai().chat.completions.create({ model: CHAT, messages: [{ role: "user", content: question }], tools: chatTools });
    const choice = completion.choices[0]!;
    expect(choice.finish_reason).toBe("tool_calls");
    expect(choice.message.content).toBe("I'll check both.");
    expect(choice.message.tool_calls!.map((call) => [call.type, call.function.name, JSON.parse(call.function.arguments)])).toEqual([
      ["function", "get_weather", { city: "Paris" }],
      ["function", "get_weather", { city: "Oslo" }],
    ]);
    expect(choice.message.tool_calls!.every((call) => CALL.test(call.id))).toBe(true);
    expect(engine.requests.at(-1)!.input).toMatchObject({ tools: [{ type: "function", function: { name: "get_weather" } }] });

    const stream = openai().chat.completions.stream({ model: CHAT, messages: [{ role: "user", content: question }], tools: chatTools, stream: true });
    const streamed = (await stream.finalChatCompletion()).choices[0]!;
    expect(streamed.finish_reason).toBe("tool_calls");
    expect(streamed.message.content).toBe("I'll check both.");
    expect(streamed.message.tool_calls!.map((call) => call.function)).toEqual(choice.message.tool_calls!.map((call) => call.function));

    // Only tool calls: content null; then the client answers them.
    engine.script = { deltas: [weather("Paris")] };
    const only = (await openai().chat.completions.create({ model: CHAT, messages: [{ role: "user", content: question }], tools: chatTools })).choices[0]!;
    expect(only.message.content).toBeNull();
    engine.script = { deltas: ["Sunny."] };
    const call = only.message.tool_calls![0]!;
    const next = await openai().chat.completions.create({
      model: CHAT,
      tools: chatTools,
      messages: [{ role: "user", content: question }, only.message, { role: "tool", tool_call_id: call.id, content: "21 C" }],
    });
    expect(next.choices[0]!).toMatchObject({ finish_reason: "stop", message: { content: "Sunny." } });
    expect((engine.requests.at(-1)!.input as { messages: unknown[] }).messages.slice(1)).toMatchObject([
      { role: "assistant", tool_calls: [{ id: call.id, function: { name: "get_weather", arguments: '{"city": "Paris"}' } }] },
      { role: "tool", tool_call_id: call.id, content: "21 C" },
    ]);
  });

  it("OpenAI and Anthropic streams send a call's name first, then its arguments in fragments", async () => {
    engine.script = { deltas: TWO_CALLS };
    const sse = async (path: string, body: object, headers: Record<string, string>) => {
      const response = await fetch(`${base}${path}`, { method: "POST", headers: { "content-type": "application/json", ...headers }, body: JSON.stringify({ ...body, stream: true }) });
      return (await response.text()).split("\n").filter((line) => line.startsWith("data: ") && line !== "data: [DONE]").map((line) => JSON.parse(line.slice(6)));
    };
    const chunks = await sse("/v1/chat/completions", { model: CHAT, messages: [{ role: "user", content: question }], tools: chatTools }, { authorization: `Bearer ${KEY}` });
    const items = chunks.flatMap((chunk) => chunk.choices?.[0]?.delta?.tool_calls ?? []);
    const first = items.filter((item) => item.index === 0);
    expect(first[0]).toEqual({ index: 0, id: expect.stringMatching(CALL), type: "function", function: { name: "get_weather", arguments: "" } });
    expect(first.length).toBeGreaterThan(2);
    for (const item of first.slice(1)) expect(Object.keys(item).sort()).toEqual(["function", "index"]);
    expect(first.map((item) => item.function.arguments).join("")).toBe('{"city": "Paris"}');

    engine.script = { deltas: TWO_CALLS };
    const events = await sse("/v1/messages", { model: MESSAGES, max_tokens: 256, messages: [{ role: "user", content: question }], tools: messageTools }, { "x-api-key": KEY, "anthropic-version": "2023-06-01" });
    const start = events.find((e) => e.type === "content_block_start" && e.content_block.type === "tool_use");
    expect(start.content_block).toEqual({ type: "tool_use", id: expect.stringMatching(CALL), name: "get_weather", input: {} });
    const partial = events.filter((e) => e.type === "content_block_delta" && e.index === start.index).map((e) => e.delta.partial_json);
    expect(partial.length).toBeGreaterThan(1);
    expect(JSON.parse(partial.join(""))).toEqual({ city: "Paris" });
  });

  it("Anthropic: tool_use blocks with stop_reason tool_use, streamed and not", async () => {
    engine.script = { deltas: TWO_CALLS };
    const params = { model: MESSAGES, max_tokens: 256, messages: [{ role: "user" as const, content: question }], tools: messageTools };
    const message = await anthropic().messages.create(params);
    expect(message.stop_reason).toBe("tool_use");
    expect(message.content).toEqual([
      { type: "text", text: "I'll check both." },
      { type: "tool_use", id: expect.stringMatching(CALL), name: "get_weather", input: { city: "Paris" } },
      { type: "tool_use", id: expect.stringMatching(CALL), name: "get_weather", input: { city: "Oslo" } },
    ]);

    const streamed = await anthropic().messages.stream(params).finalMessage();
    expect(streamed.stop_reason).toBe("tool_use");
    expect(streamed.content.map((block) => (block.type === "tool_use" ? { ...block, id: "" } : block))).toEqual(
      message.content.map((block) => (block.type === "tool_use" ? { ...block, id: "" } : block)),
    );
  });

  it("Anthropic: a forced tool answer's input is the typed JSON (spec 4.2 item 1)", async () => {
    engine.script = { deltas: [weather("Paris")] };
    const message = await anthropic().messages.create({
      model: MESSAGES,
      max_tokens: 256,
      messages: [{ role: "user", content: question }],
      tools: messageTools,
      tool_choice: { type: "tool", name: "get_weather" },
    });
    expect(message.content).toEqual([{ type: "tool_use", id: expect.stringMatching(CALL), name: "get_weather", input: { city: "Paris" } }]);
    expect(message.stop_reason).toBe("tool_use");
  });
});
