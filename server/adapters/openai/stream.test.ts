// Streaming shapes: every frame parsed, in order, typed as the SDK's ChatCompletionChunk, and read back through the
// official SDK's own SSE decoder and stream accumulator.
import { describe, expect, it } from "vitest";
import { Stream } from "openai/core/streaming";
import { APIError } from "openai/core/error";
import { ChatCompletionStream } from "openai/lib/ChatCompletionStream";
import type { ChatCompletionChunk } from "openai/resources/chat/completions";
import { ProtocolError, type InternalEvent } from "../../protocol/internal.js";
import { chatCompletionResponse } from "./response.js";
import { ChatCompletionStreamWriter } from "./stream.js";

const meta = { id: "chatcmpl-7", model: "service/tim-qwen-27b", created: 1_700_000_123 };
const usage = { promptTokens: 20, cachedTokens: 16, completionTokens: 6 };
const start: InternalEvent = { type: "start", usage: { ...usage, completionTokens: 0 } };
const finish: InternalEvent = { type: "finish", reason: "end_turn", usage };

/** Feeds events to a writer and returns the whole SSE text. */
function write(events: InternalEvent[], includeUsage: boolean, writer = new ChatCompletionStreamWriter(meta, { includeUsage })): string {
  return events.map((event) => writer.event(event)).join("");
}

/** Splits SSE text into frames' data, checking the framing: every frame is exactly `data: ...\n\n`. */
function frames(sse: string): string[] {
  expect(sse.endsWith("\n\n")).toBe(true);
  return sse
    .slice(0, -2)
    .split("\n\n")
    .map((frame) => {
      expect(frame.startsWith("data: ")).toBe(true);
      expect(frame.includes("\n")).toBe(false);
      return frame.slice("data: ".length);
    });
}

/** The chunks of a stream that ends with [DONE]. */
function chunks(sse: string): ChatCompletionChunk[] {
  const data = frames(sse);
  expect(data.at(-1)).toBe("[DONE]");
  return data.slice(0, -1).map((json) => JSON.parse(json) as ChatCompletionChunk);
}

const header = { id: "chatcmpl-7", object: "chat.completion.chunk", created: 1_700_000_123, model: "service/tim-qwen-27b" };
const contentChunk = (content: string) => ({ ...header, choices: [{ index: 0, delta: { content }, logprobs: null, finish_reason: null }] });

describe("ChatCompletionStreamWriter", () => {
  it("writes role chunk, content deltas, final empty delta and [DONE] without usage", () => {
    const sse = write([start, { type: "text", text: "Hel" }, { type: "text", text: "lo" }, finish], false);
    expect(chunks(sse)).toStrictEqual([
      { ...header, choices: [{ index: 0, delta: { role: "assistant", content: "" }, logprobs: null, finish_reason: null }] },
      contentChunk("Hel"),
      contentChunk("lo"),
      { ...header, choices: [{ index: 0, delta: {}, logprobs: null, finish_reason: "stop" }] },
    ]);
  });

  it("with include_usage: usage null on every chunk, then a usage chunk with choices []", () => {
    const all = chunks(write([start, { type: "text", text: "Hi" }, finish], true));
    expect(all).toHaveLength(4);
    for (const chunk of all.slice(0, 3)) expect(chunk.usage).toBeNull();
    expect(all[2]!.choices).toStrictEqual([{ index: 0, delta: {}, logprobs: null, finish_reason: "stop" }]);
    expect(all[3]).toStrictEqual({
      ...header,
      choices: [],
      usage: { prompt_tokens: 20, completion_tokens: 6, total_tokens: 26, prompt_tokens_details: { cached_tokens: 16 } },
    });
  });

  it("streams reasoning first inside the think tags, closed before the first text delta", () => {
    const writer = new ChatCompletionStreamWriter(meta, { includeUsage: false });
    const events: InternalEvent[] = [
      start,
      { type: "thinking", text: "2+2" },
      { type: "thinking", text: " is 4" },
      { type: "text", text: "It is " },
      { type: "text", text: "4." },
      finish,
    ];
    const all = chunks(write(events, false, writer));
    expect(all.map((chunk) => chunk.choices[0]!.delta.content ?? null)).toStrictEqual(["", "<think>2+2", " is 4", "</think>It is ", "4.", null]);
    const nonStreaming = chatCompletionResponse(meta, { reasoning: "2+2 is 4", text: "It is 4.", finish: { type: "finish", reason: "end_turn", usage } });
    expect(writer.completionText).toBe(nonStreaming.choices[0]!.message.content);
  });

  it("closes the think tags at finish when no text came", () => {
    const sse = write([start, { type: "thinking", text: "hmm" }, { type: "finish", reason: "max_tokens", usage }], false);
    const all = chunks(sse);
    expect(all.map((chunk) => [chunk.choices[0]!.delta, chunk.choices[0]!.finish_reason])).toStrictEqual([
      [{ role: "assistant", content: "" }, null],
      [{ content: "<think>hmm" }, null],
      [{ content: "</think>" }, null],
      [{}, "length"],
    ]);
  });

  it("uses the given tag pair", () => {
    const writer = new ChatCompletionStreamWriter(meta, { includeUsage: false, thinkTags: { open: "[r]", close: "[/r]" } });
    write([start, { type: "thinking", text: "x" }, { type: "text", text: "y" }, finish], false, writer);
    expect(writer.completionText).toBe("[r]x[/r]y");
  });

  it("skips empty deltas and starts with the role chunk even without a start event", () => {
    const all = chunks(write([{ type: "text", text: "" }, { type: "thinking", text: "" }, { type: "text", text: "a" }, finish], false));
    expect(all.map((chunk) => chunk.choices[0]!.delta)).toStrictEqual([{ role: "assistant", content: "" }, { content: "a" }, {}]);
  });

  it("ends an errored stream with an OpenAI error frame and no [DONE]", () => {
    const writer = new ChatCompletionStreamWriter(meta, { includeUsage: true });
    const sse = write([start, { type: "text", text: "a" }, { type: "error", error: new ProtocolError("internal", "Engine failed") }], true, writer);
    const data = frames(sse);
    expect(data).toHaveLength(3);
    expect(JSON.parse(data[2]!)).toStrictEqual({ error: { message: "Engine failed", type: "server_error", param: null, code: null } });
    expect(writer.ended).toBe(true);
    expect(writer.event(finish)).toBe("");
  });

  it("reports started and ended", () => {
    const writer = new ChatCompletionStreamWriter(meta, { includeUsage: false });
    expect([writer.started, writer.ended]).toStrictEqual([false, false]);
    writer.event(start);
    expect([writer.started, writer.ended]).toStrictEqual([true, false]);
    writer.event(finish);
    expect([writer.started, writer.ended]).toStrictEqual([true, true]);
    expect(writer.event({ type: "text", text: "late" })).toBe("");
  });

  it("streams a call as OpenAI does: id, type and name with empty arguments, then argument fragments", () => {
    const events: InternalEvent[] = [
      start,
      { type: "tool_call_start", index: 0, id: "call_a", name: "get_weather" },
      { type: "tool_call_delta", index: 0, arguments: '{"city": ' },
      { type: "tool_call_delta", index: 0, arguments: '"Paris"}' },
      { type: "tool_call", index: 0, id: "call_a", name: "get_weather", arguments: { city: "Paris" }, argumentsText: '{"city": "Paris"}' },
      { type: "finish", reason: "tool_use", usage },
    ];
    expect(chunks(write(events, false)).map((chunk) => [chunk.choices[0]!.delta, chunk.choices[0]!.finish_reason])).toStrictEqual([
      [{ role: "assistant", content: "" }, null],
      [{ tool_calls: [{ index: 0, id: "call_a", type: "function", function: { name: "get_weather", arguments: "" } }] }, null],
      [{ tool_calls: [{ index: 0, function: { arguments: '{"city": ' } }] }, null],
      [{ tool_calls: [{ index: 0, function: { arguments: '"Paris"}' } }] }, null],
      [{}, "tool_calls"],
    ]);
  });

  it("writes a call that did not stream as one whole chunk, after the text, and finishes with tool_calls", () => {
    const events: InternalEvent[] = [
      start,
      { type: "thinking", text: "need weather" },
      { type: "tool_call", index: 0, id: "call_a", name: "get_weather", arguments: { city: "Paris" } },
      { type: "tool_call", index: 1, id: "call_b", name: "get_time", arguments: {} },
      { type: "finish", reason: "tool_use", usage },
    ];
    expect(chunks(write(events, false)).map((chunk) => [chunk.choices[0]!.delta, chunk.choices[0]!.finish_reason])).toStrictEqual([
      [{ role: "assistant", content: "" }, null],
      [{ content: "<think>need weather" }, null],
      [{ content: "</think>" }, null],
      [{ tool_calls: [{ index: 0, id: "call_a", type: "function", function: { name: "get_weather", arguments: '{"city":"Paris"}' } }] }, null],
      [{ tool_calls: [{ index: 1, id: "call_b", type: "function", function: { name: "get_time", arguments: "{}" } }] }, null],
      [{}, "tool_calls"],
    ]);
  });

  it.each([
    ["stop_sequence", "stop"],
    ["max_tokens", "length"],
    ["tool_use", "tool_calls"],
  ] as const)("maps finish %s to %s", (reason, expected) => {
    const all = chunks(write([start, { type: "finish", reason, stopSequence: "END", usage }], false));
    expect(all.at(-1)!.choices[0]!.finish_reason).toBe(expected);
  });
});

describe("ChatCompletionStreamWriter read by the official openai SDK", () => {
  const sseResponse = (sse: string) => Stream.fromSSEResponse<ChatCompletionChunk>(new Response(sse), new AbortController());

  it("decodes every chunk and stops at [DONE]", async () => {
    const sse = write([start, { type: "thinking", text: "t" }, { type: "text", text: "Hi" }, finish], true);
    const received: ChatCompletionChunk[] = [];
    for await (const chunk of sseResponse(sse)) received.push(chunk);
    expect(received).toStrictEqual(chunks(sse));
  });

  it("accumulates into the same completion as the non-streaming response", async () => {
    const sse = write([start, { type: "thinking", text: "r1" }, { type: "thinking", text: "r2" }, { type: "text", text: "A" }, { type: "text", text: "B" }, finish], true);
    const accumulated = await ChatCompletionStream.fromReadableStream(sseResponse(sse).toReadableStream()).finalChatCompletion();
    const expected = chatCompletionResponse(meta, { reasoning: "r1r2", text: "AB", finish: { type: "finish", reason: "end_turn", usage } });
    expect(accumulated.choices[0]!.message.content).toBe(expected.choices[0]!.message.content);
    expect(accumulated.choices[0]!.finish_reason).toBe("stop");
    expect(accumulated.usage).toStrictEqual(expected.usage);
    expect([accumulated.id, accumulated.model, accumulated.created]).toStrictEqual([meta.id, meta.model, meta.created]);
  });

  it("accumulates tool calls into the same message as the non-streaming response", async () => {
    const toolCalls = [
      { id: "call_0123456789abcdef01234567", name: "get_weather", arguments: { city: "Paris", when: { day: 1 } } },
      { id: "call_fedcba9876543210fedcba98", name: "get_time", arguments: { zone: "CET" } },
    ];
    const toolFinish = { type: "finish", reason: "tool_use", usage } as const;
    // Streamed as the server streams constrained calls: start, two fragments, then the call.
    const events: InternalEvent[] = [start, { type: "text", text: "Let me check." }, ...toolCalls.flatMap((call, index): InternalEvent[] => {
      const text = JSON.stringify(call.arguments);
      return [
        { type: "tool_call_start", index, id: call.id, name: call.name },
        { type: "tool_call_delta", index, arguments: text.slice(0, 5) },
        { type: "tool_call_delta", index, arguments: text.slice(5) },
        { type: "tool_call", index, ...call, argumentsText: text },
      ];
    }), toolFinish];
    const accumulated = await ChatCompletionStream.fromReadableStream(sseResponse(write(events, true)).toReadableStream()).finalChatCompletion();
    const expected = chatCompletionResponse(meta, { reasoning: "", text: "Let me check.", toolCalls, finish: toolFinish });
    expect(accumulated.choices[0]!.finish_reason).toBe("tool_calls");
    expect(accumulated.choices[0]!.message.content).toBe("Let me check.");
    expect(accumulated.choices[0]!.message.tool_calls).toStrictEqual(expected.choices[0]!.message.tool_calls);
    expect(JSON.parse(accumulated.choices[0]!.message.tool_calls![0]!.function.arguments)).toStrictEqual(toolCalls[0]!.arguments);
  });

  it("surfaces the error frame as an APIError", async () => {
    const sse = write([start, { type: "error", error: new ProtocolError("overloaded", "Queue full", undefined, 1) }], false);
    const read = async () => {
      for await (const chunk of sseResponse(sse)) void chunk;
    };
    const error = await read().then(
      () => undefined,
      (caught: unknown) => caught,
    );
    expect(error).toBeInstanceOf(APIError);
    expect((error as APIError).message).toContain("Queue full");
  });
});
