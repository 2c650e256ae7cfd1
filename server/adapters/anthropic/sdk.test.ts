// The real Anthropic SDK as the client: its requests parse, and it reads our response bodies, streams and errors.
// No network: the SDK's fetch is a function that runs the adapter.
import Anthropic from "@anthropic-ai/sdk";
import type { Message, MessageCreateParams, MessageParam } from "@anthropic-ai/sdk/resources/messages";
import { describe, expect, it } from "vitest";
import { type InternalEvent, type InternalRequest, ProtocolError, type ServedModels } from "../../protocol/internal.js";
import { anthropicErrorBody } from "./errors.js";
import { parseMessagesRequest } from "./parse.js";
import { messagesResponse } from "./response.js";
import { MessagesStreamWriter } from "./stream.js";
import { ThinkingSigner } from "./thinking-signature.js";

const MODEL = "service/tim-marathon";
const models: ServedModels = { slugs: () => [MODEL], hasVision: () => false };
const signer = new ThinkingSigner("sdk-test-secret");
const usage = { promptTokens: 40, cachedTokens: 16, completionTokens: 9 };

const CALL_ID = "call_0123456789abcdef01234567";

/** A fake generation: thinking (when asked for), then an answer; with tools, a call of the first tool instead. */
function generate(request: InternalRequest): InternalEvent[] {
  const events: InternalEvent[] = [{ type: "start", usage: { ...usage, completionTokens: 0 } }];
  if (request.thinking.enabled) events.push({ type: "thinking", text: "The user says " }, { type: "thinking", text: "hello." });
  const tool = request.tools?.[0];
  if (tool) {
    events.push({ type: "text", text: "Let me look." }, { type: "tool_call", id: CALL_ID, name: tool.name, arguments: { city: "Paris", days: 2 } });
    events.push({ type: "finish", reason: "tool_use", usage });
    return events;
  }
  events.push({ type: "text", text: "Hello" }, { type: "text", text: " there!" }, { type: "finish", reason: "end_turn", usage });
  return events;
}

/** An SDK client whose requests the adapter answers; `seen` collects the parsed requests. */
function client(seen: InternalRequest[], fail?: ProtocolError, failMidStream?: ProtocolError): Anthropic {
  const fetch = async (_url: string | URL | Request, init?: RequestInit): Promise<Response> => {
    let request: InternalRequest;
    try {
      if (fail) throw fail;
      request = parseMessagesRequest(JSON.parse(String(init?.body)), models, signer);
    } catch (error) {
      const { status, body, headers } = anthropicErrorBody(error as ProtocolError);
      return new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json", ...headers } });
    }
    seen.push(request);
    const meta = { id: `msg_${seen.length}`, model: request.model };
    const events = generate(request);
    if (!request.stream) {
      const text = events.flatMap((e) => (e.type === "text" ? [e.text] : [])).join("");
      const thinking = events.flatMap((e) => (e.type === "thinking" ? [e.text] : [])).join("");
      const toolCalls = events.flatMap((e) => (e.type === "tool_call" ? [{ id: e.id, name: e.name, arguments: e.arguments }] : []));
      const finish = events.at(-1) as Extract<InternalEvent, { type: "finish" }>;
      return Response.json(messagesResponse(meta, { thinking, text, toolCalls, finish }, signer));
    }
    const writer = new MessagesStreamWriter(meta, signer);
    let sse = writer.ping();
    for (const e of events) sse += failMidStream && e.type === "finish" ? writer.event({ type: "error", error: failMidStream }) : writer.event(e);
    return new Response(sse, { headers: { "content-type": "text/event-stream" } });
  };
  return new Anthropic({ apiKey: "sk-test", baseURL: "http://loom.test", fetch, maxRetries: 0 });
}

const params: MessageCreateParams = {
  model: MODEL,
  max_tokens: 4096,
  system: [{ type: "text", text: "Be kind.", cache_control: { type: "ephemeral" } }],
  messages: [{ role: "user", content: "Hello" }],
  thinking: { type: "enabled", budget_tokens: 1024 },
  metadata: { user_id: "u1" },
};

describe("with the Anthropic SDK as client", () => {
  it("parses what the SDK sends and the SDK reads the whole response", async () => {
    const seen: InternalRequest[] = [];
    const message: Message = await client(seen).messages.create({ ...params, stream: false });
    expect(seen[0]).toMatchObject({ model: MODEL, maxTokens: 4096, thinking: { enabled: true, budgetTokens: 1024 }, userId: "u1", stream: false });
    expect(seen[0]?.messages).toEqual([
      { role: "system", content: "Be kind." },
      { role: "user", content: "Hello" },
    ]);
    expect(message.content).toEqual([
      { type: "thinking", thinking: "The user says hello.", signature: signer.sign("The user says hello.") },
      { type: "text", text: "Hello there!" },
    ]);
    expect(message.usage).toEqual({ input_tokens: 24, output_tokens: 9, cache_read_input_tokens: 16, cache_creation_input_tokens: 0 });
  });

  it("accumulates the stream into the same message, and that message goes back signed", async () => {
    const seen: InternalRequest[] = [];
    const sdk = client(seen);
    const stream = sdk.messages.stream(params);
    const texts: string[] = [];
    stream.on("text", (text) => texts.push(text));
    const message = await stream.finalMessage();
    expect(texts).toEqual(["Hello", " there!"]);
    expect(message).toMatchObject({ id: "msg_1", model: MODEL, stop_reason: "end_turn", stop_sequence: null });
    expect(message.content).toEqual([
      { type: "thinking", thinking: "The user says hello.", signature: signer.sign("The user says hello.") },
      { type: "text", text: "Hello there!" },
    ]);
    expect(message.usage).toMatchObject({ input_tokens: 24, output_tokens: 9, cache_read_input_tokens: 16 });

    // The next turn carries the assistant message as the SDK built it: the thinking block verifies.
    const history: MessageParam[] = [...params.messages, { role: "assistant", content: message.content }, { role: "user", content: "And again?" }];
    await sdk.messages.create({ ...params, messages: history });
    expect(seen[1]?.messages[2]).toEqual({ role: "assistant", content: "Hello there!", reasoning_content: "The user says hello." });

    // A tampered thinking block is refused with a 400 the SDK understands.
    const tampered = message.content.map((block) => (block.type === "thinking" ? { ...block, thinking: "I am evil." } : block));
    const error = await sdk.messages.create({ ...params, messages: [...params.messages, { role: "assistant", content: tampered }, { role: "user", content: "?" }] }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(Anthropic.BadRequestError);
    expect((error as InstanceType<typeof Anthropic.BadRequestError>).error).toEqual({
      type: "error",
      error: { type: "invalid_request_error", message: expect.stringMatching(/^messages\[1\]\.content\[0\]: signature does not match/) },
    });
  });

  it("reads tool_use blocks, streamed and not, and takes them back with their tool_result", async () => {
    const seen: InternalRequest[] = [];
    const sdk = client(seen);
    const tools = [{ name: "get_weather", description: "Weather by city", input_schema: { type: "object" as const, properties: { city: { type: "string" } } } }];
    const toolParams: MessageCreateParams = { ...params, tools, thinking: { type: "disabled" } };
    const expected = [
      { type: "text", text: "Let me look." },
      { type: "tool_use", id: CALL_ID, name: "get_weather", input: { city: "Paris", days: 2 } },
    ];
    const whole = await sdk.messages.create({ ...toolParams, stream: false });
    expect(whole.content).toEqual(expected);
    expect(whole.stop_reason).toBe("tool_use");

    const stream = sdk.messages.stream(toolParams);
    const json: string[] = [];
    stream.on("inputJson", (partial) => json.push(partial));
    const streamed = await stream.finalMessage();
    expect(streamed.content).toEqual(expected);
    expect(streamed.stop_reason).toBe("tool_use");
    expect(json).toEqual(['{"city":"Paris","days":2}']);

    // The next turn sends the tool_use back with its result: the call id connects them.
    const history: MessageParam[] = [
      ...params.messages,
      { role: "assistant", content: streamed.content },
      { role: "user", content: [{ type: "tool_result", tool_use_id: CALL_ID, content: "Sunny, 21 C" }] },
    ];
    await sdk.messages.create({ ...toolParams, messages: history });
    expect(seen[2]?.messages.slice(2)).toEqual([
      { role: "assistant", content: "Let me look.", tool_calls: [{ id: CALL_ID, type: "function", function: { name: "get_weather", arguments: { city: "Paris", days: 2 } } }] },
      { role: "tool", content: "Sunny, 21 C", tool_call_id: CALL_ID, name: "get_weather" },
    ]);
  });

  it("maps error bodies to the SDK's error classes", async () => {
    const notFound = await client([]).messages.create({ ...params, model: "nope" }).catch((e: unknown) => e);
    expect(notFound).toBeInstanceOf(Anthropic.NotFoundError);
    const limited = await client([], new ProtocolError("rate_limit", "too many requests", undefined, 3)).messages.create(params).catch((e: unknown) => e);
    expect(limited).toBeInstanceOf(Anthropic.RateLimitError);
    expect((limited as InstanceType<typeof Anthropic.RateLimitError>).headers.get("retry-after")).toBe("3");
    const overloaded = await client([], new ProtocolError("overloaded", "busy")).messages.create(params).catch((e: unknown) => e);
    expect((overloaded as InstanceType<typeof Anthropic.APIError>).status).toBe(529);
  });

  it("raises a stream's error event in the SDK", async () => {
    const stream = client([], undefined, new ProtocolError("internal", "the model failed")).messages.stream(params);
    await expect(stream.finalMessage()).rejects.toThrow(/the model failed/);
  });
});
