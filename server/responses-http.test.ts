// The Responses API over raw HTTP (fetch, and raw sockets where framing matters) against a real server on the
// random-weight tiny-qwen3 model with stored responses (server/testing/model-server.ts): the typed SSE stream as it
// goes over the wire, function calls streamed under tool_choice "required", validation errors in OpenAI's error shape,
// GET / DELETE / input_items with their ids and paging, methods and hostile bodies, a client that leaves mid-stream,
// previous_response_id continuations (what the engine is given, and the prefix cache reusing the earlier turn), text
// the database cannot hold, an engine thread that dies mid-stream, and, with the platform on, ownership of stored
// responses between organizations and their usage.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { EngineRequest } from "../engine/request.js";
import type { Organization } from "./platform/contract.js";
import { TEST_BACKENDS, freshPlatform } from "./platform/testing/test-databases.js";
import { type ModelServer, startModelServer } from "./testing/model-server.js";
import { rawExchange, rawRequest } from "./testing/raw-http.js";

/** Parsed JSON, read loosely: the shapes are what the assertions check. */
type Json = Record<string, any>;

/** One SSE frame: the `event:` name and the parsed data. */
interface Frame {
  event: string;
  data: Json;
}

/** Parses a Responses stream's text: every frame is exactly `event: <type>\ndata: <json>`, its data's type the event. */
function framesOf(text: string): Frame[] {
  expect(text.endsWith("\n\n")).toBe(true);
  expect(text).not.toContain("[DONE]");
  return text.slice(0, -2).split("\n\n").map((block) => {
    const match = /^event: ([a-z_.]+)\ndata: (\{.*\})$/.exec(block);
    expect(match, block).not.toBeNull();
    const frame = { event: match![1]!, data: JSON.parse(match![2]!) as Json };
    expect(frame.data.type).toBe(frame.event);
    return frame;
  });
}

/** Checks what every stream must be: sequence numbers 0, 1, 2, ...; created and in_progress first; one end last. */
function expectWellFormed(frames: Frame[], ends: readonly string[] = ["response.completed", "response.incomplete"]): Json {
  expect(frames.map((frame) => frame.data.sequence_number)).toEqual(frames.map((_, index) => index));
  expect(frames.slice(0, 2).map((frame) => frame.event)).toEqual(["response.created", "response.in_progress"]);
  expect(ends).toContain(frames.at(-1)!.event);
  return frames.at(-1)!.data.response as Json;
}

/** Expects an OpenAI error body: `{error: {message, type, param, code}}` and nothing else. */
async function expectOpenAiError(response: globalThis.Response, status: number, param: string | null, message?: RegExp): Promise<Json> {
  expect(response.status).toBe(status);
  expect(response.headers.get("content-type")).toMatch(/^application\/json/);
  const body = (await response.json()) as Json;
  expect(Object.keys(body)).toEqual(["error"]);
  expect(Object.keys(body.error).sort()).toEqual(["code", "message", "param", "type"]);
  expect(body.error.param).toBe(param);
  expect(body.error.type).toBe(status >= 500 ? "server_error" : status === 413 ? "request_too_large" : "invalid_request_error");
  if (message) expect(body.error.message).toMatch(message);
  return body.error;
}

/** The messages an engine request was given. */
function messagesOf(request: EngineRequest): Json[] {
  const input = request.input as { messages?: Json[] };
  expect(input.messages, "a messages input").toBeDefined();
  return input.messages!;
}

/** A client of one server and key. */
function clientOf(base: string, key: string) {
  const auth = { authorization: `Bearer ${key}` };
  return {
    post: (body: unknown, signal?: AbortSignal) =>
      fetch(`${base}/v1/responses`, { method: "POST", headers: { ...auth, "content-type": "application/json" }, body: typeof body === "string" ? body : JSON.stringify(body), ...(signal ? { signal } : {}) }),
    get: (path: string) => fetch(`${base}${path}`, { headers: auth }),
    del: (path: string) => fetch(`${base}${path}`, { method: "DELETE", headers: auth }),
  };
}

describe("the Responses API over HTTP", () => {
  let model: ModelServer;
  let client: ReturnType<typeof clientOf>;
  /** The server's error log. */
  const logged: { requestId: string; route: string; message: string }[] = [];
  /** A short, greedy request for the test model. */
  let basic: (extra?: Json) => Json;

  beforeAll(async () => {
    model = await startModelServer({
      responses: true, key: "sk-responses", contextSize: 2048, kvBytes: 64 * 1024 * 1024, engineTestHooks: true,
      server: { log: { requestError: (requestId, route, error) => logged.push({ requestId, route, message: (error as Error).message }) } },
    });
    client = clientOf(model.base, model.key);
    basic = (extra = {}) => ({ model: model.chatModel, input: "Tell me about the storm.", max_output_tokens: 12, temperature: 0, ...extra });
  });

  afterAll(async () => {
    await model?.close();
  });

  describe("streams", () => {
    it("sends typed SSE frames with strictly increasing sequence numbers, ends with the response, and stores it", async () => {
      const response = await client.post(basic({ stream: true }));
      expect(response.status).toBe(200);
      expect(response.headers.get("content-type")).toMatch(/^text\/event-stream/);
      const frames = framesOf(await response.text());
      const final = expectWellFormed(frames);
      expect(final.output.length, "the model wrote something").toBeGreaterThan(0);
      expect(final).toMatchObject({ object: "response", id: expect.stringMatching(/^resp_[0-9a-f]+$/), model: model.chatModel, store: true, usage: { input_tokens: expect.any(Number), output_tokens: expect.any(Number) } });
      expect(final.status).toBe(frames.at(-1)!.event === "response.completed" ? "completed" : "incomplete");
      for (const frame of frames.slice(0, 2)) expect(frame.data.response).toMatchObject({ id: final.id, status: "in_progress", output: [] });
      // Every item announced is in the final response, with the same id at the same index.
      const added = frames.filter((frame) => frame.event === "response.output_item.added");
      expect(added.map((frame) => [frame.data.output_index, frame.data.item.id])).toEqual(final.output.map((item: Json, index: number) => [index, item.id]));
      const text = frames.filter((frame) => frame.event === "response.output_text.delta").map((frame) => frame.data.delta).join("");
      expect(final.output_text).toBe(text);
      // What the engine wrote, exactly (thinking is off: all of it is the answer); the engine request has the response's id.
      expect(text).toBe(model.engine.outputs.get(final.id)!.text);

      const stored = await client.get(`/v1/responses/${final.id}`);
      expect(stored.status).toBe(200);
      expect(await stored.json()).toStrictEqual(final);
    });

    it("streams a forced function call: added, argument deltas, arguments done, item done, then completed", async () => {
      const parameters = { type: "object", properties: { city: { enum: ["Paris", "Rome"] } }, required: ["city"], additionalProperties: false };
      const response = await client.post(basic({
        stream: true,
        input: "Weather in Paris?",
        max_output_tokens: 64,
        temperature: 1,
        tools: [{ type: "function", name: "weather", parameters }],
        tool_choice: "required",
        parallel_tool_calls: false,
      }));
      expect(response.status).toBe(200);
      const frames = framesOf(await response.text());
      const final = expectWellFormed(frames, ["response.completed"]);
      expect(model.engine.requests.at(-1)!.constraint).toMatchObject({ format: { type: "tool_calls", choice: "required" } });
      const calls = final.output.filter((item: Json) => item.type === "function_call");
      expect(calls).toHaveLength(1);
      const call = calls[0];
      expect(call).toMatchObject({ type: "function_call", name: "weather", call_id: expect.stringMatching(/^call_[0-9a-f]{24}$/), status: "completed" });
      expect(["Paris", "Rome"]).toContain(JSON.parse(call.arguments).city);
      const index = final.output.indexOf(call);
      const ofCall = frames.filter((frame) => frame.data.output_index === index);
      const types = ofCall.map((frame) => frame.event);
      expect(types[0]).toBe("response.output_item.added");
      expect(types.slice(-2)).toEqual(["response.function_call_arguments.done", "response.output_item.done"]);
      expect(new Set(types.slice(1, -2))).toEqual(new Set(["response.function_call_arguments.delta"]));
      expect(ofCall.filter((frame) => frame.event === "response.function_call_arguments.delta").map((frame) => frame.data.delta).join("")).toBe(call.arguments);
      expect(ofCall.at(-2)!.data).toMatchObject({ item_id: call.id, name: "weather", arguments: call.arguments });
      expect(ofCall.at(-1)!.data.item).toStrictEqual(call);
    });

    it("serves the next request after a client leaves mid-stream", async () => {
      const controller = new AbortController();
      const response = await client.post(basic({ stream: true, max_output_tokens: 1500, input: "A long story, please." }), controller.signal);
      expect(response.status).toBe(200);
      const reader = response.body!.getReader();
      // The created frame at least.
      const chunk = await reader.read();
      const id = /"id":"(resp_[0-9a-f]+)"/.exec(new TextDecoder().decode(chunk.value))![1]!;
      controller.abort();
      await reader.read().catch(() => undefined);
      const next = await client.post(basic());
      expect(next.status).toBe(200);
      expect(await next.json()).toMatchObject({ object: "response", status: expect.stringMatching(/^(completed|incomplete)$/) });
      const streamed = await client.post(basic({ stream: true }));
      expectWellFormed(framesOf(await streamed.text()));
      // The engine stopped the abandoned request, and it was not stored (it never finished).
      expect(model.engine.outputs.get(id)?.reason).toBe("aborted");
      await expectOpenAiError(await client.get(`/v1/responses/${id}`), 404, "response_id");
    });
  });

  describe("errors in OpenAI's shape", () => {
    it.each([
      [{ input: [] }, "input", /^input must be a string or a non-empty array of input items/],
      [{ stream: true, tools: [{ type: "web_search" }] }, "tools[0].type", /'web_search' is not supported/],
      [{ reasoning: { effort: "max" } }, "reasoning.effort", /^reasoning\.effort must be/],
      [{ text: { format: { type: "json_schema", name: "a" } } }, "text.format.schema", /is required for a json_schema format/],
      [{ input: [{ role: "user", content: [{ type: "input_image", image_url: "https://x/y.png" }] }] }, "input[0].content[0]", /has no vision input: input\[0\]\.content\[0\] is an input_image part/],
      [{ background: true }, "background", /background mode is not supported/],
      [{ include: ["message.input_image.image_url"] }, "include[0]", /is not supported/],
      [{ top_logprobs: 3 }, "top_logprobs", /^top_logprobs needs include/],
      [{ metadata: Object.fromEntries(Array.from({ length: 17 }, (_, i) => [`k${i}`, "v"])) }, "metadata", /at most 16 key-value pairs/],
      [{ input: [{ role: "user", content: "a" }, { type: "function_call_output", call_id: "call_x", output: "1" }] }, "input[1].call_id", /answers no function call/],
      [{ safety_settings: {} }, null, /^Unrecognized request argument supplied: 'safety_settings'$/],
      // An item id the store could not keep is refused up front, not after generating (it was a 502 then).
      [{ input: [{ role: "user", content: "a", id: "" }] }, "input[0].id", /^input\[0\]\.id must be a non-empty string/],
    ])("answers %j with 400 naming the field, before the engine sees it", async (extra, param, message) => {
      const requests = model.engine.requests.length;
      await expectOpenAiError(await client.post(basic(extra)), 400, param, message);
      expect(model.engine.requests.length).toBe(requests);
    });

    it("names the engine's refusals as this API names the field", async () => {
      const error = await expectOpenAiError(await client.post(basic({ max_output_tokens: 100_000, stream: true })), 400, "max_output_tokens", /max_output_tokens/);
      expect(error.message).toMatch(/100000/);
      await expectOpenAiError(await client.post(basic({ input: "storm ".repeat(3000) })), 400, "input", /^the prompt has more than 2047 tokens/);
    });

    it("fits a long conversation with truncation 'auto', and refuses it with truncation disabled (the default)", async () => {
      const turns = Array.from({ length: 12 }, (_, i) => [
        { role: "user", content: `Question ${i}: ${"what about the storm ".repeat(20)}` },
        { role: "assistant", content: `Answer ${i}: ${"the storm passed over ".repeat(20)}` },
      ]).flat();
      const input = [...turns, { role: "user", content: "And finally?" }];
      await expectOpenAiError(await client.post(basic({ input })), 400, "input", /tokens/);
      const fitted = await client.post(basic({ input, truncation: "auto" }));
      expect(fitted.status).toBe(200);
      expect(model.engine.requests.at(-1)!.enableAutoCompaction).toBe(true);
      expect(((await fitted.json()) as Json).truncation).toBe("auto");
    });

    it("answers an unknown model, and an unknown previous_response_id, with 404", async () => {
      const unknown = await expectOpenAiError(await client.post(basic({ model: "gpt-5" })), 404, "model", /The model 'gpt-5' does not exist/);
      expect(unknown.code).toBe("model_not_found");
      await expectOpenAiError(await client.post(basic({ previous_response_id: "resp_0123456789abcdef" })), 404, "previous_response_id", /Previous response with id 'resp_0123456789abcdef' not found/);
    });

    it("answers a missing key with 401", async () => {
      const response = await fetch(`${model.base}/v1/responses`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(basic()) });
      expect(response.status).toBe(401);
      expect((await fetch(`${model.base}/v1/responses/resp_0123`)).status).toBe(401);
    });

    it("answers malformed JSON and a non-object body with 400, and an oversized body with 413, as the other endpoints", async () => {
      await expectOpenAiError(await client.post("{not json"), 400, null, /^the body is not valid JSON/);
      await expectOpenAiError(await client.post("[1, 2]"), 400, null, /^The request body must be a JSON object, got an array of 2$/);
      const exchange = await rawExchange(Number(new URL(model.base).port), rawRequest("POST", "/v1/responses", { authorization: `Bearer ${model.key}`, "content-type": "application/json", "content-length": String(64 * 1024 * 1024) }, "{"));
      expect(exchange.responses[0]?.status).toBe(413);
      expect(JSON.parse(exchange.responses[0]!.body)).toMatchObject({ error: { type: "request_too_large" } });
      expect(exchange.closed).toBe(true);
      // Each answered alone: the next request is served.
      expect((await client.post(basic())).status).toBe(200);
    });

    it("answers other methods with 405 and Allow", async () => {
      const put = await fetch(`${model.base}/v1/responses`, { method: "PUT", headers: { authorization: `Bearer ${model.key}` } });
      expect(put.status).toBe(405);
      expect(put.headers.get("allow")).toBe("POST");
      expect(((await put.json()) as Json).error).toMatchObject({ type: "invalid_request_error" });
      const patch = await fetch(`${model.base}/v1/responses/resp_0123`, { method: "PATCH", headers: { authorization: `Bearer ${model.key}` } });
      expect(patch.status).toBe(405);
      expect(patch.headers.get("allow")?.split(", ").sort()).toEqual(["DELETE", "GET", "HEAD"]);
      const post = await fetch(`${model.base}/v1/responses/resp_0123/input_items`, { method: "POST", headers: { authorization: `Bearer ${model.key}` } });
      expect(post.status).toBe(405);
      expect(post.headers.get("allow")).toBe("GET, HEAD");
    });
  });

  describe("stored responses", () => {
    it.each([
      ["a malformed id", "not-a-response"],
      ["an id with a dash", "resp_abc-def"],
      ["an unknown id", "resp_0123456789abcdef0123456789"],
    ])("answers GET, DELETE and input_items of %s with 404", async (_name, id) => {
      for (const response of [await client.get(`/v1/responses/${id}`), await client.del(`/v1/responses/${id}`), await client.get(`/v1/responses/${id}/input_items`)]) {
        await expectOpenAiError(response, 404, "response_id", new RegExp(`^Response with id '${id}' not found$`));
      }
    });

    it("deletes a stored response once: then it is gone", async () => {
      const created = (await (await client.post(basic())).json()) as Json;
      expect((await client.get(`/v1/responses/${created.id}`)).status).toBe(200);
      const deleted = await client.del(`/v1/responses/${created.id}`);
      expect(deleted.status).toBe(200);
      expect(await deleted.json()).toStrictEqual({ id: created.id, object: "response.deleted", deleted: true });
      await expectOpenAiError(await client.del(`/v1/responses/${created.id}`), 404, "response_id");
      await expectOpenAiError(await client.get(`/v1/responses/${created.id}`), 404, "response_id");
      await expectOpenAiError(await client.get(`/v1/responses/${created.id}/input_items`), 404, "response_id");
    });

    it("does not keep a response sent with store: false", async () => {
      const created = (await (await client.post(basic({ store: false }))).json()) as Json;
      expect(created.store).toBe(false);
      await expectOpenAiError(await client.get(`/v1/responses/${created.id}`), 404, "response_id");
      await expectOpenAiError(await client.post(basic({ previous_response_id: created.id })), 404, "previous_response_id");
    });

    it("pages input items by limit, order and after; refuses a bad limit or order and unknown query parameters", async () => {
      const input = ["one", "two", "three", "four", "five"].map((text, index) => ({ id: `msg_${index + 1}`, role: "user", content: text }));
      const created = (await (await client.post(basic({ input }))).json()) as Json;
      const page = async (query: string) => {
        const response = await client.get(`/v1/responses/${created.id}/input_items${query}`);
        expect(response.status, query).toBe(200);
        const body = (await response.json()) as Json;
        return { ...body, ids: body.data.map((item: Json) => item.id) };
      };
      const all = await page("");
      expect(all).toMatchObject({ object: "list", first_id: "msg_5", last_id: "msg_1", has_more: false });
      expect(all.ids).toEqual(["msg_5", "msg_4", "msg_3", "msg_2", "msg_1"]);
      expect(all.data[4]).toStrictEqual({ id: "msg_1", type: "message", role: "user", status: "completed", content: [{ type: "input_text", text: "one" }] });
      expect(await page("?limit=2&order=asc")).toMatchObject({ ids: ["msg_1", "msg_2"], first_id: "msg_1", last_id: "msg_2", has_more: true });
      expect(await page("?limit=2&order=asc&after=msg_2")).toMatchObject({ ids: ["msg_3", "msg_4"], has_more: true });
      expect(await page("?limit=2&order=asc&after=msg_4")).toMatchObject({ ids: ["msg_5"], has_more: false });
      expect(await page("?limit=2&after=msg_4")).toMatchObject({ ids: ["msg_3", "msg_2"], has_more: true });
      expect(await page("?limit=100&order=desc&after=msg_1")).toMatchObject({ ids: [], first_id: null, last_id: null, has_more: false });
      expect(await page("?after=msg_unknown")).toMatchObject({ ids: [], has_more: false });
      expect((await page("?limit=1")).ids).toEqual(["msg_5"]);

      for (const limit of ["0", "101", "abc", "", "-1", "1.5"]) {
        await expectOpenAiError(await client.get(`/v1/responses/${created.id}/input_items?limit=${limit}`), 400, "limit", new RegExp(`^limit must be an integer between 1 and 100, got "${limit.replace(".", "\\.")}"$`));
      }
      await expectOpenAiError(await client.get(`/v1/responses/${created.id}/input_items?order=newest`), 400, "order", /^order must be 'asc' or 'desc', got "newest"$/);
      await expectOpenAiError(await client.get(`/v1/responses/${created.id}/input_items?include=message.input_image.image_url`), 400, "include", /^the query parameter "include" is not supported here: only limit, order, after$/);
      await expectOpenAiError(await client.get(`/v1/responses/${created.id}?stream=true`), 400, "stream", /^the query parameter "stream" is not supported here$/);
      await expectOpenAiError(await client.del(`/v1/responses/${created.id}?force=1`), 400, "force");
      // Still there: a refused delete deletes nothing.
      expect((await client.get(`/v1/responses/${created.id}`)).status).toBe(200);
    });

    it("keeps text with U+0000 and a lone surrogate, as U+FFFD", async () => {
      const response = await client.post(basic({ input: "a\u0000b\ud800c", instructions: "x\u0000y", metadata: { k: "\udc00" } }));
      expect(response.status).toBe(200);
      const created = (await response.json()) as Json;
      // Answered as sent...
      expect(created.instructions).toBe("x\u0000y");
      // ...and stored with the replacement character.
      const stored = (await (await client.get(`/v1/responses/${created.id}`)).json()) as Json;
      expect(stored.instructions).toBe("x\ufffdy");
      expect(stored.metadata).toStrictEqual({ k: "\ufffd" });
      expect({ ...stored, instructions: created.instructions, metadata: created.metadata }).toStrictEqual(created);
      const items = (await (await client.get(`/v1/responses/${created.id}/input_items`)).json()) as Json;
      expect(items.data).toHaveLength(1);
      expect(items.data[0].content).toStrictEqual([{ type: "input_text", text: "a\ufffdb\ufffdc" }]);
      // And continued from.
      expect((await client.post(basic({ input: "more", previous_response_id: created.id }))).status).toBe(200);
    });
  });

  describe("previous_response_id", () => {
    /** A user message long enough to fill a few cache blocks. */
    const story = `Here is a story to remember. ${"The lighthouse keeper counted the ships that passed the rocks at night, and wrote each name in a book. ".repeat(8)}`;

    it("continues a stored response: the earlier turn comes first, its instructions do not, and its prefix is cached", async () => {
      const first = (await (await client.post(basic({ input: story, instructions: "ALWAYS ANSWER IN LATIN." }))).json()) as Json;
      expect(messagesOf(model.engine.requests.at(-1)!)[0]).toStrictEqual({ role: "system", content: "ALWAYS ANSWER IN LATIN." });
      const secondResponse = await client.post(basic({ input: "And then?", previous_response_id: first.id }));
      expect(secondResponse.status).toBe(200);
      const second = (await secondResponse.json()) as Json;
      expect(second.previous_response_id).toBe(first.id);
      expect(second.instructions).toBeNull();

      const answer = first.output.filter((item: Json) => item.type === "message");
      const messages = messagesOf(model.engine.requests.at(-1)!);
      expect(messages.map((message) => ({ role: message.role, content: message.content }))).toStrictEqual([
        { role: "user", content: story },
        ...answer.map((item: Json) => ({ role: "assistant", content: item.content[0].text })),
        { role: "user", content: "And then?" },
      ]);
      expect(JSON.stringify(messages)).not.toContain("LATIN");
      // The first turn's prompt (most of it the story) was reused from the cache, not computed again.
      // (The first may have found a few tokens of the template in the cache: the story itself it had not seen.)
      expect(second.usage.input_tokens_details.cached_tokens - first.usage.input_tokens_details.cached_tokens).toBeGreaterThan(first.usage.input_tokens / 2);
      expect(second.usage.input_tokens).toBeGreaterThan(first.usage.input_tokens);

      // The stored conversation grows: the second response's input items are the first's input, output, and its own.
      const idsOf = (page: Json) => page.data.map((item: Json) => item.id);
      const firstItems = (await (await client.get(`/v1/responses/${first.id}/input_items?order=asc`)).json()) as Json;
      const items = (await (await client.get(`/v1/responses/${second.id}/input_items?order=asc`)).json()) as Json;
      expect(idsOf(items)).toEqual([...idsOf(firstItems), ...first.output.map((item: Json) => item.id), items.data.at(-1).id]);
      expect(items.data.at(-1)).toMatchObject({ type: "message", role: "user", content: [{ type: "input_text", text: "And then?" }] });
    });

    it("continues a streamed response, and answers its function call", async () => {
      const parameters = { type: "object", properties: { city: { enum: ["Paris", "Rome"] } }, required: ["city"], additionalProperties: false };
      const tools = [{ type: "function", name: "weather", parameters }];
      const streamed = await client.post(basic({ stream: true, input: "Weather in Paris?", max_output_tokens: 64, temperature: 1, tools, tool_choice: "required", parallel_tool_calls: false }));
      const first = expectWellFormed(framesOf(await streamed.text()), ["response.completed"]);
      const call = first.output.find((item: Json) => item.type === "function_call");
      const next = await client.post(basic({ previous_response_id: first.id, tools, input: [{ type: "function_call_output", call_id: call.call_id, output: "21 C" }] }));
      expect(next.status).toBe(200);
      const messages = messagesOf(model.engine.requests.at(-1)!);
      expect(messages.at(-2)).toMatchObject({ role: "assistant", tool_calls: [{ id: call.call_id, type: "function", function: { name: "weather", arguments: call.arguments } }] });
      expect(messages.at(-1)).toStrictEqual({ role: "tool", tool_call_id: call.call_id, content: "21 C" });
      // An output that answers another call is refused, naming it.
      await expectOpenAiError(await client.post(basic({ previous_response_id: first.id, tools, input: [{ type: "function_call_output", call_id: "call_other", output: "1" }] })), 400, "input[0].call_id", /'call_other' answers no function call/);
    });

    it("continues a response that the token limit cut inside its reasoning", async () => {
      // A JSON format makes the grammar open the reasoning (random weights never write the think tag themselves).
      const first = (await (await client.post(basic({ reasoning: { effort: "high" }, text: { format: { type: "json_object" } }, max_output_tokens: 4 }))).json()) as Json;
      expect(first.status).toBe("incomplete");
      expect(first.output.map((item: Json) => item.type)).toEqual(["reasoning"]);
      const next = await client.post(basic({ previous_response_id: first.id, input: "Go on." }));
      expect(next.status, JSON.stringify(await next.clone().json())).toBe(200);
      // The cut turn is an assistant turn without text, with the reasoning it had.
      expect(messagesOf(model.engine.requests.at(-1)!).map((message) => [message.role, message.content, message.reasoning_content])).toEqual([
        ["user", "Tell me about the storm.", undefined],
        ["assistant", "", first.output[0].content[0].text],
        ["user", "Go on.", undefined],
      ]);
    });
  });

  it("ends a stream whose engine thread dies with response.failed and an error event", async () => {
    const response = await client.post(basic({ stream: true, max_output_tokens: 400, input: "A long story, please." }));
    expect(response.status).toBe(200);
    const requestId = response.headers.get("x-request-id");
    const decoder = new TextDecoder();
    let text = "";
    let killed = false;
    for await (const chunk of response.body!) {
      text += decoder.decode(chunk as Uint8Array, { stream: true });
      if (!killed && text.includes("event: response.output_text.delta\n")) {
        killed = true;
        model.worker.exitThreadForTesting(42);
      }
    }
    expect(killed, "a text delta came before the thread was ended").toBe(true);
    const frames = framesOf(text);
    expectWellFormed(frames, ["error"]);
    expect(frames.at(-2)!.event).toBe("response.failed");
    expect(frames.at(-2)!.data.response).toMatchObject({ status: "failed", error: { code: "server_error", message: expect.stringContaining("the engine thread stopped") } });
    expect(frames.at(-1)!.data).toMatchObject({ type: "error", code: "server_error", message: expect.stringContaining("the engine thread stopped") });
    expect(logged).toContainEqual({ requestId, route: "/v1/responses", message: expect.stringContaining("the engine thread stopped") });
    // Not stored; and a fresh thread serves the next request.
    await expectOpenAiError(await client.get(`/v1/responses/${frames[0]!.data.response.id}`), 404, "response_id");
    expect((await client.post(basic())).status).toBe(200);
  });
});

const pglite = TEST_BACKENDS.find((backend) => backend.name === "PGlite")!;

describe("stored responses belong to their organization (platform on PGlite)", () => {
  let model: ModelServer;
  let remove: () => Promise<void>;
  let acme: Organization;
  let acmeClient: ReturnType<typeof clientOf>;
  let globexClient: ReturnType<typeof clientOf>;
  const body = (extra: Json = {}) => ({ model: model.chatModel, input: "Tell me about the storm.", max_output_tokens: 8, temperature: 0, ...extra });

  beforeAll(async () => {
    const fresh = await freshPlatform(pglite);
    remove = fresh.remove;
    model = await startModelServer({ responses: true, platform: fresh.options });
    const stores = model.platform!.stores;
    acme = await stores.organizations.create("Acme", { closedBeta: true });
    const globex = await stores.organizations.create("Globex", { closedBeta: true });
    acmeClient = clientOf(model.base, (await stores.keys.create(acme.id, "inference", "app")).key);
    globexClient = clientOf(model.base, (await stores.keys.create(globex.id, "inference", "app")).key);
  }, 120_000);

  afterAll(async () => {
    await model?.close();
    await remove?.();
  });

  it("answers another organization's response id with 404 on GET, DELETE, input_items and as previous_response_id", async () => {
    const created = (await (await acmeClient.post(body())).json()) as Json;
    expect(created.id).toMatch(/^resp_/);
    await expectOpenAiError(await globexClient.get(`/v1/responses/${created.id}`), 404, "response_id");
    await expectOpenAiError(await globexClient.del(`/v1/responses/${created.id}`), 404, "response_id");
    await expectOpenAiError(await globexClient.get(`/v1/responses/${created.id}/input_items`), 404, "response_id");
    await expectOpenAiError(await globexClient.post(body({ previous_response_id: created.id })), 404, "previous_response_id", /belongs to another organization/);
    // Still there for its owner, who can continue it.
    expect(await (await acmeClient.get(`/v1/responses/${created.id}`)).json()).toStrictEqual(created);
    expect((await acmeClient.get(`/v1/responses/${created.id}/input_items`)).status).toBe(200);
    expect((await acmeClient.post(body({ previous_response_id: created.id }))).status).toBe(200);
  });

  it("resolves item references to its own stored items only", async () => {
    const created = (await (await acmeClient.post(body())).json()) as Json;
    const answer = created.output[0] as Json;
    const reference = { input: [{ role: "user", content: "Hi" }, { type: "item_reference", id: answer.id }, { role: "user", content: "And?" }] };
    await expectOpenAiError(await globexClient.post(body(reference)), 404, "input[1].id", /no stored response of this organization holds/);
    const continued = await acmeClient.post(body(reference));
    expect(continued.status).toBe(200);
    const { id } = (await continued.json()) as Json;
    // The referenced item is stored in full with the new response's input, under its own id.
    const items = (await (await acmeClient.get(`/v1/responses/${id}/input_items?order=asc`)).json()) as Json;
    expect(items.data[1]).toStrictEqual(answer);
    // A reference to an item of a deleted response is gone with it.
    expect((await acmeClient.del(`/v1/responses/${created.id}`)).status).toBe(200);
    await expectOpenAiError(await acmeClient.post(body(reference)), 404, "input[1].id");
  });

  it("records usage of Responses requests, streamed and not, for the organization as chat completions do", async () => {
    const usage = model.platform!.stores.usage;
    const totals = async () => (await usage.rows(acme.id)).reduce((sum, row) => ({ requests: sum.requests + row.requests, input: sum.input + row.inputTokens, cached: sum.cached + row.cachedInputTokens, output: sum.output + row.outputTokens }), { requests: 0, input: 0, cached: 0, output: 0 });
    const before = await totals();
    const whole = (await (await acmeClient.post(body())).json()) as Json;
    const streamed = expectWellFormed(framesOf(await (await acmeClient.post(body({ stream: true, input: "Another one." }))).text()));
    const after = await totals();
    const used = [whole.usage, streamed.usage];
    expect(after.requests - before.requests).toBe(2);
    expect(after.input - before.input).toBe(used.reduce((sum, u) => sum + u.input_tokens, 0));
    expect(after.cached - before.cached).toBe(used.reduce((sum, u) => sum + u.input_tokens_details.cached_tokens, 0));
    expect(after.output - before.output).toBe(used.reduce((sum, u) => sum + u.output_tokens, 0));
    const rows = await usage.rows(acme.id);
    expect(new Set(rows.map((row) => row.model))).toEqual(new Set([model.chatModel]));
  });
});
