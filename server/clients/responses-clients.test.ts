// The clients people use against the OpenAI Responses API (POST /v1/responses, GET and DELETE /v1/responses/{id},
// GET /v1/responses/{id}/input_items), run against a real loom server on a random-weight model:
// - the official `openai` SDK: responses.create (output items, output_text, usage; completed, and incomplete at
//   max_output_tokens), responses.stream (typed events in order with strictly increasing sequence numbers,
//   finalResponse), responses.parse with zodTextFormat, function calling with zodResponsesFunction continued by
//   previous_response_id, retrieve, inputItems.list, delete, and store: false;
// - the Vercel AI SDK's default OpenAI provider (@ai-sdk/openai, which speaks the Responses API): generateText and
//   streamText, generateObject and streamObject, multi-step tools, and a conversation carried on by the client or by
//   previousResponseId;
// - the OpenAI Agents SDK (@openai/agents) in its default setup (the default provider, tracing off): an Agent with a
//   function tool and a structured final output, run() streamed and not, then continued by previousResponseId;
// - LangChain's ChatOpenAI with useResponsesApi: invoke and stream, bindTools with the result sent back, and
//   withStructuredOutput.
// The text is gibberish; what must hold is what the grammar and the server guarantee: shapes, ids, round trips, valid
// structured answers and tool arguments, and what reached the engine (server.engineRequests). Tests that a server
// refusal blocks are skipped, with the refusal named above each.
import { createOpenAI } from "@ai-sdk/openai";
import { type AIMessageChunk, HumanMessage, ToolMessage } from "@langchain/core/messages";
import { tool as langchainTool } from "@langchain/core/tools";
import { ChatOpenAI } from "@langchain/openai";
import { Agent, MaxTurnsExceededError, getGlobalTraceProvider, run, setDefaultOpenAIClient, setDefaultOpenAIKey, setTracingDisabled, tool as agentTool } from "@openai/agents";
import { type ModelMessage, generateObject, generateText, stepCountIs, streamObject, streamText, tool } from "ai";
import OpenAI from "openai";
import { zodResponsesFunction, zodTextFormat } from "openai/helpers/zod";
import type { ResponseFunctionToolCall, ResponseStreamEvent } from "openai/resources/responses/responses";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { z } from "zod";
import type { ChatMessage } from "../../engine/chat/messages.js";
import { Contact, Route, StrictOrder, Ticket, WeatherInput, jsonSchemaErrors } from "./schemas.js";
import { type ClientTestServer, TEST_KEY, startClientTestServer } from "./test-server.js";

let server: ClientTestServer;
let openai: OpenAI;

beforeAll(async () => {
  server = await startClientTestServer();
  openai = new OpenAI({ apiKey: TEST_KEY, baseURL: `${server.base}/v1`, maxRetries: 0, fetch: server.fetch });
});

afterAll(async () => {
  await server?.close();
});

/** The messages of an engine request (`at` as Array.at): every Responses request is a conversation. */
function engineMessages(at: number): ChatMessage[] {
  const input = server.engineRequests.at(at)!.input;
  if (!("messages" in input)) throw new Error("not a conversation");
  return input.messages;
}

/** The paths of the requests sent since `from` (an index into server.sent). */
const pathsSince = (from: number) => server.sent.slice(from).map((sent) => sent.path);

/** WeatherInput as strict function schemas want it: every property required, `days` nullable instead of optional. */
const StrictWeather = WeatherInput.extend({ days: z.number().int().min(1).max(7).nullable() });
const CityInput = z.object({ city: z.string().min(1).max(12) });

describe("openai SDK: responses", () => {
  it("create: a response with a message, output_text and usage; the engine got instructions and input", async () => {
    const response = await openai.responses.create({ model: server.chatModel, instructions: "Answer briefly.", input: "Say hello.", temperature: 0, max_output_tokens: 16 });
    expect(response.id).toMatch(/^resp_/);
    expect(response.object).toBe("response");
    expect(response.model).toBe(server.chatModel);
    expect(response.instructions).toBe("Answer briefly.");
    // Free text may or may not end within 16 tokens.
    expect(["completed", "incomplete"]).toContain(response.status);
    expect(response.incomplete_details).toEqual(response.status === "incomplete" ? { reason: "max_output_tokens" } : null);
    expect(response.output.map((item) => item.type)).toEqual(["message"]);
    const message = response.output[0]!;
    if (message.type !== "message") throw new Error("not a message");
    expect(message).toMatchObject({ id: expect.stringMatching(/^msg_/), role: "assistant", status: response.status });
    expect(response.output_text).toBe(message.content.map((part) => (part.type === "output_text" ? part.text : "")).join(""));
    const usage = response.usage!;
    expect(usage.input_tokens).toBeGreaterThan(0);
    expect(usage.output_tokens).toBeGreaterThan(0);
    expect(usage.output_tokens).toBeLessThanOrEqual(16);
    expect(usage.total_tokens).toBe(usage.input_tokens + usage.output_tokens);
    expect(engineMessages(-1)).toEqual([{ role: "system", content: "Answer briefly." }, { role: "user", content: "Say hello." }]);
  });

  it("create: an answer the token limit cuts is incomplete with reason max_output_tokens", async () => {
    // A JSON object with a 200-character string cannot be finished within 8 tokens.
    const schema = { type: "object", properties: { text: { type: "string", minLength: 200 } }, required: ["text"], additionalProperties: false };
    const response = await openai.responses.create({
      model: server.chatModel,
      input: "Write.",
      text: { format: { type: "json_schema", name: "long", strict: true, schema } },
      temperature: 0,
      max_output_tokens: 8,
    });
    expect(response.status).toBe("incomplete");
    expect(response.incomplete_details).toEqual({ reason: "max_output_tokens" });
    expect(response.usage!.output_tokens).toBe(8);
    expect(response.output).toEqual([expect.objectContaining({ type: "message", status: "incomplete" })]);
  });

  it("stream: text events in order with strictly increasing sequence numbers; finalResponse is what is stored", async () => {
    const stream = openai.responses.stream({ model: server.chatModel, input: "Say hello.", temperature: 0, max_output_tokens: 16 });
    const events: ResponseStreamEvent[] = [];
    for await (const event of stream) events.push(event);
    const final = await stream.finalResponse();

    expect(events.map((event) => event.sequence_number)).toEqual(events.map((_, index) => index));
    const types = events.map((event) => event.type);
    expect(types.slice(0, 4)).toEqual(["response.created", "response.in_progress", "response.output_item.added", "response.content_part.added"]);
    const last = final.status === "incomplete" ? "response.incomplete" : "response.completed";
    expect(types.slice(-4)).toEqual(["response.output_text.done", "response.content_part.done", "response.output_item.done", last]);
    expect(new Set(types.slice(4, -4))).toEqual(new Set(["response.output_text.delta"]));
    const deltas = events.flatMap((event) => (event.type === "response.output_text.delta" ? [event.delta] : []));
    expect(deltas.join("")).toBe(final.output_text);
    expect(events[0]).toMatchObject({ response: { id: final.id, status: "in_progress", output: [] } });
    expect(final.usage!.total_tokens).toBe(final.usage!.input_tokens + final.usage!.output_tokens);
    // Stored before the last event went out. (The helper adds `parsed` fields of its own: a subset match.)
    const stored = await openai.responses.retrieve(final.id);
    expect(final).toMatchObject(stored);
    expect(stored.output.map((item) => item.id)).toEqual(final.output.map((item) => item.id));
  });

  it("stream: a forced function call's argument deltas join to the arguments of the done event and the final call", async () => {
    const weather = zodResponsesFunction({ name: "get_weather", description: "The forecast for a city", parameters: StrictWeather });
    const stream = openai.responses.stream({ model: server.chatModel, input: "Weather in Oslo?", tools: [weather], tool_choice: "required", parallel_tool_calls: false, temperature: 0, max_output_tokens: 120 });
    const events: ResponseStreamEvent[] = [];
    for await (const event of stream) events.push(event);
    const final = await stream.finalResponse();

    expect(events.map((event) => event.sequence_number)).toEqual(events.map((_, index) => index));
    const types = events.map((event) => event.type);
    expect(types.slice(0, 3)).toEqual(["response.created", "response.in_progress", "response.output_item.added"]);
    expect(types.slice(-3)).toEqual(["response.function_call_arguments.done", "response.output_item.done", "response.completed"]);
    expect(new Set(types.slice(3, -3))).toEqual(new Set(["response.function_call_arguments.delta"]));
    const call = final.output[0] as ResponseFunctionToolCall & { parsed_arguments: unknown };
    expect(final.output).toHaveLength(1);
    expect(call).toMatchObject({ type: "function_call", name: "get_weather", status: "completed" });
    const deltas = events.flatMap((event) => (event.type === "response.function_call_arguments.delta" ? [event.delta] : []));
    expect(deltas.join("")).toBe(call.arguments);
    expect(events.at(-3)).toMatchObject({ item_id: call.id, arguments: call.arguments });
    expect(StrictWeather.safeParse(call.parsed_arguments).success, call.arguments).toBe(true);
  });

  it.each(Object.entries({ Contact, StrictOrder, Route }))("parse with zodTextFormat: %s output_parsed validates, streamed and not", async (name, schema) => {
    const params = {
      model: server.chatModel,
      input: `Write one ${name} as JSON.`,
      text: { format: zodTextFormat(schema as z.ZodType, name) },
      temperature: 0,
      max_output_tokens: 400,
    };
    const response = await openai.responses.parse(params);
    expect(response.status).toBe("completed");
    expect((schema as z.ZodType).safeParse(response.output_parsed).success, JSON.stringify(response.output_parsed)).toBe(true);
    const format = (server.sent.at(-1)!.body.text as { format: { type: string; name: string; schema: object } }).format;
    expect(format).toMatchObject({ type: "json_schema", name });
    expect(jsonSchemaErrors(format.schema, response.output_parsed)).toBeUndefined();

    const streamed = await openai.responses.stream(params).finalResponse();
    expect(streamed.output_parsed).toEqual(response.output_parsed);
  });

  const weather = zodResponsesFunction({ name: "get_weather", description: "The forecast for a city", parameters: StrictWeather });
  const time = zodResponsesFunction({ name: "get_time", description: "The time in a city", parameters: CityInput });
  it.each([
    ["required", [weather], "required" as const],
    ["a named function", [time, weather], { type: "function" as const, name: "get_weather" }],
  ])("function calling with tool_choice %s; the result goes back by previous_response_id", async (_, tools, toolChoice) => {
    const question = "What is the weather in Oslo?";
    const first = await openai.responses.parse({ model: server.chatModel, input: question, tools, tool_choice: toolChoice, parallel_tool_calls: false, temperature: 0, max_output_tokens: 120 });
    expect(first.status).toBe("completed");
    expect(first.tool_choice).toEqual(toolChoice);
    expect(first.output).toHaveLength(1);
    const call = first.output[0]!;
    if (call.type !== "function_call") throw new Error(`not a function call: ${call.type}`);
    expect(call.id).toMatch(/^fc_/);
    expect(call.call_id).not.toBe("");
    expect(tools.map((candidate) => candidate.name)).toContain(call.name);
    if (typeof toolChoice === "object") expect(call.name).toBe("get_weather");
    // The SDK parsed the arguments with the tool's zod schema.
    expect(call.parsed_arguments).toEqual(JSON.parse(call.arguments));
    expect((call.name === "get_weather" ? StrictWeather : CityInput).safeParse(call.parsed_arguments).success, call.arguments).toBe(true);

    const output = JSON.stringify({ forecast: "sunny", city: (call.parsed_arguments as { city: string }).city });
    const second = await openai.responses.create({
      model: server.chatModel,
      previous_response_id: first.id,
      input: [{ type: "function_call_output", call_id: call.call_id, output }],
      tools,
      temperature: 0,
      max_output_tokens: 32,
    });
    expect(["completed", "incomplete"]).toContain(second.status);
    expect(second.previous_response_id).toBe(first.id);
    // The engine saw the whole conversation: the question, the call, its result.
    expect(engineMessages(-1)).toEqual([
      { role: "user", content: question },
      { role: "assistant", content: "", tool_calls: [{ id: call.call_id, type: "function", function: { name: call.name, arguments: call.arguments } }] },
      { role: "tool", tool_call_id: call.call_id, content: output },
    ]);

    // The second response's input items: the first turn's input and output, then its own input (paged one by one).
    const items = [];
    for await (const item of openai.responses.inputItems.list(second.id, { order: "asc", limit: 1 })) items.push(item);
    expect(items.map((item) => item.type)).toEqual(["message", "function_call", "function_call_output"]);
    expect(items[1]).toMatchObject({ id: call.id, call_id: call.call_id, name: call.name, arguments: call.arguments });
    expect(items[2]).toMatchObject({ call_id: call.call_id, output });
    // The default order is newest first.
    const newest = await openai.responses.inputItems.list(second.id);
    expect(newest.data.map((item) => item.id)).toEqual(items.map((item) => item.id).reverse());
  });

  it("retrieve equals the created response; inputItems.list has its input; delete, then every read is a 404", async () => {
    const created = await openai.responses.create({
      model: server.chatModel,
      instructions: "Answer briefly.",
      input: [
        { role: "user", content: "Hello." },
        { role: "assistant", content: "Hi." },
        { role: "user", content: [{ type: "input_text", text: "Say hello." }] },
      ],
      metadata: { test: "retrieve" },
      temperature: 0,
      max_output_tokens: 8,
    });
    const retrieved = await openai.responses.retrieve(created.id);
    expect(retrieved).toEqual(created);
    expect(retrieved.metadata).toEqual({ test: "retrieve" });

    const page = await openai.responses.inputItems.list(created.id, { order: "asc" });
    const summary = page.data.map((item) => (item.type === "message" ? { role: item.role, text: item.content.map((part) => ("text" in part ? part.text : part.type)) } : item.type));
    expect(summary).toEqual([
      { role: "user", text: ["Hello."] },
      { role: "assistant", text: ["Hi."] },
      { role: "user", text: ["Say hello."] },
    ]);
    expect(page.has_more).toBe(false);
    // Instructions are no input item, but they reached the engine.
    expect(engineMessages(-1).map((message) => message.role)).toEqual(["system", "user", "assistant", "user"]);

    await openai.responses.delete(created.id);
    await expect(openai.responses.retrieve(created.id)).rejects.toBeInstanceOf(OpenAI.NotFoundError);
    await expect(openai.responses.inputItems.list(created.id)).rejects.toBeInstanceOf(OpenAI.NotFoundError);
    await expect(openai.responses.delete(created.id)).rejects.toBeInstanceOf(OpenAI.NotFoundError);
  });

  it("store: false: not retrievable, and a previous_response_id naming it is a 404 naming previous_response_id", async () => {
    const response = await openai.responses.create({ model: server.chatModel, input: "Say hello.", store: false, temperature: 0, max_output_tokens: 8 });
    // The SDK's Response type has no `store`; the server echoes it.
    expect((response as { store?: unknown }).store).toBe(false);
    await expect(openai.responses.retrieve(response.id)).rejects.toBeInstanceOf(OpenAI.NotFoundError);
    const engineBefore = server.engineRequests.length;
    const next = openai.responses.create({ model: server.chatModel, previous_response_id: response.id, input: "Again.", max_output_tokens: 8 });
    await expect(next).rejects.toBeInstanceOf(OpenAI.NotFoundError);
    await expect(next).rejects.toMatchObject({ status: 404, param: "previous_response_id", message: expect.stringContaining(response.id) });
    expect(server.engineRequests).toHaveLength(engineBefore);
  });
});

describe("AI SDK: @ai-sdk/openai's default (Responses) provider", () => {
  const settings = { temperature: 0, maxRetries: 0, maxOutputTokens: 400 } as const;
  const model = () => createOpenAI({ baseURL: `${server.base}/v1`, apiKey: TEST_KEY, fetch: server.fetch })(server.chatModel);

  it("generateText and streamText: the same text both ways, over /v1/responses", async () => {
    const sentBefore = server.sent.length;
    const request = { model: model(), system: "Answer briefly.", prompt: "Say hello.", ...settings, maxOutputTokens: 16 };
    const generated = await generateText(request);
    expect(pathsSince(sentBefore)).toEqual(["/v1/responses"]);
    expect(generated.finishReason).toMatch(/^(stop|length)$/);
    expect(generated.usage.inputTokens).toBeGreaterThan(0);
    expect(generated.usage.outputTokens).toBeGreaterThan(0);
    expect(generated.response.id).toMatch(/^resp_/);
    expect(engineMessages(-1)).toEqual([{ role: "system", content: "Answer briefly." }, { role: "user", content: "Say hello." }]);

    const streamed = streamText(request);
    const chunks: string[] = [];
    for await (const chunk of streamed.textStream) chunks.push(chunk);
    expect(server.sent.at(-1)).toMatchObject({ path: "/v1/responses", body: { stream: true } });
    expect(chunks.join("")).toBe(await streamed.text);
    // Temperature 0: the same tokens both ways.
    expect(await streamed.text).toBe(generated.text);
    expect(await streamed.finishReason).toBe(generated.finishReason);
    expect((await streamed.usage).outputTokens).toBe(generated.usage.outputTokens);
  });

  it.each(Object.entries({ Ticket, Route, Contact }))("generateObject and streamObject: %s validates", async (name, schema) => {
    const prompt = `Write one ${name} as JSON.`;
    const generated = await generateObject({ model: model(), schema: schema as z.ZodType, prompt, ...settings });
    expect((schema as z.ZodType).safeParse(generated.object).success, JSON.stringify(generated.object)).toBe(true);
    const sent = server.sent.at(-1)!;
    expect(sent.path).toBe("/v1/responses");
    const format = (sent.body.text as { format: { type: string; schema: object } }).format;
    expect(format.type).toBe("json_schema");
    expect(jsonSchemaErrors(format.schema, generated.object)).toBeUndefined();

    const streamed = streamObject({ model: model(), schema: schema as z.ZodType, prompt, ...settings });
    for await (const _ of streamed.partialObjectStream); // the object resolves once the stream is read
    expect(await streamed.object).toEqual(generated.object);
  });

  it.each(["generate", "stream"] as const)("multi-step tools (%s): execute gets valid input and each next request carries the result", async (mode) => {
    const inputs: z.infer<typeof WeatherInput>[] = [];
    const weather = tool({
      description: "The weather forecast for a city",
      inputSchema: WeatherInput,
      execute: async (input) => {
        inputs.push(input);
        return { forecast: `sunny in ${input.city}`, call: inputs.length };
      },
    });
    const sentBefore = server.sent.length;
    const engineBefore = server.engineRequests.length;
    const options = {
      model: model(),
      prompt: "What is the weather in Oslo?",
      tools: { weather },
      toolChoice: "required",
      stopWhen: stepCountIs(3),
      providerOptions: { openai: { parallelToolCalls: false } },
      ...settings,
      maxOutputTokens: 120,
    } as const;
    const steps = mode === "generate" ? (await generateText(options)).steps : await (async () => {
      const result = streamText(options);
      for await (const part of result.fullStream) if (part.type === "error") throw part.error;
      return result.steps;
    })();

    // toolChoice "required": every step calls, so the loop runs until stepCountIs(3) stops it.
    expect(steps.map((step) => [step.finishReason, step.toolCalls.length, step.toolResults.length])).toEqual([
      ["tool-calls", 1, 1],
      ["tool-calls", 1, 1],
      ["tool-calls", 1, 1],
    ]);
    expect(inputs).toHaveLength(3);
    for (const input of inputs) expect(WeatherInput.safeParse(input).success, JSON.stringify(input)).toBe(true);

    expect(pathsSince(sentBefore)).toEqual(["/v1/responses", "/v1/responses", "/v1/responses"]);
    const bodies = server.sent.slice(sentBefore).map((sent) => sent.body);
    for (const [index, step] of steps.slice(0, 2).entries()) {
      const call = step.toolCalls[0]!;
      const output = JSON.stringify(step.toolResults[0]!.output);
      // The provider sends the history itself (no previous_response_id): the call, then its output.
      const next = bodies[index + 1]!;
      expect(next.previous_response_id).toBeUndefined();
      expect(next.input).toEqual(expect.arrayContaining([
        expect.objectContaining({ type: "function_call", call_id: call.toolCallId, name: "weather" }),
        expect.objectContaining({ type: "function_call_output", call_id: call.toolCallId, output }),
      ]));
      // The server accepted it, and the result reached the engine as the tool message answering that call.
      expect(engineMessages(engineBefore + index + 1)).toContainEqual({ role: "tool", tool_call_id: call.toolCallId, content: output });
    }
  });

  it("a conversation continued by previousResponseId: the engine gets the stored turn before the new one", async () => {
    const first = await generateText({ model: model(), system: "Answer briefly.", prompt: "Say hello.", ...settings, maxOutputTokens: 8 });
    const second = await generateText({ model: model(), prompt: "Again.", providerOptions: { openai: { previousResponseId: first.response.id } }, ...settings, maxOutputTokens: 8 });
    expect(server.sent.at(-1)!.body).toMatchObject({ previous_response_id: first.response.id });
    expect(second.response.id).not.toBe(first.response.id);
    // The provider sends `system` as an input message, so it is part of the stored conversation.
    expect(engineMessages(-1)).toEqual([
      { role: "system", content: "Answer briefly." },
      { role: "user", content: "Say hello." },
      { role: "assistant", content: first.text },
      { role: "user", content: "Again." },
    ]);
  });

  /** A second turn sent with the first turn's response.messages, as a chat app appends them. */
  async function continueWithResponseMessages(providerOptions: { openai: { store?: boolean } }): Promise<void> {
    const question: ModelMessage = { role: "user", content: "Say hello." };
    const first = await generateText({ model: model(), messages: [question], providerOptions, ...settings, maxOutputTokens: 8 });
    const again: ModelMessage = { role: "user", content: "Again." };
    await generateText({ model: model(), messages: [question, ...first.response.messages, again], providerOptions, ...settings, maxOutputTokens: 8 });
    expect(engineMessages(-1)).toEqual([
      { role: "user", content: "Say hello." },
      { role: "assistant", content: first.text },
      { role: "user", content: "Again." },
    ]);
  }

  it("a conversation the client carries (store: false): the assistant's text goes back inline", async () => {
    await continueWithResponseMessages({ openai: { store: false } });
    const input = server.sent.at(-1)!.body.input as Array<Record<string, unknown>>;
    expect(input[1]).toMatchObject({ role: "assistant", id: expect.stringMatching(/^msg_/) });
  });

  // With store left at its default (true) the provider sends the earlier assistant message as a reference to the
  // stored item, which the server reads from the response that made it.
  it("a conversation the client carries (store: true, the default): earlier items go back as item references", async () => {
    await continueWithResponseMessages({ openai: {} });
    const input = server.sent.at(-1)!.body.input as Array<Record<string, unknown>>;
    expect(input[1]).toMatchObject({ type: "item_reference", id: expect.stringMatching(/^msg_/) });
  });

  // With store: false and reasoning, the provider asks for encrypted reasoning, which changes nothing here: the
  // reasoning is visible in every response.
  it("store: false with reasoning: the include of encrypted reasoning is accepted", async () => {
    const providerOptions = { openai: { store: false, forceReasoning: true, reasoningEffort: "low" } };
    const generated = await generateText({ model: model(), prompt: "Say hello.", providerOptions, ...settings, temperature: undefined, maxOutputTokens: 64 });
    expect(server.sent.at(-1)!.body).toMatchObject({ include: ["reasoning.encrypted_content"], store: false });
    expect(generated.finishReason).toMatch(/^(stop|length)$/);
  });
});

describe("OpenAI Agents SDK: an Agent with a function tool, run() on the default provider", () => {
  /** Every URL fetched through the global fetch while the tests run (the test server's fetch calls it too). */
  const fetched: string[] = [];

  beforeAll(() => {
    const realFetch = globalThis.fetch;
    vi.spyOn(globalThis, "fetch").mockImplementation((input, init) => {
      fetched.push(input instanceof Request ? input.url : String(input));
      return realFetch(input, init);
    });
    // The default setup: the SDK's default provider with a default client, and no tracing (no network here).
    setTracingDisabled(true);
    setDefaultOpenAIKey(TEST_KEY);
    setDefaultOpenAIClient(new OpenAI({ apiKey: TEST_KEY, baseURL: `${server.base}/v1`, maxRetries: 0, fetch: server.fetch }));
  });

  afterAll(async () => {
    vi.restoreAllMocks();
  });

  /** A closed final output: with tools offered, each turn is a call or this, and either ends within max tokens. */
  const Forecast = z.object({ sky: z.enum(["sunny", "rainy"]), warm: z.boolean() });

  function forecaster(executed: unknown[]): Agent<unknown, typeof Forecast> {
    const weather = agentTool({
      name: "get_weather",
      description: "The weather forecast for a city",
      parameters: StrictWeather,
      execute: async (input) => {
        executed.push(input);
        return `sunny in ${input.city}`;
      },
    });
    return new Agent({
      name: "Forecaster",
      instructions: "Answer with the forecast.",
      model: server.chatModel,
      tools: [weather],
      outputType: Forecast,
      // The first turn must call the tool (the SDK then resets the choice to auto for the next turns).
      modelSettings: { toolChoice: "required", parallelToolCalls: false, temperature: 0, maxTokens: 120 },
    });
  }

  it.each([false, true])("stream %s: the tool runs with valid arguments, its result reaches the next turn, the output validates", async (stream) => {
    const executed: unknown[] = [];
    const agent = forecaster(executed);
    const sentBefore = server.sent.length;
    const engineBefore = server.engineRequests.length;
    const question = "What is the weather in Oslo?";
    let finalOutput: unknown;
    try {
      if (stream) {
        const result = await run(agent, question, { stream: true, maxTurns: 3 });
        const kinds = new Set<string>();
        for await (const event of result) kinds.add(event.type);
        await result.completed;
        if (result.error) throw result.error;
        expect(kinds).toContain("raw_model_stream_event");
        finalOutput = result.finalOutput;
      } else {
        finalOutput = (await run(agent, question, { maxTurns: 3 })).finalOutput;
      }
    } catch (error) {
      // Random weights may call the tool at every turn: the run then ends at maxTurns.
      if (!(error instanceof MaxTurnsExceededError)) throw error;
    }
    await getGlobalTraceProvider().forceFlush();

    const bodies = server.sent.slice(sentBefore).map((sent) => sent.body);
    expect(pathsSince(sentBefore).every((path) => path === "/v1/responses")).toBe(true);
    expect(bodies.length).toBeGreaterThanOrEqual(2);
    expect(bodies[0]).toMatchObject({ tool_choice: "required", stream, text: { format: { type: "json_schema" } } });
    expect(executed.length).toBeGreaterThanOrEqual(1);
    for (const input of executed) expect(StrictWeather.safeParse(input).success, JSON.stringify(input)).toBe(true);
    if (finalOutput !== undefined) expect(Forecast.safeParse(finalOutput).success, JSON.stringify(finalOutput)).toBe(true);

    // The SDK sends the history itself; the second turn's prompt has the first call and its result.
    const messages = engineMessages(engineBefore + 1);
    expect(messages.slice(0, 2)).toEqual([{ role: "system", content: "Answer with the forecast." }, { role: "user", content: question }]);
    const call = messages[2]!.tool_calls?.[0];
    expect(call?.function.name).toBe("get_weather");
    expect(JSON.parse(call!.function.arguments as string)).toEqual(executed[0]);
    expect(messages[3]).toEqual({ role: "tool", tool_call_id: call!.id, content: `sunny in ${(executed[0] as { city: string }).city}` });
    // Nothing went anywhere but the test server (no api.openai.com: no tracing export, no default key use).
    expect(fetched.filter((url) => !url.startsWith(`${server.base}/`))).toEqual([]);
  });

  it("a run continued by previousResponseId sends only the new input; the server supplies the rest", async () => {
    // No tools: each run is one turn whose answer the output schema closes.
    const agent = new Agent({ name: "Forecaster", instructions: "Answer with the forecast.", model: server.chatModel, outputType: Forecast, modelSettings: { temperature: 0, maxTokens: 60 } });
    const first = await run(agent, "What is the weather in Oslo?");
    expect(Forecast.safeParse(first.finalOutput).success, JSON.stringify(first.finalOutput)).toBe(true);
    const lastResponseId = first.lastResponseId!;
    expect(lastResponseId).toMatch(/^resp_/);

    const sentBefore = server.sent.length;
    const second = await run(agent, "And in Rome?", { previousResponseId: lastResponseId });
    expect(Forecast.safeParse(second.finalOutput).success, JSON.stringify(second.finalOutput)).toBe(true);
    expect(server.sent.slice(sentBefore).map((sent) => sent.body)).toEqual([
      expect.objectContaining({ previous_response_id: lastResponseId, input: [{ role: "user", content: "And in Rome?" }] }),
    ]);
    // The stored turn came first (its instructions do not carry over; the request's own do).
    const messages = engineMessages(-1);
    expect(messages).toEqual([
      { role: "system", content: "Answer with the forecast." },
      { role: "user", content: "What is the weather in Oslo?" },
      { role: "assistant", content: expect.any(String) },
      { role: "user", content: "And in Rome?" },
    ]);
    expect(JSON.parse(messages[2]!.content as string)).toEqual(first.finalOutput);
  });
});

describe("LangChain ChatOpenAI with useResponsesApi", () => {
  const chat = (maxTokens: number) =>
    new ChatOpenAI({
      model: server.chatModel,
      apiKey: TEST_KEY,
      configuration: { baseURL: `${server.base}/v1`, fetch: server.fetch },
      useResponsesApi: true,
      temperature: 0,
      maxTokens,
      maxRetries: 0,
    });

  it("invoke and stream: the same text both ways, with usage, over /v1/responses", async () => {
    const sentBefore = server.sent.length;
    const model = chat(16);
    const invoked = await model.invoke("Say hello.");
    expect(invoked.usage_metadata?.output_tokens).toBeGreaterThan(0);
    expect(invoked.usage_metadata?.total_tokens).toBe(invoked.usage_metadata!.input_tokens + invoked.usage_metadata!.output_tokens);
    expect(invoked.id).toMatch(/^(resp|msg)_/);
    let streamed: AIMessageChunk | undefined;
    for await (const chunk of await model.stream("Say hello.")) streamed = streamed ? streamed.concat(chunk) : chunk;
    expect(streamed!.text).toBe(invoked.text);
    expect(invoked.text.length).toBeGreaterThan(0);
    expect(pathsSince(sentBefore)).toEqual(["/v1/responses", "/v1/responses"]);
  });

  it("bindTools: a forced call with valid args, streamed and not, and its result goes back in the next turn", async () => {
    const weather = langchainTool(async ({ city }) => `sunny in ${city}`, { name: "get_weather", description: "The forecast for a city", schema: WeatherInput });
    const model = chat(120);
    // A named function: LangChain's Responses path drops a string tool_choice ("required", "any") from the request.
    const forced = model.bindTools([weather], { tool_choice: "get_weather", parallel_tool_calls: false });
    const question = new HumanMessage("What is the weather in Oslo?");
    const reply = await forced.invoke([question]);
    expect(server.sent.at(-1)!.body).toMatchObject({ tool_choice: { type: "function", name: "get_weather" } });
    expect(reply.tool_calls).toHaveLength(1);
    const call = reply.tool_calls![0]!;
    expect(call.name).toBe("get_weather");
    expect(WeatherInput.safeParse(call.args).success, JSON.stringify(call.args)).toBe(true);

    let streamed: AIMessageChunk | undefined;
    for await (const chunk of await forced.stream([question])) streamed = streamed ? streamed.concat(chunk) : chunk;
    expect(streamed!.tool_calls?.map(({ name, args }) => ({ name, args }))).toEqual([{ name: call.name, args: call.args }]);

    const result = await weather.invoke(call);
    expect(result).toBeInstanceOf(ToolMessage);
    const engineBefore = server.engineRequests.length;
    await model.invoke([question, reply, result]);
    const messages = engineMessages(engineBefore);
    expect(messages.find((message) => message.role === "assistant")?.tool_calls?.[0]).toMatchObject({ id: call.id, function: { name: "get_weather" } });
    expect(messages).toContainEqual({ role: "tool", tool_call_id: call.id, content: `sunny in ${(call.args as { city: string }).city}` });
  });

  it.each(Object.entries({ Ticket, Route }))("withStructuredOutput (jsonSchema): %s validates, invoked and streamed", async (name, schema) => {
    const structured = chat(400).withStructuredOutput(schema as z.ZodType, { method: "jsonSchema", name });
    const invoked = await structured.invoke(`Write one ${name} as JSON.`);
    expect((schema as z.ZodType).safeParse(invoked).success, JSON.stringify(invoked)).toBe(true);
    const format = (server.sent.at(-1)!.body.text as { format: { type: string; schema: object } }).format;
    expect(format.type).toBe("json_schema");
    expect(jsonSchemaErrors(format.schema, invoked)).toBeUndefined();
    let last: unknown;
    for await (const partial of await structured.stream(`Write one ${name} as JSON.`)) last = partial;
    expect(last).toEqual(invoked);
  });
});
