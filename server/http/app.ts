// The HTTP server on uWebSockets.js: routes, authentication, body limits, overload, streaming with backpressure,
// cancellation on disconnect, and metrics. Wire formats are WireEndpoints; the engine is reached through
// server/protocol/run.ts only.
import { randomBytes } from "node:crypto";
import uWS from "uWebSockets.js";
import type { ModelRegistry } from "../models.js";
import { type InternalEvent, ProtocolError } from "../protocol/internal.js";
import { runRequest } from "../protocol/run.js";
import type { Authenticator } from "./auth.js";
import { readJsonBody } from "./body.js";
import type { CollectedResult, WireEndpoint } from "./endpoint.js";
import { type EngineGauges, Metrics } from "./metrics.js";
import { Connection, EventStream } from "./reply.js";

/** Server settings. */
export interface ServerOptions {
  registry: ModelRegistry;
  auth: Authenticator;
  endpoints: WireEndpoint[];
  /** Largest request body in bytes (default 8 MiB). */
  maxBodyBytes?: number;
  /** Requests allowed to wait per model before new ones get 429/529 (default 256). */
  maxQueue?: number;
  /** Seconds of silence on a stream before a ping (formats that have one; default 10). */
  pingSeconds?: number;
}

/** A running server. */
export interface LoomServer {
  readonly port: number;
  readonly metrics: Metrics;
  close(): void;
}

/** Starts listening; resolves with the bound port (pass 0 for any free port). */
export function startServer(options: ServerOptions, host: string, port: number): Promise<LoomServer> {
  const metrics = new Metrics();
  const app = uWS.App();
  for (const endpoint of options.endpoints) {
    app.post(endpoint.path, (res, req) => handleGeneration(new Connection(res), req, endpoint, options, metrics));
  }
  app.get("/v1/models", (res) => new Connection(res).sendJson(200, { object: "list", data: options.registry.listing().map(modelObject) }));
  app.get("/v1/models/*", (res, req) => {
    const connection = new Connection(res);
    const id = decodeURIComponent(req.getUrl().slice("/v1/models/".length));
    const found = options.registry.listing().find((model) => model.id === id);
    if (found) connection.sendJson(200, modelObject(found));
    else connection.sendJson(404, { error: { message: `The model '${id}' does not exist`, type: "invalid_request_error", param: "model", code: "model_not_found" } });
  });
  app.get("/health", (res) => {
    const down = options.registry.entries.filter((entry) => entry.engine.unavailable);
    if (down.length === 0) {
      new Connection(res).sendJson(200, { status: "ok", models: options.registry.listing().length });
      return;
    }
    const unavailable = down.map((entry) => ({ model: entry.slugs.openai[0] ?? entry.slugs.anthropic[0], error: entry.engine.unavailable?.message }));
    new Connection(res).sendJson(503, { status: "unavailable", models: options.registry.listing().length, unavailable });
  });
  app.get("/metrics", (res) => {
    const connection = new Connection(res);
    // An engine that cannot answer (unavailable, restarting) is left out of the gauges rather than failing the scrape.
    void Promise.allSettled(options.registry.entries.map(gaugesOf)).then((settled) => {
      const gauges = settled.flatMap((result) => (result.status === "fulfilled" ? [result.value] : []));
      connection.send(200, metrics.render(gauges), { "content-type": "text/plain; version=0.0.4" });
    });
  });
  app.any("/*", (res, req) => {
    const connection = new Connection(res);
    connection.sendJson(404, { error: { message: `no route for ${req.getMethod().toUpperCase()} ${req.getUrl()}`, type: "invalid_request_error", param: null, code: null } });
  });
  return new Promise((resolve, reject) => {
    app.listen(host, port, (token) => {
      if (!token) {
        reject(new Error(`could not listen on ${host}:${port} (address in use or not available)`));
        return;
      }
      resolve({ port: uWS.us_socket_local_port(token), metrics, close: () => uWS.us_listen_socket_close(token) });
    });
  });
}

function modelObject(model: { id: string; created: number }) {
  return { id: model.id, object: "model", created: model.created, owned_by: "loom" };
}

async function gaugesOf(entry: ModelRegistry["entries"][number]): Promise<EngineGauges> {
  const stats = await entry.engine.stats();
  return {
    model: entry.slugs.openai[0] ?? entry.slugs.anthropic[0],
    running: stats.running,
    waiting: stats.waiting,
    kvBlocksUsed: stats.kvBlocks.used,
    kvBlocksCached: stats.kvBlocks.cached,
    kvBlocksFree: stats.kvBlocks.free,
    lookups: stats.cache.lookups,
    prefixHits: stats.cache.prefixHits,
    sectionHits: stats.cache.sectionHits,
  };
}

/** One POST to a generation endpoint. NOTE: everything read from `req` is read before the first await. */
function handleGeneration(connection: Connection, req: uWS.HttpRequest, endpoint: WireEndpoint, options: ServerOptions, metrics: Metrics): void {
  const credentials = { authorization: req.getHeader("authorization"), xApiKey: req.getHeader("x-api-key") };
  const contentType = req.getHeader("content-type");
  const fail = (error: ProtocolError) => {
    const { status, body, headers } = endpoint.error(error);
    metrics.request(endpoint.path, status);
    connection.sendJson(status, body, headers);
  };
  const principal = options.auth.authenticate(credentials, endpoint.format);
  if (principal instanceof ProtocolError) {
    connection.res.onData(() => {});
    fail(principal);
    return;
  }
  readJsonBody(connection.res, options.maxBodyBytes ?? 8 * 1024 * 1024, contentType, (body) => {
    if (body instanceof ProtocolError) return fail(body);
    void serve(body).catch((error: unknown) => fail(error instanceof ProtocolError ? error : new ProtocolError("internal", `internal error: ${(error as Error)?.message ?? error}`)));
  });

  async function serve(body: unknown): Promise<void> {
    const request = endpoint.parse(body);
    const served = options.registry.find(request.model, endpoint.format);
    if (!served) throw new ProtocolError("not_found", `The model '${request.model}' does not exist; available: ${options.registry.slugs(endpoint.format).join(", ")}`, "model");
    if (served.engine.queueDepth >= (options.maxQueue ?? 256)) {
      throw new ProtocolError(endpoint.overloadKind, "the server is at capacity: too many requests are waiting; retry shortly", undefined, 2);
    }
    const id = `${endpoint.idPrefix}${randomBytes(12).toString("hex")}`;
    const meta = { id, model: request.model, created: Math.floor(Date.now() / 1000) };
    const started = performance.now();
    const running = runRequest(served.engine, id, request, { defaultMaxTokens: served.model.contextSize });
    connection.onAbort(() => running.abort());
    const events = running[Symbol.asyncIterator]();
    let lastTokenAt: number | undefined;
    const timeTokens = (event: InternalEvent) => {
      if (event.type !== "text" && event.type !== "thinking") return;
      const now = performance.now();
      if (lastTokenAt === undefined) metrics.timeToFirstToken((now - started) / 1000);
      else metrics.interTokenLatency((now - lastTokenAt) / 1000);
      lastTokenAt = now;
    };
    const countFinish = (event: InternalEvent) => {
      if (event.type === "finish") metrics.tokens(event.usage.promptTokens, event.usage.cachedTokens, event.usage.completionTokens);
    };

    // The first event decides the status: a request that fails before it starts gets an HTTP error.
    const first = await events.next();
    if (first.done) return; // aborted by the client
    if (first.value.type === "error") throw first.value.error;

    if (!request.stream) {
      const result: CollectedResult = { thinking: "", text: "", toolCalls: [], finish: undefined as never };
      for (let next: IteratorResult<InternalEvent> = first; !next.done; next = await events.next()) {
        const event = next.value;
        timeTokens(event);
        countFinish(event);
        if (event.type === "error") throw event.error;
        if (event.type === "thinking") result.thinking += event.text;
        else if (event.type === "text") result.text += event.text;
        else if (event.type === "tool_call") result.toolCalls.push({ id: event.id, name: event.name, arguments: event.arguments, argumentsText: event.argumentsText });
        else if (event.type === "finish") result.finish = event;
      }
      if (connection.closed || !result.finish) return;
      metrics.request(endpoint.path, 200);
      connection.sendJson(200, endpoint.respond(meta, result));
      return;
    }

    const stream = new EventStream(connection);
    const encoder = endpoint.stream(meta, request);
    const pingEvery = (options.pingSeconds ?? 10) * 1000;
    const ping = encoder.ping ? setInterval(() => {
      if (performance.now() - stream.lastWriteAt >= pingEvery) void stream.write(encoder.ping!());
    }, Math.min(pingEvery, 1000)) : undefined;
    try {
      metrics.request(endpoint.path, 200);
      for (let next: IteratorResult<InternalEvent> = first; !next.done && !connection.closed; next = await events.next()) {
        timeTokens(next.value);
        countFinish(next.value);
        await stream.write(encoder.event(next.value));
        if (next.value.type === "error") break;
      }
      stream.end();
    } finally {
      if (ping) clearInterval(ping);
      if (connection.aborted) running.abort();
    }
  }
}
