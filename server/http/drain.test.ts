// A server's drain, in process: it waits for a stream in flight to end, refuses requests that arrive on connections
// already open (503 / 529, Connection: close, in each format's shape) while /health says "draining", refuses new
// connections, closes kept-alive connections (a response in flight's as it ends, idle ones once nothing is in
// flight), and at its timeout or its signal's abort cuts the streams still running and aborts their engine requests.
import { type IncomingHttpHeaders, Agent, request } from "node:http";
import { afterEach, expect, it } from "vitest";
import type { EngineStream } from "../../engine/engine.js";
import type { EngineRequest } from "../../engine/request.js";
import { createEndpoints } from "../adapters/endpoints.js";
import { ModelRegistry } from "../models.js";
import { type LoomServer, startServer } from "../server.js";
import { SCRIPTED_MODEL, ScriptedEngine, engineEvents } from "../testing/scripted-engine.js";
import { LOOM_VERSION } from "../version.js";
import { OpenAccess } from "./auth.js";

/** A scripted engine whose streams hold their finish until `release()` (or their abort). */
class GatedEngine extends ScriptedEngine {
  readonly aborted: string[] = [];
  #release!: () => void;
  #gate = new Promise<void>((resolve) => { this.#release = resolve; });

  release(): void {
    this.#release();
  }

  override submit(request: EngineRequest): EngineStream {
    this.requests.push(request);
    const id = request.id ?? "r";
    const [first, ...rest] = engineEvents({ deltas: ["Hello", " there"] });
    const finish = rest.pop()!;
    const aborted = new Promise<void>((resolve) => { this.#onAbort.set(id, resolve); });
    const gate = this.#gate;
    const held = async function* () {
      yield first!;
      yield* rest;
      const released = await Promise.race([gate.then(() => true), aborted.then(() => false)]);
      yield released ? finish : { ...finish, reason: "aborted" as const };
    };
    return { id, [Symbol.asyncIterator]: held };
  }

  readonly #onAbort = new Map<string, () => void>();

  override abort(id: string): boolean {
    this.aborted.push(id);
    this.#onAbort.get(id)?.();
    return true;
  }
}

let server: LoomServer | undefined;
afterEach(() => server?.close());

async function serve(engine: GatedEngine): Promise<LoomServer> {
  const registry = new ModelRegistry([{ model: SCRIPTED_MODEL, engine, slugs: { openai: ["service/tim-x-27b"], anthropic: ["service/x-marathon"] }, created: 1 }]);
  server = await startServer({ registry, auth: new OpenAccess(), endpoints: createEndpoints(registry) }, "127.0.0.1", 0);
  return server;
}

/** A chat-completions stream, read as it arrives: resolves once its first bytes are in. */
async function openStream(port: number): Promise<{ text(): string; ended: Promise<"ended" | "cut"> }> {
  const response = await fetch(`http://127.0.0.1:${port}/v1/chat/completions`, {
    method: "POST", headers: { "content-type": "application/json" },
    body: JSON.stringify({ model: "service/tim-x-27b", stream: true, messages: [{ role: "user", content: "hi" }] }),
  });
  expect(response.status).toBe(200);
  const reader = response.body!.getReader();
  const decoder = new TextDecoder();
  let text = decoder.decode((await reader.read()).value, { stream: true });
  const ended = (async () => {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return "ended" as const;
      text += decoder.decode(value, { stream: true });
    }
  })().catch(() => "cut" as const);
  return { text: () => text, ended };
}

/** Whether the server closes `agent`'s idle kept-alive socket within a second. */
function closedByServer(agent: Agent): Promise<boolean> {
  const sockets = Object.values(agent.freeSockets).flat();
  if (sockets.length === 0) return Promise.resolve(true);
  return Promise.race([
    Promise.all(sockets.map((socket) => (socket!.destroyed ? undefined : new Promise((resolve) => socket!.once("close", resolve))))).then(() => true),
    new Promise<boolean>((resolve) => setTimeout(() => resolve(false), 1000)),
  ]);
}

/** One request on `agent` (keep-alive, one socket): its status, headers, body, and whether the socket was reused. */
function call(port: number, agent: Agent | false, method: string, path: string, body?: object, headers: Record<string, string> = {}) {
  return new Promise<{ status: number; headers: IncomingHttpHeaders; body: string; reused: boolean }>((resolve, reject) => {
    const req = request({ host: "127.0.0.1", port, method, path, agent, headers: { "content-type": "application/json", ...headers } }, (res) => {
      let text = "";
      res.setEncoding("utf8");
      res.on("data", (chunk: string) => { text += chunk; });
      res.on("end", () => resolve({ status: res.statusCode!, headers: res.headers, body: text, reused: req.reusedSocket }));
    });
    req.on("error", reject);
    req.end(body === undefined ? undefined : JSON.stringify(body));
  });
}

it("waits for a stream in flight to finish, refusing requests on open connections and saying so on /health", async () => {
  const engine = new GatedEngine();
  const { port } = await serve(engine);
  // Connections opened before the drain, kept alive.
  const agents = [0, 1, 2].map(() => new Agent({ keepAlive: true, maxSockets: 1 }));
  for (const agent of agents) expect((await call(port, agent, "GET", "/health")).status).toBe(200);
  const stream = await openStream(port);
  expect(server!.inFlight).toBe(1);

  const drained = server!.drain({ timeoutMs: 60_000 });
  const health = await call(port, agents[0]!, "GET", "/health");
  expect(health.reused).toBe(true);
  expect(health.status).toBe(503);
  expect(JSON.parse(health.body)).toEqual({ status: "draining", models: 1, inFlight: 1, version: LOOM_VERSION });
  // HEAD answers as GET would, without the body.
  const head = await call(port, agents[2]!, "HEAD", "/health");
  expect(head).toMatchObject({ status: 503, body: "", reused: true });
  expect(head.headers["content-length"]).toBe(String(Buffer.byteLength(health.body)));
  expect((await call(port, agents[0]!, "GET", "/metrics")).body).toMatch(/^loom_http_requests_in_flight 2$/m); // the stream and the scrape

  const chat = await call(port, agents[0]!, "POST", "/v1/chat/completions", { model: "service/tim-x-27b", messages: [{ role: "user", content: "hi" }] });
  expect(chat.reused).toBe(true);
  expect(chat.status).toBe(503);
  expect(chat.headers.connection).toBe("close");
  expect(chat.headers["retry-after"]).toBe("1");
  expect(JSON.parse(chat.body).error).toMatchObject({ type: "server_error", code: "server_overloaded", message: expect.stringMatching(/shutting down/) });
  const messages = await call(port, agents[1]!, "POST", "/v1/messages", { model: "service/x-marathon", max_tokens: 5, messages: [{ role: "user", content: "hi" }] }, { "anthropic-version": "2023-06-01" });
  expect(messages.reused).toBe(true);
  expect(messages.status).toBe(529);
  expect(messages.headers.connection).toBe("close");
  expect(JSON.parse(messages.body)).toMatchObject({ type: "error", error: { type: "overloaded_error" } });
  // A new connection is refused: the server no longer listens.
  await expect(call(port, false, "GET", "/health")).rejects.toMatchObject({ code: "ECONNREFUSED" });

  let settled = false;
  void drained.then(() => { settled = true; });
  await new Promise((resolve) => setTimeout(resolve, 50));
  expect(settled).toBe(false); // still waiting for the stream
  engine.release();
  expect(await stream.ended).toBe("ended");
  expect(stream.text()).toMatch(/"finish_reason":"stop"[\s\S]*data: \[DONE\]\s*$/);
  expect(await drained).toEqual({ ended: "idle", cut: 0 });
  expect(engine.aborted).toEqual([]);
  // Nothing in flight any more: the kept-alive connections are closed, not left to take a request refused 503.
  for (const agent of agents) expect(await closedByServer(agent)).toBe(true);
  for (const agent of agents) agent.destroy();
});

it("closes idle kept-alive connections at once when nothing is in flight: the next request goes to a new connection", async () => {
  const { port } = await serve(new GatedEngine());
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  expect((await call(port, agent, "GET", "/health")).status).toBe(200);
  expect(await server!.drain({ timeoutMs: 60_000 })).toEqual({ ended: "idle", cut: 0 });
  expect(await closedByServer(agent)).toBe(true);
  // Not a 503 on the old connection: a new one, refused (the process that replaces this one would take it).
  await expect(call(port, agent, "POST", "/v1/chat/completions", { model: "service/tim-x-27b", messages: [{ role: "user", content: "hi" }] })).rejects.toMatchObject({ code: "ECONNREFUSED" });
  agent.destroy();
});

it("closes the connection of a response in flight when the drain began as that response ends", async () => {
  const engine = new GatedEngine();
  const { port } = await serve(engine);
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const answer = call(port, agent, "POST", "/v1/chat/completions", { model: "service/tim-x-27b", messages: [{ role: "user", content: "hi" }] });
  while (server!.inFlight === 0) await new Promise((resolve) => setTimeout(resolve, 5));
  const drained = server!.drain({ timeoutMs: 60_000 });
  engine.release();
  const answered = await answer;
  expect(answered.status).toBe(200);
  expect(answered.headers.connection).toBe("close");
  expect(await drained).toEqual({ ended: "idle", cut: 0 });
  expect(agent.freeSockets).toEqual({});
  agent.destroy();
});

it("cuts the streams still running when its time is up, aborting their engine requests", async () => {
  const engine = new GatedEngine();
  const { port } = await serve(engine);
  const streams = [await openStream(port), await openStream(port)];
  expect(await server!.drain({ timeoutMs: 100 })).toEqual({ ended: "timeout", cut: 2 });
  for (const stream of streams) {
    // Cut, not finished: the connection dropped before a finish or [DONE].
    await stream.ended;
    expect(stream.text()).not.toContain("[DONE]");
  }
  expect(new Set(engine.aborted).size).toBe(2); // (each request may be aborted more than once)
  expect(server!.inFlight).toBe(0);
});

it("stops waiting at once when its signal aborts (a second SIGTERM)", async () => {
  const engine = new GatedEngine();
  const { port } = await serve(engine);
  const stream = await openStream(port);
  const hurry = new AbortController();
  const drained = server!.drain({ timeoutMs: 60_000, signal: hurry.signal });
  hurry.abort();
  expect(await drained).toEqual({ ended: "stopped", cut: 1 });
  await stream.ended;
  expect(stream.text()).not.toContain("[DONE]");
});

it("ends at once when nothing is in flight", async () => {
  await serve(new GatedEngine());
  expect(await server!.drain({ timeoutMs: 60_000 })).toEqual({ ended: "idle", cut: 0 });
});
