// The AI SDK (`ai` with @ai-sdk/openai-compatible and @ai-sdk/anthropic) against a real loom server on a random-weight
// model: generateText and streamText, generateObject and streamObject with zod schemas (formats, records, tuples,
// optional and nullable members, enums, literal unions, discriminated unions, recursion), and multi-step tool calls.
// The text is gibberish; what must hold is what the grammar guarantees: every object the SDK hands back validates
// against its zod schema (and the JSON Schema the provider sent), and every tool call names a tool with valid input.
import { createAnthropic } from "@ai-sdk/anthropic";
import { createOpenAICompatible } from "@ai-sdk/openai-compatible";
import { type LanguageModel, Output, generateObject, generateText, stepCountIs, streamObject, streamText, tool } from "ai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { Catalog, Contact, FormatOnlyContact, Measurements, Order, Route, Ticket, WeatherInput, jsonSchemaErrors } from "./schemas.js";
import { type ClientTestServer, TEST_KEY, startClientTestServer } from "./test-server.js";

let server: ClientTestServer;
const models: Record<string, () => LanguageModel> = {};

beforeAll(async () => {
  server = await startClientTestServer();
  const compatible = createOpenAICompatible({
    name: "loom",
    baseURL: `${server.base}/v1`,
    apiKey: TEST_KEY,
    supportsStructuredOutputs: true,
    includeUsage: true,
    fetch: server.fetch,
  });
  const anthropic = createAnthropic({ baseURL: `${server.base}/v1`, apiKey: TEST_KEY, fetch: server.fetch });
  models["openai-compatible"] = () => compatible.chatModel(server.chatModel);
  models.anthropic = () => anthropic(server.messagesModel);
});

afterAll(async () => {
  await server?.close();
});

const PROVIDERS = ["openai-compatible", "anthropic"] as const;
const SCHEMAS = { Contact, Measurements, Order, Catalog, Ticket, Route, FormatOnlyContact } as const;
const settings = { temperature: 0, maxRetries: 0, maxOutputTokens: 400 } as const;
/** One call per step (random weights rarely stop after one on their own): each provider's way to say so. */
const oneCallPerStep = { loom: { parallel_tool_calls: false }, anthropic: { disableParallelToolUse: true } };

/** The JSON Schema a request body carried for its answer: response_format, output_config, or the `json` tool. */
function sentSchema(body: Record<string, unknown>): object {
  const responseFormat = body.response_format as { json_schema?: { schema: object } } | undefined;
  if (responseFormat?.json_schema) return responseFormat.json_schema.schema;
  const outputConfig = body.output_config as { format?: { schema: object } } | undefined;
  if (outputConfig?.format) return outputConfig.format.schema;
  const tools = body.tools as Array<{ name: string; input_schema: object }> | undefined;
  const json = tools?.find((candidate) => candidate.name === "json");
  if (json) return json.input_schema;
  throw new Error(`no answer schema in ${JSON.stringify(body).slice(0, 300)}`);
}

/**
 * A value as JSON carries it. A whole Anthropic response hands over a tool's input parsed and written again, a stream
 * the text as generated: a `-0` the grammar allowed reads as 0 one way and -0 the other.
 */
const asJson = (value: unknown): unknown => JSON.parse(JSON.stringify(value));

/** Checks an object against its zod schema and against the JSON Schema the last request sent. */
function expectValidObject(schema: z.ZodType, object: unknown): void {
  const parsed = schema.safeParse(object);
  expect(parsed.success, `${JSON.stringify(object)}: ${parsed.error?.message}`).toBe(true);
  expect(jsonSchemaErrors(sentSchema(server.sent.at(-1)!.body), object)).toBeUndefined();
}

describe.each(PROVIDERS)("%s", (provider) => {
  it("generateText and streamText: text, a finish reason and usage, streamed as generated", async () => {
    const model = models[provider]!();
    const request = { model, system: "Answer briefly.", prompt: "Say hello.", ...settings, maxOutputTokens: 16 };
    const generated = await generateText(request);
    expect(generated.finishReason).toMatch(/^(stop|length)$/);
    expect(generated.usage.outputTokens).toBeGreaterThan(0);
    expect(generated.usage.inputTokens).toBeGreaterThan(0);
    expect(generated.response.modelId).toBe(provider === "anthropic" ? server.messagesModel : server.chatModel);
    // The system prompt (a message, or Anthropic's array of text blocks) reaches the template as one.
    expect(server.engineRequests.at(-1)!.input).toMatchObject({ messages: [{ role: "system", content: "Answer briefly." }, { role: "user", content: "Say hello." }] });
    const streamed = streamText(request);
    const chunks: string[] = [];
    for await (const chunk of streamed.textStream) chunks.push(chunk);
    expect(chunks.join("")).toBe(await streamed.text);
    // Temperature 0: the same tokens both ways.
    expect(await streamed.text).toBe(generated.text);
    expect(await streamed.finishReason).toBe(generated.finishReason);
    expect((await streamed.usage).outputTokens).toBe(generated.usage.outputTokens);
  });

  it.each(["Contact", "Measurements", "Order", "Catalog", "Ticket", "Route"])("generateObject and streamObject: %s validates", async (name) => {
    const schema = SCHEMAS[name as keyof typeof SCHEMAS] as z.ZodType;
    const model = models[provider]!();
    const prompt = `Write one ${name} as JSON.`;
    const generated = await generateObject({ model, schema, prompt, ...settings });
    expectValidObject(schema, generated.object);
    expect(generated.finishReason).toBe("stop");

    const streamed = streamObject({ model, schema, prompt, ...settings });
    const partials: unknown[] = [];
    for await (const partial of streamed.partialObjectStream) partials.push(partial);
    const object = await streamed.object;
    expectValidObject(schema, object);
    expect(partials.length).toBeGreaterThan(0);
    expect(partials.at(-1)).toEqual(object);
    expect(asJson(object)).toEqual(asJson(generated.object));
  });

  it("generateObject with output enum: one of the values", async () => {
    const values = ["red", "green", "blue"];
    const generated = await generateObject({ model: models[provider]!(), output: "enum", enum: values, prompt: "Pick a color.", ...settings });
    expect(values).toContain(generated.object);
  });

  it("tools and structured output in one generateText: a forced call, then the answer as the schema says", async () => {
    const weather = tool({ description: "The weather forecast for a city", inputSchema: WeatherInput, execute: async ({ city }) => `sunny in ${city}` });
    const result = await generateText({
      model: models[provider]!(),
      prompt: "What is the weather in Oslo? Then file a ticket.",
      tools: { weather },
      output: Output.object({ schema: Ticket }),
      stopWhen: stepCountIs(3),
      prepareStep: ({ stepNumber }) => ({ toolChoice: stepNumber === 0 ? "required" : "none" }),
      providerOptions: oneCallPerStep,
      ...settings,
    });
    expect(result.steps.map((step) => step.toolCalls.length)).toEqual([1, 0]);
    expect(WeatherInput.safeParse(result.steps[0]!.toolCalls[0]!.input).success).toBe(true);
    expect(Ticket.safeParse(result.output).success, JSON.stringify(result.output)).toBe(true);
  });

  it("multi-step tool calls: execute gets valid input and each next request carries the results", async () => {
    for (const mode of ["generate", "stream"] as const) {
      const inputs: z.infer<typeof WeatherInput>[] = [];
      const weather = tool({
        description: "The weather forecast for a city",
        inputSchema: WeatherInput,
        execute: async (input) => {
          inputs.push(input);
          return { forecast: `sunny in ${input.city}`, call: inputs.length };
        },
      });
      const engineBefore = server.engineRequests.length;
      const sentBefore = server.sent.length;
      const options = { model: models[provider]!(), prompt: "What is the weather in Oslo?", tools: { weather }, toolChoice: "required", stopWhen: stepCountIs(3), providerOptions: oneCallPerStep, ...settings, maxOutputTokens: 120 } as const;
      let steps;
      if (mode === "generate") {
        steps = (await generateText(options)).steps;
      } else {
        const result = streamText(options);
        const parts: string[] = [];
        for await (const part of result.fullStream) parts.push(part.type);
        expect(parts).toContain("tool-call");
        expect(parts).toContain("tool-result");
        expect(parts).not.toContain("error");
        steps = await result.steps;
      }

      // toolChoice "required": every step calls, so the loop runs until stepCountIs(3) stops it.
      expect(steps).toHaveLength(3);
      const calls = steps.flatMap((step) => step.toolCalls);
      expect(inputs).toHaveLength(calls.length);
      for (const input of inputs) expect(WeatherInput.safeParse(input).success, JSON.stringify(input)).toBe(true);
      for (const step of steps) {
        expect(step.finishReason).toBe("tool-calls");
        expect(step.toolCalls).toHaveLength(1);
        expect(step.toolResults).toHaveLength(1);
        for (const call of step.toolCalls) expect(call.toolName).toBe("weather");
      }

      // On the wire: steps 2 and 3 send the previous calls' results with their ids.
      const bodies = server.sent.slice(sentBefore).map((sent) => sent.body);
      expect(bodies).toHaveLength(3);
      for (const [index, step] of steps.slice(0, 2).entries()) {
        const next = JSON.stringify(bodies[index + 1]);
        for (const call of step.toolCalls) expect(next).toContain(call.toolCallId);
      }
      // In the engine: each result reached the prompt as a tool message.
      const engineRequests = server.engineRequests.slice(engineBefore);
      expect(engineRequests).toHaveLength(3);
      for (const [index, step] of steps.slice(0, 2).entries()) {
        const input = engineRequests[index + 1]!.input;
        if (!("messages" in input)) throw new Error("not a conversation");
        const toolMessages = input.messages.filter((message) => message.role === "tool");
        for (const result of step.toolResults) {
          expect(toolMessages.some((message) => message.content.includes(JSON.stringify(result.output)))).toBe(true);
        }
      }
    }
  });
});

describe("anthropic with structuredOutputMode outputFormat (output_config.format)", () => {
  it.each(["FormatOnlyContact", "Ticket", "Route"])("generateObject and streamObject: %s validates", async (name) => {
    const schema = SCHEMAS[name as keyof typeof SCHEMAS] as z.ZodType;
    const providerOptions = { anthropic: { structuredOutputMode: "outputFormat" as const } };
    const prompt = `Write one ${name} as JSON.`;
    const generated = await generateObject({ model: models.anthropic!(), schema, prompt, providerOptions, ...settings });
    expect(server.sent.at(-1)!.body).toHaveProperty("output_config.format.type", "json_schema");
    expectValidObject(schema, generated.object);
    const streamed = streamObject({ model: models.anthropic!(), schema, prompt, providerOptions, ...settings });
    for await (const _ of streamed.partialObjectStream); // the object resolves once the stream is read
    expectValidObject(schema, await streamed.object);
    expect(asJson(await streamed.object)).toEqual(asJson(generated.object));
  });
});
