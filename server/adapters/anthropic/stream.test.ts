// The SSE stream: frames, event order, block indices, and the signature_delta before a thinking block's stop.
import { describe, expect, it } from "vitest";
import { type InternalEvent, type InternalUsage, ProtocolError } from "../../protocol/internal.js";
import { type AnthropicStreamEvent, MessagesStreamWriter } from "./stream.js";
import { ThinkingSigner } from "./thinking-signature.js";

const signer = new ThinkingSigner("stream-test-secret");
const meta = { id: "msg_02", model: "service/tim-marathon" };
const usage: InternalUsage = { promptTokens: 50, cachedTokens: 30, completionTokens: 0 };
const done: InternalUsage = { promptTokens: 50, cachedTokens: 30, completionTokens: 12 };

/** Parses SSE text into {event, data} frames, checking the framing on the way. */
function frames(text: string): Array<{ event: string; data: Record<string, unknown> }> {
  expect(text.endsWith("\n\n")).toBe(true);
  return text
    .slice(0, -2)
    .split("\n\n")
    .map((frame) => {
      const lines = frame.split("\n");
      expect(lines).toHaveLength(2);
      const [eventLine, dataLine] = lines as [string, string];
      expect(eventLine.startsWith("event: ") && dataLine.startsWith("data: ")).toBe(true);
      return { event: eventLine.slice(7), data: JSON.parse(dataLine.slice(6)) as Record<string, unknown> };
    });
}

/** Runs events through a writer and returns the payloads, checking each frame's event name is its type. */
function run(events: InternalEvent[]): AnthropicStreamEvent[] {
  const writer = new MessagesStreamWriter(meta, signer);
  const text = events.map((e) => writer.event(e)).join("");
  return frames(text).map(({ event, data }) => {
    expect(data.type).toBe(event);
    return data as unknown as AnthropicStreamEvent;
  });
}

const messageStart: AnthropicStreamEvent = {
  type: "message_start",
  message: {
    id: "msg_02",
    type: "message",
    role: "assistant",
    model: "service/tim-marathon",
    content: [],
    stop_reason: null,
    stop_sequence: null,
    usage: { input_tokens: 20, output_tokens: 0, cache_read_input_tokens: 30, cache_creation_input_tokens: 0 },
  },
};
const end = (stop_reason: "end_turn" | "max_tokens" | "stop_sequence" | "tool_use" = "end_turn", stop_sequence: string | null = null): AnthropicStreamEvent[] => [
  { type: "message_delta", delta: { stop_reason, stop_sequence }, usage: { output_tokens: 12 } },
  { type: "message_stop" },
];

describe("MessagesStreamWriter", () => {
  it("streams thinking then text: signature_delta right before the thinking block's stop, text at index 1", () => {
    const events = run([
      { type: "start", usage },
      { type: "thinking", text: "Two plus " },
      { type: "thinking", text: "two." },
      { type: "text", text: "It is " },
      { type: "text", text: "4." },
      { type: "finish", reason: "end_turn", usage: done },
    ]);
    expect(events).toEqual([
      messageStart,
      { type: "content_block_start", index: 0, content_block: { type: "thinking", thinking: "", signature: "" } },
      { type: "content_block_delta", index: 0, delta: { type: "thinking_delta", thinking: "Two plus " } },
      { type: "content_block_delta", index: 0, delta: { type: "thinking_delta", thinking: "two." } },
      { type: "content_block_delta", index: 0, delta: { type: "signature_delta", signature: signer.sign("Two plus two.") } },
      { type: "content_block_stop", index: 0 },
      { type: "content_block_start", index: 1, content_block: { type: "text", text: "" } },
      { type: "content_block_delta", index: 1, delta: { type: "text_delta", text: "It is " } },
      { type: "content_block_delta", index: 1, delta: { type: "text_delta", text: "4." } },
      { type: "content_block_stop", index: 1 },
      ...end(),
    ]);
  });

  it("streams text alone at index 0 and reports the stop sequence", () => {
    expect(run([{ type: "start", usage }, { type: "text", text: "Hi" }, { type: "finish", reason: "stop_sequence", stopSequence: "END", usage: done }])).toEqual([
      messageStart,
      { type: "content_block_start", index: 0, content_block: { type: "text", text: "" } },
      { type: "content_block_delta", index: 0, delta: { type: "text_delta", text: "Hi" } },
      { type: "content_block_stop", index: 0 },
      ...end("stop_sequence", "END"),
    ]);
  });

  it("emits an empty text block when there is no content at all", () => {
    expect(run([{ type: "start", usage }, { type: "text", text: "" }, { type: "finish", reason: "end_turn", usage: done }])).toEqual([
      messageStart,
      { type: "content_block_start", index: 0, content_block: { type: "text", text: "" } },
      { type: "content_block_stop", index: 0 },
      ...end(),
    ]);
  });

  it("signs and closes the thinking block at finish when the response ends while thinking", () => {
    expect(run([{ type: "start", usage }, { type: "thinking", text: "Hmm" }, { type: "finish", reason: "max_tokens", usage: done }])).toEqual([
      messageStart,
      { type: "content_block_start", index: 0, content_block: { type: "thinking", thinking: "", signature: "" } },
      { type: "content_block_delta", index: 0, delta: { type: "thinking_delta", thinking: "Hmm" } },
      { type: "content_block_delta", index: 0, delta: { type: "signature_delta", signature: signer.sign("Hmm") } },
      { type: "content_block_stop", index: 0 },
      ...end("max_tokens"),
    ]);
  });

  it("writes each tool call as a whole tool_use block at the next index, after closing the text block", () => {
    const events = run([
      { type: "start", usage },
      { type: "text", text: "Checking." },
      { type: "tool_call", id: "call_a", name: "get_weather", arguments: { city: "Paris" } },
      { type: "tool_call", id: "call_b", name: "get_time", arguments: {} },
      { type: "finish", reason: "tool_use", usage: done },
    ]);
    expect(events).toEqual([
      messageStart,
      { type: "content_block_start", index: 0, content_block: { type: "text", text: "" } },
      { type: "content_block_delta", index: 0, delta: { type: "text_delta", text: "Checking." } },
      { type: "content_block_stop", index: 0 },
      { type: "content_block_start", index: 1, content_block: { type: "tool_use", id: "call_a", name: "get_weather", input: {} } },
      { type: "content_block_delta", index: 1, delta: { type: "input_json_delta", partial_json: '{"city":"Paris"}' } },
      { type: "content_block_stop", index: 1 },
      { type: "content_block_start", index: 2, content_block: { type: "tool_use", id: "call_b", name: "get_time", input: {} } },
      { type: "content_block_delta", index: 2, delta: { type: "input_json_delta", partial_json: "{}" } },
      { type: "content_block_stop", index: 2 },
      ...end("tool_use"),
    ]);
  });

  it("signs the thinking block before a tool call, and adds no empty text block", () => {
    const events = run([
      { type: "start", usage },
      { type: "thinking", text: "Weather." },
      { type: "tool_call", id: "call_a", name: "get_weather", arguments: {} },
      { type: "finish", reason: "tool_use", usage: done },
    ]);
    expect(events.filter((e) => e.type === "content_block_start").map((e) => e.content_block.type)).toEqual(["thinking", "tool_use"]);
    expect(events.slice(3, 6)).toEqual([
      { type: "content_block_delta", index: 0, delta: { type: "signature_delta", signature: signer.sign("Weather.") } },
      { type: "content_block_stop", index: 0 },
      { type: "content_block_start", index: 1, content_block: { type: "tool_use", id: "call_a", name: "get_weather", input: {} } },
    ]);
  });

  it("opens a new block, at the next index, each time the kind changes", () => {
    const events = run([
      { type: "start", usage },
      { type: "text", text: "a" },
      { type: "thinking", text: "b" },
      { type: "text", text: "c" },
      { type: "finish", reason: "end_turn", usage: done },
    ]);
    const starts = events.filter((e) => e.type === "content_block_start").map((e) => [e.index, e.content_block.type]);
    expect(starts).toEqual([
      [0, "text"],
      [1, "thinking"],
      [2, "text"],
    ]);
    const stops = events.filter((e) => e.type === "content_block_stop").map((e) => e.index);
    expect(stops).toEqual([0, 1, 2]);
    const signature = events.findIndex((e) => e.type === "content_block_delta" && e.delta.type === "signature_delta");
    expect(events[signature + 1]).toEqual({ type: "content_block_stop", index: 1 });
  });

  it("opens the message with zero usage if a delta comes before start, and ignores a late start", () => {
    const writer = new MessagesStreamWriter(meta, signer);
    const first = frames(writer.event({ type: "text", text: "x" }));
    expect(first.map((f) => f.event)).toEqual(["message_start", "content_block_start", "content_block_delta"]);
    expect((first[0]!.data.message as { usage: unknown }).usage).toEqual({ input_tokens: 0, output_tokens: 0, cache_read_input_tokens: 0, cache_creation_input_tokens: 0 });
    expect(writer.event({ type: "start", usage })).toBe("");
  });

  it("ends on finish: later events write nothing", () => {
    const writer = new MessagesStreamWriter(meta, signer);
    writer.event({ type: "start", usage });
    expect(writer.done).toBe(false);
    writer.event({ type: "finish", reason: "end_turn", usage: done });
    expect(writer.done).toBe(true);
    expect(writer.event({ type: "text", text: "late" })).toBe("");
    expect(writer.event({ type: "finish", reason: "end_turn", usage: done })).toBe("");
    expect(writer.event({ type: "error", error: new ProtocolError("internal", "x") })).toBe("");
    expect(writer.ping()).toBe("");
  });

  it("writes an error event mid-stream and ends there", () => {
    const writer = new MessagesStreamWriter(meta, signer);
    writer.event({ type: "start", usage });
    writer.event({ type: "text", text: "partial" });
    const text = writer.event({ type: "error", error: new ProtocolError("overloaded", "the server is overloaded", undefined, 5) });
    expect(text).toBe('event: error\ndata: {"type":"error","error":{"type":"overloaded_error","message":"the server is overloaded"}}\n\n');
    expect(writer.done).toBe(true);
    expect(writer.event({ type: "finish", reason: "end_turn", usage: done })).toBe("");
  });

  it("writes pings byte for byte as Anthropic does", () => {
    expect(new MessagesStreamWriter(meta, signer).ping()).toBe('event: ping\ndata: {"type": "ping"}\n\n');
  });

  it("keeps newlines and separators inside one data line", () => {
    const events = run([{ type: "start", usage }, { type: "text", text: "a\n\nb\r\nevent: x\u2028" }, { type: "finish", reason: "end_turn", usage: done }]);
    expect(events[2]).toEqual({ type: "content_block_delta", index: 0, delta: { type: "text_delta", text: "a\n\nb\r\nevent: x\u2028" } });
  });
});
