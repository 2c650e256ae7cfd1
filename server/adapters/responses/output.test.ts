// The Responses API's output and stream, without a server: OutputAssembler and ResponsesStreamWriter fed synthetic
// InternalEvent sequences. Checks the typed events' order, sequence numbers, output indexes and item ids against the
// final response (also through the official SDK's own event accumulator), the incomplete, failed and unstorable ends,
// that a non-streamed response (finishedResponse) has the same items as the stream's, and the usage mapping.
import { describe, expect, it } from "vitest";
import { accumulateResponse } from "openai/lib/responses/ResponseAccumulator";
import type { Response as SdkResponse, ResponseStreamEvent } from "openai/resources/responses/responses";
import type { CollectedResult } from "../../http/endpoint.js";
import { ProtocolError, type InternalEvent, type InternalUsage } from "../../protocol/internal.js";
import { OutputAssembler } from "./output.js";
import { parseResponsesRequest, responsesStateOf, type ResponsesState } from "./parse.js";
import { finishedResponse, ResponsesStreamWriter, type ResponseSaver } from "./response.js";
import type { JsonRecord } from "./store.js";

const MODEL = "service/tim-qwen-27b";
const meta = { id: "resp_0123456789abcdef01234567", model: MODEL, created: 1_700_000_123 };
const models = { slugs: () => [MODEL], hasVision: () => false };

/** The state of a parsed request (as POST /v1/responses has it once prepared). */
function stateOf(body: Record<string, unknown> = {}): ResponsesState {
  const state = responsesStateOf(parseResponsesRequest({ model: MODEL, input: "Weather?", stream: true, ...body }, models));
  state.owner = "key:test";
  return state;
}

/** A saver that keeps what it is given. */
function recordingSaver(): ResponseSaver & { saved: JsonRecord[] } {
  const saved: JsonRecord[] = [];
  return Object.assign(async (_state: ResponsesState, response: JsonRecord) => { saved.push(structuredClone(response)); }, { saved });
}

/** One parsed SSE frame: its `event:` name and its data. */
interface Frame {
  event: string;
  data: JsonRecord & { type: string; sequence_number: number };
}

/** Splits SSE text into frames, checking the framing: each is exactly `event: <type>\ndata: <json>\n\n`. */
function framesOf(sse: string): Frame[] {
  expect(sse.endsWith("\n\n")).toBe(true);
  return sse.slice(0, -2).split("\n\n").map((text) => {
    const match = /^event: ([a-z_.]+)\ndata: (\{.*\})$/.exec(text);
    expect(match, text).not.toBeNull();
    const frame = { event: match![1]!, data: JSON.parse(match![2]!) as Frame["data"] };
    expect(frame.data.type).toBe(frame.event);
    return frame;
  });
}

/** Feeds events to a writer in order (awaiting each, as the HTTP layer does) and returns the frames. */
async function stream(events: InternalEvent[], writer: ResponsesStreamWriter): Promise<Frame[]> {
  let sse = "";
  for (const event of events) sse += await writer.event(event);
  return framesOf(sse);
}

const usage = { promptTokens: 20, cachedTokens: 16, completionTokens: 30, reasoningTokens: 8 } satisfies InternalUsage;
const start: InternalEvent = { type: "start", usage: { promptTokens: 20, cachedTokens: 16, completionTokens: 0 } };

/** Reasoning, then text, then two streamed tool calls, then the finish. */
const fullSequence: InternalEvent[] = [
  start,
  { type: "thinking", text: "The user " },
  { type: "thinking", text: "wants weather." },
  { type: "text", text: "Let me " },
  { type: "text", text: "check." },
  { type: "tool_call_start", index: 0, id: "call_a", name: "weather" },
  { type: "tool_call_delta", index: 0, arguments: '{"city":' },
  { type: "tool_call_delta", index: 0, arguments: '"Paris"}' },
  { type: "tool_call", index: 0, id: "call_a", name: "weather", arguments: { city: "Paris" }, argumentsText: '{"city":"Paris"}' },
  { type: "tool_call_start", index: 1, id: "call_b", name: "weather" },
  { type: "tool_call_delta", index: 1, arguments: '{"city":"Rome"}' },
  { type: "tool_call", index: 1, id: "call_b", name: "weather", arguments: { city: "Rome" }, argumentsText: '{"city":"Rome"}' },
  { type: "finish", reason: "tool_use", usage },
];

/** The result a non-streamed request collects from the same events. */
function collected(events: InternalEvent[]): CollectedResult {
  const result: CollectedResult = { thinking: "", text: "", toolCalls: [], finish: undefined as never };
  for (const event of events) {
    if (event.type === "thinking") result.thinking += event.text;
    else if (event.type === "text") result.text += event.text;
    else if (event.type === "tool_call") result.toolCalls.push({ id: event.id, name: event.name, arguments: event.arguments, argumentsText: event.argumentsText });
    else if (event.type === "finish") result.finish = event;
  }
  return result;
}

/** Output items without their generated ids, for comparing two assemblies of the same result. */
function withoutIds(output: unknown): unknown {
  return (output as JsonRecord[]).map(({ id: _id, ...item }) => item);
}

/** Replays the frames through the official SDK's accumulator (which checks every item id and index) to a snapshot. */
function accumulated(frames: Frame[]): SdkResponse {
  let snapshot: SdkResponse | undefined;
  for (const frame of frames) snapshot = accumulateResponse(frame.data as unknown as ResponseStreamEvent, snapshot);
  return snapshot!;
}

describe("ResponsesStreamWriter: a full stream", () => {
  it("sends reasoning, the message and two calls as typed events, in OpenAI's order", async () => {
    const saver = recordingSaver();
    const frames = await stream(fullSequence, new ResponsesStreamWriter(meta, stateOf(), saver));
    expect(frames.map((frame) => frame.event)).toEqual([
      "response.created",
      "response.in_progress",
      "response.output_item.added",
      "response.content_part.added",
      "response.reasoning_text.delta",
      "response.reasoning_text.delta",
      "response.reasoning_text.done",
      "response.content_part.done",
      "response.output_item.done",
      "response.output_item.added",
      "response.content_part.added",
      "response.output_text.delta",
      "response.output_text.delta",
      "response.output_text.done",
      "response.content_part.done",
      "response.output_item.done",
      "response.output_item.added",
      "response.function_call_arguments.delta",
      "response.function_call_arguments.delta",
      "response.function_call_arguments.done",
      "response.output_item.done",
      "response.output_item.added",
      "response.function_call_arguments.delta",
      "response.function_call_arguments.done",
      "response.output_item.done",
      "response.completed",
    ]);
    expect(frames.map((frame) => frame.data.sequence_number)).toEqual(frames.map((_, index) => index));
    const added = frames.filter((frame) => frame.event === "response.output_item.added").map((frame) => frame.data.item as JsonRecord);
    expect(added.map((item) => [item.type, item.status])).toEqual([["reasoning", "in_progress"], ["message", "in_progress"], ["function_call", "in_progress"], ["function_call", "in_progress"]]);
    expect(saver.saved).toHaveLength(1);
  });

  it("carries the whole reasoning in the summary too, with its summary events, when the client asks for a summary", async () => {
    const frames = await stream([start, { type: "thinking", text: "Let me " }, { type: "thinking", text: "see." }, { type: "text", text: "Hi" }, { type: "finish", reason: "end_turn", usage }], new ResponsesStreamWriter(meta, stateOf({ reasoning: { effort: "high", summary: "auto" } }), recordingSaver()));
    const reasoningEvents = frames.map((frame) => frame.event).filter((event) => event.includes("reasoning") || event === "response.content_part.added");
    expect(reasoningEvents).toEqual([
      "response.content_part.added", "response.reasoning_summary_part.added",
      "response.reasoning_text.delta", "response.reasoning_summary_text.delta", "response.reasoning_text.delta", "response.reasoning_summary_text.delta",
      "response.reasoning_text.done", "response.reasoning_summary_text.done", "response.reasoning_summary_part.done", "response.content_part.added",
    ]);
    const final = frames.at(-1)!.data.response as { output: JsonRecord[] };
    expect(final.output[0]).toMatchObject({ type: "reasoning", content: [{ type: "reasoning_text", text: "Let me see." }], summary: [{ type: "summary_text", text: "Let me see." }] });
    // Without a summary asked for, none.
    const plain = await stream([start, { type: "thinking", text: "Hm." }, { type: "finish", reason: "end_turn", usage }], new ResponsesStreamWriter(meta, stateOf({ reasoning: { effort: "high" } }), recordingSaver()));
    expect(plain.some((frame) => frame.event.includes("summary"))).toBe(false);
    expect((plain.at(-1)!.data.response as { output: JsonRecord[] }).output[0]).toMatchObject({ summary: [] });
  });

  it("keeps output_index and item ids consistent from added to done and in the final response; deltas join to the done texts", async () => {
    const saver = recordingSaver();
    const frames = await stream(fullSequence, new ResponsesStreamWriter(meta, stateOf(), saver));
    const final = frames.at(-1)!.data.response as JsonRecord & { output: JsonRecord[] };
    expect(final).toMatchObject({ id: meta.id, object: "response", status: "completed", model: MODEL, created_at: meta.created, error: null, incomplete_details: null });
    const output = final.output;
    expect(output.map((item) => item.type)).toEqual(["reasoning", "message", "function_call", "function_call"]);
    const ids = output.map((item) => item.id as string);
    expect(new Set(ids).size).toBe(4);
    // Output items are named after their response (its digits, `o` and their index), so references find them.
    const digits = meta.id.slice("resp_".length);
    expect(ids).toEqual([`rs_${digits}o0`, `msg_${digits}o1`, `fc_${digits}o2`, `fc_${digits}o3`]);

    for (const frame of frames.slice(2, -1)) {
      const index = frame.data.output_index as number;
      expect(index, frame.event).toBeGreaterThanOrEqual(0);
      const itemId = (frame.data.item as JsonRecord | undefined)?.id ?? frame.data.item_id;
      expect(itemId, `${frame.event} #${frame.data.sequence_number}`).toBe(ids[index]);
    }
    const done = frames.filter((frame) => frame.event === "response.output_item.done").map((frame) => frame.data.item);
    expect(done).toStrictEqual(output);
    for (const item of output) expect(item.status).toBe("completed");

    const deltas = (type: string, index: number) => frames.filter((frame) => frame.event === type && frame.data.output_index === index).map((frame) => frame.data.delta).join("");
    const doneOf = (type: string) => frames.find((frame) => frame.event === type)!.data;
    expect(deltas("response.reasoning_text.delta", 0)).toBe("The user wants weather.");
    expect(doneOf("response.reasoning_text.done").text).toBe("The user wants weather.");
    expect(output[0]).toMatchObject({ summary: [], content: [{ type: "reasoning_text", text: "The user wants weather." }] });
    expect(deltas("response.output_text.delta", 1)).toBe("Let me check.");
    expect(doneOf("response.output_text.done").text).toBe("Let me check.");
    expect(output[1]).toMatchObject({ role: "assistant", content: [{ type: "output_text", text: "Let me check.", annotations: [] }] });
    expect(final.output_text).toBe("Let me check.");
    const argumentsDone = frames.filter((frame) => frame.event === "response.function_call_arguments.done").map((frame) => frame.data);
    for (const [n, callId, args] of [[2, "call_a", '{"city":"Paris"}'], [3, "call_b", '{"city":"Rome"}']] as const) {
      expect(deltas("response.function_call_arguments.delta", n)).toBe(args);
      expect(argumentsDone.find((event) => event.output_index === n)).toMatchObject({ item_id: ids[n], name: "weather", arguments: args });
      expect(output[n]).toMatchObject({ type: "function_call", call_id: callId, name: "weather", arguments: args });
    }
    // The response is stored as the client receives it.
    expect(saver.saved).toStrictEqual([final]);
  });

  it("is read by the official SDK's accumulator into the final response's output", async () => {
    const frames = await stream(fullSequence, new ResponsesStreamWriter(meta, stateOf(), recordingSaver()));
    // Up to the last item's done (the completed event replaces the snapshot): what the deltas built.
    const built = accumulated(frames.slice(0, -1));
    expect(built.output).toStrictEqual((frames.at(-1)!.data.response as JsonRecord).output);
  });

  it("answers created and in_progress with the request's settings echoed and no usage", async () => {
    const state = stateOf({ instructions: "Be brief.", metadata: { run: "7" }, max_output_tokens: 50, store: false });
    const frames = await stream([start], new ResponsesStreamWriter(meta, state, recordingSaver()));
    expect(frames.map((frame) => frame.event)).toEqual(["response.created", "response.in_progress"]);
    for (const frame of frames) {
      expect(frame.data.response).toMatchObject({ id: meta.id, status: "in_progress", output: [], usage: null, completed_at: null, instructions: "Be brief.", metadata: { run: "7" }, max_output_tokens: 50, store: false, background: false });
    }
  });

  it("does not store a response the request asked not to", async () => {
    const saver = recordingSaver();
    const frames = await stream([start, { type: "text", text: "Hi" }, { type: "finish", reason: "end_turn", usage }], new ResponsesStreamWriter(meta, stateOf({ store: false }), saver));
    expect(frames.at(-1)!.event).toBe("response.completed");
    expect(saver.saved).toEqual([]);
  });

  it("stores the response before the completed event goes out", async () => {
    let release!: () => void;
    const saved: JsonRecord[] = [];
    const saver: ResponseSaver = (_state, response) => new Promise<void>((resolve) => { saved.push(response); release = resolve; });
    const writer = new ResponsesStreamWriter(meta, stateOf(), saver);
    await writer.event(start);
    await writer.event({ type: "text", text: "Hi" });
    let written: string | undefined;
    const finishing = Promise.resolve(writer.event({ type: "finish", reason: "end_turn", usage })).then((sse) => { written = sse; });
    await new Promise((resolve) => setImmediate(resolve));
    expect(saved).toHaveLength(1);
    expect(written).toBeUndefined();
    release();
    await finishing;
    expect(written).toContain("event: response.completed\n");
  });
});

describe("ResponsesStreamWriter: ends other than completed", () => {
  it("a max_tokens finish is response.incomplete, the cut item incomplete", async () => {
    const saver = recordingSaver();
    const frames = await stream([start, { type: "thinking", text: "Hmm" }, { type: "text", text: "The answer is" }, { type: "finish", reason: "max_tokens", usage }], new ResponsesStreamWriter(meta, stateOf(), saver));
    expect(frames.at(-1)!.event).toBe("response.incomplete");
    const response = frames.at(-1)!.data.response as JsonRecord & { output: JsonRecord[] };
    expect(response).toMatchObject({ status: "incomplete", incomplete_details: { reason: "max_output_tokens" }, output_text: "The answer is" });
    expect(response.output.map((item) => [item.type, item.status])).toEqual([["reasoning", "completed"], ["message", "incomplete"]]);
    const lastDone = frames.filter((frame) => frame.event === "response.output_item.done").at(-1)!.data.item as JsonRecord;
    expect(lastDone).toMatchObject({ type: "message", status: "incomplete" });
    expect(saver.saved[0]).toMatchObject({ status: "incomplete" });
  });

  it("a call cut by the token limit is an incomplete function_call with the arguments written so far", async () => {
    const frames = await stream([
      start,
      { type: "tool_call_start", index: 0, id: "call_a", name: "weather" },
      { type: "tool_call_delta", index: 0, arguments: '{"city":"Par' },
      { type: "tool_call", index: 0, id: "call_a", name: "weather", arguments: {}, argumentsText: '{"city":"Par' },
      { type: "finish", reason: "max_tokens", usage },
    ], new ResponsesStreamWriter(meta, stateOf(), recordingSaver()));
    const response = frames.at(-1)!.data.response as JsonRecord & { output: JsonRecord[] };
    expect(frames.at(-1)!.event).toBe("response.incomplete");
    expect(response.output).toEqual([expect.objectContaining({ type: "function_call", call_id: "call_a", arguments: '{"city":"Par', status: "incomplete" })]);
  });

  it("an error after the start is response.failed then an error event, and nothing after", async () => {
    const saver = recordingSaver();
    const writer = new ResponsesStreamWriter(meta, stateOf(), saver);
    const error = new ProtocolError("internal", "the model failed while generating: device lost");
    const frames = await stream([start, { type: "text", text: "Par" }, { type: "error", error }, { type: "text", text: "tial" }, { type: "finish", reason: "end_turn", usage }], writer);
    // The item the failure cut is closed as incomplete first.
    expect(frames.map((frame) => frame.event)).toEqual([
      "response.created", "response.in_progress", "response.output_item.added", "response.content_part.added", "response.output_text.delta",
      "response.output_text.done", "response.content_part.done", "response.output_item.done", "response.failed", "error",
    ]);
    expect(frames.map((frame) => frame.data.sequence_number)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    expect(frames[7]!.data.item).toMatchObject({ type: "message", status: "incomplete", content: [{ text: "Par" }] });
    expect(frames[8]!.data.response).toMatchObject({ id: meta.id, status: "failed", error: { code: "server_error", message: "the model failed while generating: device lost" }, usage: null, output: [{ status: "incomplete" }] });
    expect(frames[9]!.data).toStrictEqual({ type: "error", code: "server_error", message: "the model failed while generating: device lost", param: null, sequence_number: 9 });
    // A failed response is not kept.
    expect(saver.saved).toEqual([]);
  });

  it("a response that cannot be stored ends the stream with response.failed and an error saying so", async () => {
    const saver: ResponseSaver = async () => { throw new Error("disk full"); };
    const frames = await stream([start, { type: "text", text: "Hi" }, { type: "finish", reason: "end_turn", usage }], new ResponsesStreamWriter(meta, stateOf(), saver));
    const types = frames.map((frame) => frame.event);
    expect(types.slice(-2)).toEqual(["response.failed", "error"]);
    expect(types).not.toContain("response.completed");
    const message = "the response was generated but could not be stored (disk full): retry, or send store: false";
    expect(frames.at(-2)!.data.response).toMatchObject({ status: "failed", error: { message } });
    expect(frames.at(-1)!.data).toMatchObject({ type: "error", message, code: "server_error" });
    expect(frames.map((frame) => frame.data.sequence_number)).toEqual(frames.map((_, index) => index));
  });

  it("a saver's ProtocolError reaches the client as it is", async () => {
    const saver: ResponseSaver = async () => { throw new ProtocolError("bad_gateway", "stored responses cannot be written now"); };
    const frames = await stream([start, { type: "finish", reason: "end_turn", usage }], new ResponsesStreamWriter(meta, stateOf(), saver));
    expect(frames.at(-1)!.data).toMatchObject({ type: "error", message: "stored responses cannot be written now" });
  });
});

describe("finishedResponse: the non-streamed answer", () => {
  it("has the same output items as the stream's final response for the same result", async () => {
    const frames = await stream(fullSequence, new ResponsesStreamWriter(meta, stateOf(), recordingSaver()));
    const streamed = frames.at(-1)!.data.response as JsonRecord;
    const saver = recordingSaver();
    const whole = await finishedResponse(meta, stateOf({ stream: false }), collected(fullSequence), saver);
    expect(withoutIds(whole.output)).toStrictEqual(withoutIds(streamed.output));
    expect(whole.output_text).toBe(streamed.output_text);
    expect(whole.usage).toStrictEqual(streamed.usage);
    expect(whole.status).toBe("completed");
    expect(saver.saved).toStrictEqual([whole]);
  });

  it("serialises the arguments of a call that did not stream, as a stream would", async () => {
    const events: InternalEvent[] = [start, { type: "text", text: "Sure." }, { type: "tool_call", index: 0, id: "call_z", name: "now", arguments: { tz: "UTC" } }, { type: "finish", reason: "tool_use", usage }];
    const frames = await stream(events, new ResponsesStreamWriter(meta, stateOf(), recordingSaver()));
    const whole = await finishedResponse(meta, stateOf({ stream: false }), collected(events), recordingSaver());
    expect(withoutIds(whole.output)).toStrictEqual(withoutIds((frames.at(-1)!.data.response as JsonRecord).output));
    expect(whole.output).toEqual([expect.objectContaining({ type: "message" }), expect.objectContaining({ type: "function_call", call_id: "call_z", arguments: '{"tz":"UTC"}', status: "completed" })]);
    // A call that did not stream is announced whole: added, arguments done, item done.
    expect(frames.slice(-4).map((frame) => frame.event)).toEqual(["response.output_item.added", "response.function_call_arguments.done", "response.output_item.done", "response.completed"]);
  });

  it("marks the cut item incomplete, as the stream does", async () => {
    const events: InternalEvent[] = [start, { type: "thinking", text: "Long thought" }, { type: "finish", reason: "max_tokens", usage }];
    const whole = await finishedResponse(meta, stateOf({ stream: false }), collected(events), recordingSaver());
    expect(whole).toMatchObject({ status: "incomplete", incomplete_details: { reason: "max_output_tokens" }, output_text: "" });
    expect(whole.output).toEqual([expect.objectContaining({ type: "reasoning", status: "incomplete", content: [{ type: "reasoning_text", text: "Long thought" }] })]);
  });

  it("has no message item for an empty answer", async () => {
    const whole = await finishedResponse(meta, stateOf({ stream: false }), collected([start, { type: "finish", reason: "end_turn", usage }]), recordingSaver());
    expect(whole.output).toEqual([]);
    expect(whole.output_text).toBe("");
  });

  it("refuses to answer a response that cannot be stored (502), and stores nothing when asked not to", async () => {
    const failing: ResponseSaver = async () => { throw new Error("connection reset"); };
    const error = await finishedResponse(meta, stateOf({ stream: false }), collected(fullSequence), failing).then(() => undefined, (caught: unknown) => caught);
    expect(error).toBeInstanceOf(ProtocolError);
    expect((error as ProtocolError).status).toBe(502);
    expect((error as ProtocolError).message).toMatch(/could not be stored \(connection reset\)/);
    const saver = recordingSaver();
    await finishedResponse(meta, stateOf({ stream: false, store: false }), collected(fullSequence), saver);
    expect(saver.saved).toEqual([]);
  });
});

describe("usage", () => {
  it("maps cached and reasoning tokens, and totals input and output", async () => {
    const whole = await finishedResponse(meta, stateOf({ stream: false }), collected(fullSequence), recordingSaver());
    expect(whole.usage).toStrictEqual({
      input_tokens: 20,
      input_tokens_details: { cached_tokens: 16 },
      output_tokens: 30,
      output_tokens_details: { reasoning_tokens: 8 },
      total_tokens: 50,
    });
  });

  it("reports no reasoning tokens as 0", async () => {
    const frames = await stream([start, { type: "text", text: "Hi" }, { type: "finish", reason: "end_turn", usage: { promptTokens: 5, cachedTokens: 0, completionTokens: 1 } }], new ResponsesStreamWriter(meta, stateOf(), recordingSaver()));
    expect((frames.at(-1)!.data.response as JsonRecord).usage).toStrictEqual({
      input_tokens: 5,
      input_tokens_details: { cached_tokens: 0 },
      output_tokens: 1,
      output_tokens_details: { reasoning_tokens: 0 },
      total_tokens: 6,
    });
  });
});

describe("OutputAssembler", () => {
  it("ignores empty deltas and opens no item for them", () => {
    const assembler = new OutputAssembler();
    expect(assembler.event({ type: "thinking", text: "" })).toEqual([]);
    expect(assembler.event({ type: "text", text: "" })).toEqual([]);
    expect(assembler.finish("end_turn")).toEqual([]);
    expect(assembler.items).toEqual([]);
  });

  it("starts a new message for text after a call, closing the call as completed", () => {
    const assembler = new OutputAssembler();
    assembler.event({ type: "tool_call", index: 0, id: "call_a", name: "f", arguments: {} });
    const events = assembler.event({ type: "text", text: "after" });
    expect(events.map((event) => event.type)).toEqual(["response.output_item.done", "response.output_item.added", "response.content_part.added", "response.output_text.delta"]);
    expect(events[0]).toMatchObject({ output_index: 0, item: { type: "function_call", status: "completed", arguments: "{}" } });
    expect(events[1]).toMatchObject({ output_index: 1, item: { type: "message" } });
    assembler.finish("end_turn");
    expect(assembler.items.map((item) => [item.type, item.status])).toEqual([["function_call", "completed"], ["message", "completed"]]);
    expect(assembler.outputText).toBe("after");
  });
});
