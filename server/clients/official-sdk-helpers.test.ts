// The official SDKs' zod helpers against a real loom server on a random-weight model: OpenAI's
// chat.completions.parse with zodResponseFormat and zodFunction tools, Anthropic's messages.parse with
// zodOutputFormat, and the Anthropic tool runner (beta.messages.toolRunner with betaZodTool), which threads its turns
// by default and must fall back to sending the whole history when the server says it cannot thread. What must hold
// is what the grammar guarantees: the SDK's own zod parse succeeds, streamed and not.
import Anthropic from "@anthropic-ai/sdk";
import { betaZodTool } from "@anthropic-ai/sdk/helpers/beta/zod";
import { zodOutputFormat } from "@anthropic-ai/sdk/helpers/zod";
import OpenAI from "openai";
import { zodFunction, zodResponseFormat } from "openai/helpers/zod";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { Catalog, Contact, FormatOnlyContact, Route, StrictOrder, Ticket, WeatherInput, jsonSchemaErrors } from "./schemas.js";
import { type ClientTestServer, TEST_KEY, startClientTestServer } from "./test-server.js";

let server: ClientTestServer;
let openai: OpenAI;
let anthropic: Anthropic;

beforeAll(async () => {
  server = await startClientTestServer();
  openai = new OpenAI({ apiKey: TEST_KEY, baseURL: `${server.base}/v1`, maxRetries: 0, fetch: server.fetch });
  anthropic = new Anthropic({ apiKey: TEST_KEY, baseURL: server.base, maxRetries: 0, fetch: server.fetch });
});

afterAll(async () => {
  await server?.close();
});

/** The schema of the last request's answer format as sent (after the SDK's own conversion). */
function lastSentFormatSchema(): object {
  const body = server.sent.at(-1)!.body as { response_format?: { json_schema: { schema: object } }; output_config?: { format: { schema: object } } };
  return body.response_format?.json_schema.schema ?? body.output_config!.format.schema;
}

describe("OpenAI chat.completions.parse with zodResponseFormat", () => {
  // Strict conversion refuses .optional() without .nullable(), records and tuples: those are tested with the AI SDK.
  const schemas: Record<string, z.ZodType> = { Contact, StrictOrder, Catalog, Route };

  it.each(Object.keys(schemas))("%s: message.parsed validates, streamed and not", async (name) => {
    const schema = schemas[name]!;
    const params = {
      model: server.chatModel,
      messages: [{ role: "user" as const, content: `Write one ${name} as JSON.` }],
      response_format: zodResponseFormat(schema, name),
      temperature: 0,
      max_tokens: 400,
    };
    const completion = await openai.chat.completions.parse(params);
    const choice = completion.choices[0]!;
    expect(choice.finish_reason).toBe("stop");
    expect(choice.message.parsed).not.toBeNull();
    expect(schema.safeParse(choice.message.parsed).success).toBe(true);
    expect(jsonSchemaErrors(lastSentFormatSchema(), choice.message.parsed)).toBeUndefined();

    const streamed = await openai.chat.completions.stream(params).finalChatCompletion();
    expect(streamed.choices[0]!.message.parsed).toEqual(choice.message.parsed);
  });
});

describe("OpenAI chat.completions.parse with zodFunction tools", () => {
  const weather = zodFunction({ name: "get_weather", description: "The forecast for a city", parameters: WeatherInput.extend({ days: z.number().int().min(1).max(7).nullable() }) });
  const meeting = zodFunction({
    name: "schedule_meeting",
    description: "Books a meeting",
    parameters: z.object({ attendee: z.email().max(40), start: z.iso.datetime(), room: z.uuid(), link: z.url().max(40) }),
  });

  it.each([
    ["required", [weather], "required" as const],
    ["a named function with formats", [weather, meeting], { type: "function" as const, function: { name: "schedule_meeting" } }],
  ])("tool_choice %s: parsed_arguments validate, streamed and not", async (_, tools, toolChoice) => {
    const params = {
      model: server.chatModel,
      messages: [{ role: "user" as const, content: "Weather in Oslo, then book a meeting." }],
      tools,
      tool_choice: toolChoice,
      parallel_tool_calls: false,
      temperature: 0,
      max_tokens: 200,
    };
    const completion = await openai.chat.completions.parse(params);
    const choice = completion.choices[0]!;
    expect(choice.finish_reason).toBe("tool_calls");
    const calls = choice.message.tool_calls ?? [];
    expect(calls).toHaveLength(1);
    const call = calls[0]!;
    if (call.type !== "function") throw new Error("not a function call");
    if (typeof toolChoice === "object") expect(call.function.name).toBe("schedule_meeting");
    const tool = tools.find((candidate) => candidate.function.name === call.function.name)!;
    expect(tool.$parseRaw(call.function.arguments)).toEqual(call.function.parsed_arguments);

    const streamed = await openai.chat.completions.stream(params).finalChatCompletion();
    const streamedCall = streamed.choices[0]!.message.tool_calls?.[0];
    if (!streamedCall) throw new Error("no streamed tool call");
    if (streamedCall.type !== "function") throw new Error("not a function call");
    expect(streamedCall.function.parsed_arguments).toEqual(call.function.parsed_arguments);
  });
});

describe("Anthropic messages.parse with zodOutputFormat", () => {
  // The SDK moves lengths, ranges and patterns into descriptions before sending, so only schemas whose zod checks
  // survive that are asked for (schemas.ts); it cannot convert a tuple at all.
  const schemas: Record<string, z.ZodType> = { FormatOnlyContact, Ticket, Route };

  it.each(Object.keys(schemas))("%s: parsed_output validates, streamed and not", async (name) => {
    const schema = schemas[name]!;
    const params = {
      model: server.messagesModel,
      max_tokens: 400,
      temperature: 0,
      messages: [{ role: "user" as const, content: `Write one ${name} as JSON.` }],
      output_config: { format: zodOutputFormat(schema) },
    };
    const message = await anthropic.messages.parse(params);
    expect(message.stop_reason).toBe("end_turn");
    expect(message.parsed_output).not.toBeNull();
    expect(schema.safeParse(message.parsed_output).success).toBe(true);
    expect(jsonSchemaErrors(lastSentFormatSchema(), message.parsed_output)).toBeUndefined();

    const streamed = await anthropic.messages.stream(params).finalMessage();
    expect(streamed.parsed_output).toEqual(message.parsed_output);
  });
});

describe("Anthropic beta.messages.toolRunner with betaZodTool", () => {
  it.each([false, true])("stream %s: the thread is refused, the runner goes on with the whole history, and every run gets valid input", async (stream) => {
    const inputs: unknown[] = [];
    const weather = betaZodTool({
      name: "get_weather",
      description: "The forecast for a city",
      inputSchema: WeatherInput,
      run: (input) => {
        inputs.push(input);
        return `sunny in ${input.city} (${inputs.length})`;
      },
    });
    const sentBefore = server.sent.length;
    const runner = anthropic.beta.messages.toolRunner({
      model: server.messagesModel,
      // The beta params have no sampling fields: the server's default temperature samples, and the grammar holds.
      max_tokens: 120,
      messages: [{ role: "user", content: "What is the weather in Oslo?" }],
      tools: [weather],
      // Random weights rarely call a tool, or stop after one, of their own accord.
      tool_choice: { type: "any", disable_parallel_tool_use: true },
      max_iterations: 3,
      stream,
    });
    const messages: Anthropic.Beta.BetaMessage[] = [];
    for await (const turn of runner) messages.push("finalMessage" in turn ? await turn.finalMessage() : turn);

    expect(messages).toHaveLength(3);
    for (const message of messages) {
      expect(message.stop_reason).toBe("tool_use");
      expect(message.content.filter((block) => block.type === "tool_use")).toHaveLength(1);
    }
    expect(inputs.length).toBeGreaterThanOrEqual(2);
    for (const input of inputs) expect(WeatherInput.safeParse(input).success, JSON.stringify(input)).toBe(true);

    // The first request asked for a thread and was refused; each one after it carries the whole conversation.
    const bodies = server.sent.slice(sentBefore).map((sent) => sent.body);
    expect(bodies[0]).toHaveProperty("thread");
    const unthreaded = bodies.filter((body) => body.thread === undefined);
    expect(unthreaded).toHaveLength(3);
    for (const [index, body] of unthreaded.entries()) {
      const history = body.messages as Anthropic.Beta.BetaMessageParam[];
      expect(history).toHaveLength(1 + 2 * index);
      for (const [turn, message] of messages.slice(0, index).entries()) {
        const toolUse = message.content.find((block) => block.type === "tool_use")!;
        const result = history[2 + 2 * turn]!;
        expect(result.role).toBe("user");
        expect(JSON.stringify(result.content)).toContain(toolUse.id);
      }
    }
  });
});
