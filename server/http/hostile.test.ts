// Hostile input against the HTTP layer, on raw sockets where framing is concerned: nothing a client sends may end the
// process or hold memory for long, and one request's failure never fails another's. A scripted engine stands in for
// the model (these are the HTTP layer's rules; the engine's are tested against real models elsewhere).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EngineError } from "../../engine/request.js";
import { createEndpoints } from "../adapters/endpoints.js";
import { ModelRegistry } from "../models.js";
import { SCRIPTED_MODEL, SCRIPTED_PROMPT_TOKENS, ScriptedEngine } from "../testing/scripted-engine.js";
import { rawExchange, rawRequest } from "../testing/raw-http.js";
import { type LoomServer, type ServerOptions, startServer } from "../server.js";
import { OpenAccess, StaticKeys } from "./auth.js";
import type { WireEndpoint } from "./endpoint.js";
import type { ServerLog } from "./log.js";
import { UWS_HEADERS_PARSE_BYTES } from "./uws.js";

const CHAT = "service/tim-x-27b";
const MESSAGES = "service/x-marathon";
const KEY = "sk-hostile";

/** A log that keeps what it is told. */
class MemoryLog implements ServerLog {
  readonly lines: Array<{ requestId: string; route: string; message: string }> = [];
  requestError(requestId: string, route: string, error: unknown): void {
    this.lines.push({ requestId, route, message: error instanceof Error ? error.message : String(error) });
  }
}

class AbortThrowingEngine extends ScriptedEngine {
  override abort(): boolean {
    throw new Error("abort handler exploded");
  }
}

const engine = new ScriptedEngine();
const registry = new ModelRegistry([{ model: SCRIPTED_MODEL, engine, slugs: { openai: [CHAT], anthropic: [MESSAGES] }, created: 1_700_000_000 }]);
const servers: LoomServer[] = [];
afterAll(() => { for (const server of servers) server.close(); });

async function serve(options: Partial<ServerOptions> = {}): Promise<{ port: number; log: MemoryLog; url: string }> {
  const log = new MemoryLog();
  const server = await startServer({ registry, auth: new OpenAccess(), endpoints: createEndpoints(registry), log, ...options }, "127.0.0.1", 0);
  servers.push(server);
  return { port: server.port, log, url: `http://127.0.0.1:${server.port}` };
}

const chatBody = (extra: object = {}) => JSON.stringify({ model: CHAT, messages: [{ role: "user", content: "hi" }], max_tokens: 5, ...extra });
const json = { "content-type": "application/json" };

describe("nothing a client sends ends the process", () => {
  it("answers a malformed percent-escape in a model id with 400, with keys on and off", async () => {
    const open = await serve();
    const keyed = await serve({ auth: new StaticKeys([KEY]) });
    for (const path of ["/v1/models/%ZZ", "/v1/models/%E0%A4%A", "/v1/models/%ED%A0%80"]) {
      const response = await fetch(`${open.url}${path}`);
      expect(response.status, path).toBe(400);
      expect((await response.json()).error.param).toBe("model");
      expect((await fetch(`${keyed.url}${path}`)).status).toBe(401);
      expect((await fetch(`${keyed.url}${path}`, { headers: { authorization: `Bearer ${KEY}` } })).status).toBe(400);
    }
    expect((await fetch(`${open.url}/health`)).status).toBe(200);
  });

  it("turns an exception in a handler into that request's 500, logged with its request id, and serves the next", async () => {
    const [openai] = createEndpoints(registry);
    const exploding: WireEndpoint = { ...openai, path: "/v1/explode", parse: () => { throw new TypeError("parser exploded"); } };
    const { url, log } = await serve({ endpoints: [...createEndpoints(registry), exploding] });
    const response = await fetch(`${url}/v1/explode`, { method: "POST", headers: json, body: chatBody() });
    expect(response.status).toBe(500);
    const requestId = response.headers.get("x-request-id")!;
    expect(requestId).toMatch(/^req_[0-9a-f]{24}$/);
    expect((await response.json()).error.message).toContain(requestId);
    expect(log.lines).toContainEqual({ requestId, route: "/v1/explode", message: "parser exploded" });
    expect((await fetch(`${url}/v1/chat/completions`, { method: "POST", headers: json, body: chatBody() })).status).toBe(200);
  });

  it("cuts a stream whose encoder throws after it started, logs it, and keeps serving", async () => {
    const [openai] = createEndpoints(registry);
    const cutting: WireEndpoint = {
      ...openai,
      path: "/v1/cut",
      stream: (meta, request) => {
        const encoder = openai.stream(meta, request);
        return { event: (event) => { if (event.type === "text") throw new RangeError("encoder exploded"); return encoder.event(event); } };
      },
    };
    const { port, url, log } = await serve({ endpoints: [...createEndpoints(registry), cutting] });
    engine.script = { deltas: ["Hello", " world"] };
    const body = chatBody({ stream: true });
    const exchange = await rawExchange(port, rawRequest("POST", "/v1/cut", { ...json, "content-length": String(Buffer.byteLength(body)) }, body));
    expect(exchange.responses[0]?.status).toBe(200);
    expect(exchange.closed).toBe(true);
    expect(log.lines.map((line) => line.message)).toContain("encoder exploded");
    expect((await fetch(`${url}/v1/chat/completions`, { method: "POST", headers: json, body: chatBody() })).status).toBe(200);
  });

  it("counts a stream that fails before its first write as the 500 it answers, not also as a 200", async () => {
    const [openai] = createEndpoints(registry);
    const failing: WireEndpoint = { ...openai, path: "/v1/fail-first", stream: () => ({ event: () => { throw new RangeError("first frame exploded"); } }) };
    const { url } = await serve({ endpoints: [...createEndpoints(registry), failing] });
    engine.script = { deltas: ["Hello"] };
    expect((await fetch(`${url}/v1/fail-first`, { method: "POST", headers: json, body: chatBody({ stream: true }) })).status).toBe(500);
    const metrics = await (await fetch(`${url}/metrics`)).text();
    expect(metrics).toMatch(/loom_http_requests_total\{route="\/v1\/fail-first",status="500"\} 1/);
    expect(metrics).not.toMatch(/route="\/v1\/fail-first",status="200"/);
  });

  it("survives an abort handler that throws when the client leaves mid-stream", async () => {
    const throwing = new AbortThrowingEngine();
    throwing.script = { deltas: ["a", "b"], pauseBeforeFinishMs: 500 };
    const throwingRegistry = new ModelRegistry([{ model: SCRIPTED_MODEL, engine: throwing, slugs: { openai: [CHAT], anthropic: [MESSAGES] }, created: 1 }]);
    const { url, log } = await serve({ registry: throwingRegistry, endpoints: createEndpoints(throwingRegistry) });
    const controller = new AbortController();
    const response = await fetch(`${url}/v1/chat/completions`, { method: "POST", headers: json, body: chatBody({ stream: true }), signal: controller.signal });
    await response.body!.getReader().read();
    controller.abort();
    await new Promise((resolve) => setTimeout(resolve, 700));
    expect(log.lines.map((line) => line.message)).toContain("abort handler exploded");
    expect((await fetch(`${url}/health`)).status).toBe(200);
  });

  it("logs an engine's internal error with the request id, as a 500 and as a stream's error event", async () => {
    const { url, log } = await serve();
    engine.script = { deltas: ["partial"], failWith: new EngineError("internal", "the model step failed: device lost") };
    const whole = await fetch(`${url}/v1/chat/completions`, { method: "POST", headers: json, body: chatBody() });
    // The text came first, so the status was already decided: non-streamed answers still hold it until the end.
    expect(whole.status).toBe(500);
    expect(log.lines.at(-1)).toMatchObject({ requestId: whole.headers.get("x-request-id"), message: expect.stringContaining("device lost") });
    const streamed = await fetch(`${url}/v1/chat/completions`, { method: "POST", headers: json, body: chatBody({ stream: true }) });
    expect(await streamed.text()).toContain("device lost");
    expect(log.lines.at(-1)).toMatchObject({ requestId: streamed.headers.get("x-request-id") });
    engine.script = { deltas: [] };
  });
});

describe("request bodies: bounded in size, time and in total", () => {
  it("refuses a declared Content-Length over the limit at once, and closes the connection", async () => {
    const { port } = await serve({ maxBodyBytes: 4096 });
    const exchange = await rawExchange(port, rawRequest("POST", "/v1/chat/completions", { ...json, "content-length": "100000" }, "{"));
    expect(exchange.responses[0]?.status).toBe(413);
    expect(exchange.closed).toBe(true);
  });

  /** One chunk of a chunked body. */
  const chunk = (text: string) => `${Buffer.byteLength(text).toString(16)}\r\n${text}\r\n`;
  const chunked = { ...json, "transfer-encoding": "chunked" };

  it("counts a chunked body (no Content-Length) as it arrives: up to the limit it is served, a byte over it is 413", async () => {
    const { port } = await serve({ maxBodyBytes: 4096 });
    // A chat body padded with spaces to exactly 4,096 bytes, and to 4,097, each sent as 1 KiB chunks.
    const padded = (bytes: number) => chatBody() + " ".repeat(bytes - Buffer.byteLength(chatBody()));
    const chunks = (text: string) => (text.match(/[^]{1,1024}/g) ?? []).map(chunk).join("");
    const atLimit = await rawExchange(port, rawRequest("POST", "/v1/chat/completions", chunked, `${chunks(padded(4096))}0\r\n\r\n`));
    expect(atLimit.responses.map((response) => response.status)).toEqual([200]);
    const over = await rawExchange(port, rawRequest("POST", "/v1/chat/completions", chunked, `${chunks(padded(4097))}0\r\n\r\n`));
    expect(over.responses.map((response) => response.status)).toEqual([413]);
    expect(JSON.parse(over.responses[0].body)).toMatchObject({ error: { type: "request_too_large", message: expect.stringContaining("4096 bytes") } });
    expect(over.closed).toBe(true);
  });

  it("refuses a chunked body past the limit while it is still arriving, without waiting for its end, and serves its neighbours", async () => {
    // A body timeout far longer than the exchange: a server that buffered up to the last chunk would say nothing.
    const { port, url } = await serve({ maxBodyBytes: 4096, maxBufferedBodyBytes: 12 * 1024, bodyTimeoutSeconds: 60 });
    // 16 chunks of 1 KiB and no last (zero-length) chunk: the body never ends.
    const endless = rawExchange(port, rawRequest("POST", "/v1/chat/completions", chunked, chunk("x".repeat(1024)).repeat(16)), { quietMs: 2000 });
    // A neighbour on its own connection while that body is being refused, and one after.
    const during = fetch(`${url}/v1/chat/completions`, { method: "POST", headers: json, body: chatBody() });
    const refused = await endless;
    expect(refused.responses.map((response) => response.status)).toEqual([413]);
    expect(refused.closed).toBe(true);
    expect((await during).status).toBe(200);
    // The 4 KiB the refused body held went back to the server-wide budget of 12 KiB: three stalled bodies of 4,000
    // bytes (12,000 of 12,288) are all still being read, none refused as overload.
    const stalled = await Promise.all([0, 1, 2].map(() => rawExchange(port, rawRequest("POST", "/v1/chat/completions", { ...json, "content-length": "4096" }, "x".repeat(4000)), { quietMs: 600 })));
    expect(stalled.map((exchange) => exchange.responses)).toEqual([[], [], []]);
    expect((await fetch(`${url}/v1/chat/completions`, { method: "POST", headers: json, body: chatBody() })).status).toBe(200);
  });

  it("takes a body that lies about its length (more bytes than its Content-Length) as no more than the bytes declared", async () => {
    const { port, url } = await serve({ maxBodyBytes: 4096 });
    // The declared bytes are a whole chat request; what follows them is read as the next request's head, never as
    // body: 32 KiB of it is more head than uWebSockets.js parses (431, and the connection closed); a short line is
    // not a request it answers. Neither reaches a handler as body (no 413, and the chat request's JSON parses).
    const body = chatBody();
    const lying = (tail: string) => rawExchange(port, rawRequest("POST", "/v1/chat/completions", { ...json, "content-length": String(Buffer.byteLength(body)) }, body + tail));
    const long = await lying("x".repeat(UWS_HEADERS_PARSE_BYTES));
    expect(long.responses.map((response) => response.status).filter((status) => status !== 200)).toEqual([431]);
    expect(long.closed).toBe(true);
    const short = await lying(`${"x".repeat(100)}\r\n\r\n`);
    expect(short.responses.map((response) => response.status)).toEqual([200]);
    expect(JSON.parse(short.responses[0].body)).toMatchObject({ object: "chat.completion", model: CHAT });
    expect((await fetch(`${url}/v1/chat/completions`, { method: "POST", headers: json, body })).status).toBe(200);
  });

  it("answers a body that stops arriving with 408 after the timeout, and closes the connection", async () => {
    const { port } = await serve({ bodyTimeoutSeconds: 0.3 });
    const exchange = await rawExchange(port, rawRequest("POST", "/v1/chat/completions", { ...json, "content-length": "200" }, '{"model":'));
    expect(exchange.responses[0]?.status).toBe(408);
    expect(exchange.closed).toBe(true);
  });

  it("answers 503 (chat completions) or 529 (messages) once the server-wide body budget is full, and gets it back", async () => {
    const { port } = await serve({ maxBodyBytes: 48 * 1024, maxBufferedBodyBytes: 64 * 1024, bodyTimeoutSeconds: 5 });
    const stalled = (path: string) => rawExchange(port, rawRequest("POST", path, { ...json, "content-length": String(45 * 1024) }, "x".repeat(40 * 1024)), { quietMs: 800 });
    const [first, second] = await Promise.all([stalled("/v1/chat/completions"), (async () => {
      await new Promise((resolve) => setTimeout(resolve, 200));
      return stalled("/v1/messages");
    })()]);
    // One of them holds 40 KiB; the other cannot fit its 40 KiB into the 24 KiB left.
    const statuses = [first.responses[0]?.status, second.responses[0]?.status];
    expect(statuses).toContain(529);
    const refused = second.responses[0]?.status === 529 ? second : first;
    expect(refused.closed).toBe(true);
    expect(refused.responses[0].headers["retry-after"]).toBe("1");
    // Both clients are gone now (the read stopped): the budget is whole again.
    const after = await rawExchange(port, rawRequest("POST", "/v1/chat/completions", { ...json, "content-length": String(Buffer.byteLength(chatBody())) }, chatBody()));
    expect(after.responses[0]?.status).toBe(200);
    const overloaded = await rawExchange(port, rawRequest("POST", "/v1/chat/completions", { ...json, "content-length": String(45 * 1024) }, "x".repeat(40 * 1024)), { quietMs: 400 });
    expect(overloaded.responses).toEqual([]); // alone, it fits: it waits for the rest of its body
  });
});

describe("ambiguous framing is refused, never guessed", () => {
  const body = chatBody();
  const length = String(Buffer.byteLength(body));
  it.each([
    ["two Content-Length headers", { ...json, "content-length": [length, length] }, 400],
    ["Content-Length beside Transfer-Encoding", { ...json, "content-length": length, "transfer-encoding": "chunked" }, 400],
    ["a transfer coding other than chunked", { ...json, "transfer-encoding": "gzip" }, 501],
    ["chunked with another coding", { ...json, "transfer-encoding": "chunked, identity" }, 501],
  ])("%s", async (_name, headers, status) => {
    const { port } = await serve();
    const exchange = await rawExchange(port, rawRequest("POST", "/v1/chat/completions", headers, body));
    // uWebSockets.js may refuse some of these itself (400 and a closed connection); what it passes on, loom refuses.
    expect(exchange.responses.length).toBeLessThanOrEqual(1);
    if (exchange.responses.length === 1) expect([status, 400]).toContain(exchange.responses[0].status);
    expect(exchange.closed).toBe(true);
  });
});

describe("HTTP parsing (uWebSockets.js as the build in use parses it; what it cannot do is in docs/api/limits.md)", () => {
  it("closes a connection whose request head stopped arriving, and an idle keep-alive one, after about 10 s", async () => {
    const { port } = await serve();
    const started = Date.now();
    // Read until the server closes, or 20 s pass without a byte (then closed is false).
    const [stalled, idle] = await Promise.all([
      rawExchange(port, "GET /hea", { quietMs: 20_000 }),
      rawExchange(port, rawRequest("GET", "/health"), { quietMs: 20_000 }),
    ]);
    expect(stalled.closed).toBe(true);
    expect(stalled.responses).toEqual([]);
    expect(idle.responses.map((response) => response.status)).toEqual([200]);
    expect(idle.closed).toBe(true);
    expect(Date.now() - started).toBeLessThan(20_000);
  }, 30_000);

  it("answers HTTP/1.0 with 505 at once instead of hanging", async () => {
    const { port } = await serve();
    const exchange = await rawExchange(port, "GET /health HTTP/1.0\r\n\r\n");
    expect(exchange.responses[0]?.status).toBe(505);
    expect(exchange.closed).toBe(true);
  });

  it("serves up to 100 header lines and 16 KiB of them (x402 payment headers run to 4 KiB), and answers more with 431 at once", async () => {
    const { port } = await serve();
    const lines = (count: number) => Object.fromEntries(Array.from({ length: count }, (_, i) => [`x-h${i}`, "v"]));
    expect((await rawExchange(port, rawRequest("GET", "/health", lines(64)))).responses[0]?.status).toBe(200);
    expect((await rawExchange(port, rawRequest("GET", "/health", lines(120)))).responses[0]?.status).toBe(431);
    expect((await rawExchange(port, rawRequest("GET", "/health", { "payment-signature": "a".repeat(12_000) }))).responses[0]?.status).toBe(200);
    // Up to twice the limit, loom answers: a 431 in the route's JSON error shape, naming the size and the limit, and
    // the connection closed. Past that, uWebSockets.js answers its own (HTML) 431 before any handler runs.
    for (const size of [17_000, 20_000, 32_000]) {
      const exchange = await rawExchange(port, rawRequest("POST", "/v1/chat/completions", { ...json, "x-big": "a".repeat(size) }, chatBody()));
      const [response] = exchange.responses;
      expect({ status: response?.status, type: response?.headers["content-type"] }).toEqual({ status: 431, type: "application/json" });
      expect(JSON.parse(response!.body)).toEqual({ error: { message: expect.stringMatching(/^the request's headers take \d+ bytes; the limit is 16384 \(all header lines together\)$/), type: "invalid_request_error", param: null, code: "headers_too_large" } });
      expect(exchange.closed).toBe(true);
    }
    expect((await rawExchange(port, rawRequest("GET", "/health", { "x-big": "a".repeat(16_300) }))).responses[0]?.status).toBe(200);
    expect((await rawExchange(port, rawRequest("GET", "/health", { "x-big": "a".repeat(100_000) }))).responses[0]?.status).toBe(431);
  });

  it("answers a known route's other methods with 405 and Allow (HEAD without a body), and an unknown route with 404", async () => {
    const { port } = await serve();
    const head = await rawExchange(port, rawRequest("HEAD", "/v1/messages"));
    expect(head.responses[0]).toMatchObject({ status: 405, headers: { allow: "POST" } });
    expect(head.raw.endsWith("\r\n\r\n")).toBe(true);
    expect((await rawExchange(port, rawRequest("DELETE", "/health"))).responses[0]).toMatchObject({ status: 405, headers: { allow: "GET, HEAD" } });
    const options = await rawExchange(port, rawRequest("OPTIONS", "/v1/messages"));
    expect(options.responses[0]).toMatchObject({ status: 405, headers: { allow: "POST" } });
    expect(JSON.parse(options.responses[0].body)).toMatchObject({ type: "error", error: { type: "invalid_request_error" } });
    expect((await rawExchange(port, rawRequest("GET", "/v2/anything"))).responses[0]?.status).toBe(404);
  });

  it("answers HEAD on every GET route as the GET would, without the body, and keeps the connection", async () => {
    const open = await serve();
    const keyed = await serve({ auth: new StaticKeys([KEY]) });
    for (const [port, path, status] of [[open.port, "/v1/models", 200], [open.port, `/v1/models/${CHAT}`, 200], [open.port, "/v1/models/nope", 404], [keyed.port, "/v1/models", 401]] as const) {
      const get = (await rawExchange(port, rawRequest("GET", path))).responses[0]!;
      // A HEAD and a GET pipelined on one connection: the HEAD's head carries the GET's length and is followed at
      // once by the GET's answer, so no body went out for it and the connection stayed open.
      const exchange = await rawExchange(port, rawRequest("HEAD", path) + rawRequest("GET", path));
      const answers = exchange.raw.split(/(?=HTTP\/1\.1 \d{3} )/);
      expect(answers, path).toHaveLength(2);
      expect(answers[0]).toMatch(new RegExp(`^HTTP/1\\.1 ${status} `));
      expect(answers[0]!.endsWith("\r\n\r\n")).toBe(true);
      expect(answers[0]!.toLowerCase()).toContain(`\r\ncontent-length: ${Buffer.byteLength(get.body)}\r\n`);
      expect(answers[0]!.toLowerCase()).toContain(`\r\ncontent-type: ${get.headers["content-type"]}\r\n`);
      expect(answers[1]).toMatch(new RegExp(`^HTTP/1\\.1 ${status} `));
      expect(exchange.closed).toBe(false);
    }
    // Refusals too (the guard's, the catch-all's): a head without its body. Refused for its framing, the answer
    // closes the connection (uWS then writes the length 0 itself).
    for (const [request, status] of [[rawRequest("HEAD", "/health", { "x-big": "a".repeat(17_000) }), 431], [rawRequest("HEAD", "/nope"), 404]] as const) {
      const refused = await rawExchange(open.port, request);
      expect(refused.raw).toMatch(new RegExp(`^HTTP/1\\.1 ${status} [^]*\\r\\n\\r\\n$`));
      expect(refused.closed).toBe(true);
    }
  });

  it("closes the connection when it refuses a body it did not read (wrong content type)", async () => {
    const { port } = await serve();
    const exchange = await rawExchange(port, rawRequest("POST", "/v1/chat/completions", { "content-type": "text/plain", "content-length": "99999999999" }, "x"));
    expect(exchange.responses[0]?.status).toBe(400);
    expect(exchange.closed).toBe(true);
  });

  it("refuses a non-numeric Content-Length", async () => {
    const { port } = await serve();
    const exchange = await rawExchange(port, rawRequest("POST", "/v1/chat/completions", { ...json, "content-length": "+7" }, "{}"));
    expect(exchange.responses[0]?.status).toBe(400);
    expect(exchange.closed).toBe(true);
  });
});

describe("requests smuggled behind a refused one", () => {
  const body = chatBody();
  const length = String(Buffer.byteLength(body));
  const smuggled = rawRequest("GET", "/v1/models");
  it.each(["/health", "/metrics", "/v1/models", `/v1/models/${encodeURIComponent(CHAT)}`])("are never served behind a GET %s with two Content-Lengths", async (path) => {
    const { port } = await serve();
    const exchange = await rawExchange(port, rawRequest("GET", path, { "content-length": ["0", String(Buffer.byteLength(smuggled))] }) + smuggled);
    // The refusal goes out on the next turn; with the second request already there, uWS closes first: either way
    // nothing behind the refused request is served.
    expect(exchange.responses.map((response) => response.status).filter((status) => status !== 400)).toEqual([]);
    expect(exchange.closed).toBe(true);
    const alone = await rawExchange(port, rawRequest("GET", path, { "content-length": ["0", "0"] }));
    expect(alone.responses.map((response) => response.status)).toEqual([400]);
  });

  it.each([
    ["two Content-Length headers", { ...json, "content-length": [length, length] }],
    ["a transfer coding other than chunked", { ...json, "transfer-encoding": "gzip" }],
    ["an unknown route", { ...json, "content-length": length }],
  ])("are never served: %s", async (_name, headers) => {
    const { port } = await serve();
    const path = _name === "an unknown route" ? "/v1/nowhere" : "/v1/chat/completions";
    const exchange = await rawExchange(port, rawRequest("POST", path, headers, body) + smuggled);
    expect(exchange.responses.map((response) => response.status)).not.toContain(200);
    expect(exchange.closed).toBe(true);
  });
});

describe("routes both formats share, and Anthropic's own", () => {
  it("lists models in Anthropic's shape for a request with anthropic-version, paged", async () => {
    const { url } = await serve();
    const headers = { "anthropic-version": "2023-06-01" };
    const page = await (await fetch(`${url}/v1/models?limit=1`, { headers })).json();
    expect(page).toEqual({ data: [{ type: "model", id: CHAT, display_name: CHAT, created_at: "2023-11-14T22:13:20.000Z", capabilities: { image_input: { supported: false } } }], has_more: true, first_id: CHAT, last_id: CHAT });
    const next = await (await fetch(`${url}/v1/models?limit=5&after_id=${encodeURIComponent(CHAT)}`, { headers })).json();
    // The model's aliases (its own name, the scripted model's path, and `default`) follow its slugs.
    expect(next).toMatchObject({ data: [{ id: MESSAGES }, { id: "scripted" }, { id: "default" }], has_more: false });
    const one = await (await fetch(`${url}/v1/models/${encodeURIComponent(MESSAGES)}`, { headers })).json();
    expect(one).toMatchObject({ type: "model", id: MESSAGES });
    const bad = await fetch(`${url}/v1/models?limit=0`, { headers });
    expect(bad.status).toBe(400);
    expect(await bad.json()).toMatchObject({ type: "error", error: { type: "invalid_request_error" } });
    const missing = await fetch(`${url}/v1/models/nope`, { headers });
    expect(await missing.json()).toMatchObject({ type: "error", error: { type: "not_found_error" } });
    expect((await (await fetch(`${url}/v1/models`)).json()).object).toBe("list");
  });

  it("counts tokens, and answers errors under /v1/messages in Anthropic's shape", async () => {
    const { url } = await serve();
    const counted = await fetch(`${url}/v1/messages/count_tokens`, { method: "POST", headers: json, body: JSON.stringify({ model: MESSAGES, messages: [{ role: "user", content: "hi" }] }) });
    expect(await counted.json()).toEqual({ input_tokens: SCRIPTED_PROMPT_TOKENS });
    const withMaxTokens = await fetch(`${url}/v1/messages/count_tokens`, { method: "POST", headers: json, body: JSON.stringify({ model: MESSAGES, max_tokens: 5, messages: [{ role: "user", content: "hi" }] }) });
    expect(withMaxTokens.status).toBe(400);
    expect(await withMaxTokens.json()).toMatchObject({ type: "error", error: { message: expect.stringMatching(/^max_tokens: Extra inputs/) } });
    const batches = await fetch(`${url}/v1/messages/batches`, { method: "POST", headers: json, body: "{}" });
    expect(batches.status).toBe(404);
    expect(await batches.json()).toMatchObject({ type: "error", error: { type: "not_found_error" } });
    const wrongMethod = await fetch(`${url}/v1/messages`);
    expect(await wrongMethod.json()).toMatchObject({ type: "error" });
  });
});
