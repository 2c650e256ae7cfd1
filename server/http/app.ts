// The HTTP server on uWebSockets.js: routes, each guarded (guard.ts) so that no exception ends the process. Wire
// formats are WireEndpoints; requests reach engines through generation.ts, and settings live in context.ts.
import type { HttpRequest } from "uWebSockets.js";
import type { ModelRegistry } from "../models.js";
import { ProtocolError } from "../protocol/internal.js";
import { ServerContext, type ServerOptions } from "./context.js";
import type { WireEndpoint } from "./endpoint.js";
import { handleGeneration, handleTokenCount } from "./generation.js";
import { type ErrorResponder, guarded } from "./guard.js";
import { type EngineGauges, Metrics } from "./metrics.js";
import { handleModels } from "./models-route.js";
import { alignTimeouts, describeUwsBuild, loadUws } from "./uws.js";

export { type ServerOptions } from "./context.js";

/** A running server. */
export interface LoomServer {
  readonly port: number;
  readonly metrics: Metrics;
  /** The uWebSockets.js build serving HTTP ("uWebSockets.js v20.49 (uws-pack 20.0.8)"). */
  readonly http: string;
  close(): void;
}

/**
 * Starts listening; resolves with the bound port (pass 0 for any free port).
 * @throws UwsUnavailableError when no uWebSockets.js build loads on this Node.js release and machine; Error when the
 * address cannot be bound.
 */
export async function startServer(options: ServerOptions, host: string, port: number): Promise<LoomServer> {
  const { uws: uWS, build } = await loadUws();
  const context = new ServerContext(options);
  const guard = { log: context.options.log, countStatus: (route: string, status: number) => context.metrics.request(route, status) };
  const app = uWS.App();
  alignTimeouts(app);
  const shapeOf = (endpoint: WireEndpoint) => (): ErrorResponder => endpoint.error;
  const sharedShape = (req: HttpRequest): ErrorResponder => context.endpointFor((name) => req.getHeader(name)).error;

  for (const endpoint of options.endpoints) {
    app.post(endpoint.path, guarded(guard, endpoint.path, shapeOf(endpoint), (connection, req) => handleGeneration(context, endpoint, connection, req)));
    const counter = endpoint.tokenCount;
    if (counter) app.post(counter.path, guarded(guard, counter.path, shapeOf(endpoint), (connection, req) => handleTokenCount(context, endpoint, connection, req)));
  }
  app.get("/v1/models", guarded(guard, "/v1/models", sharedShape, (connection, req) => handleModels(context, connection, req)));
  app.get("/v1/models/*", guarded(guard, "/v1/models", sharedShape, (connection, req) => handleModels(context, connection, req)));
  app.get("/health", guarded(guard, "/health", sharedShape, (connection) => {
    const down = options.registry.entries.filter((entry) => entry.engine.unavailable);
    const models = options.registry.listing().length;
    if (down.length === 0) return connection.sendJson(200, { status: "ok", models });
    const unavailable = down.map((entry) => ({ model: entry.slugs.openai[0] ?? entry.slugs.anthropic[0], error: entry.engine.unavailable?.message }));
    connection.sendJson(503, { status: "unavailable", models, unavailable });
  }));
  app.get("/metrics", guarded(guard, "/metrics", sharedShape, async (connection) => {
    // An engine that cannot answer (unavailable, restarting) is left out of the gauges rather than failing the scrape.
    const settled = await Promise.allSettled(options.registry.entries.map(gaugesOf));
    const gauges = settled.flatMap((result) => (result.status === "fulfilled" ? [result.value] : []));
    connection.send(200, context.metrics.render(gauges), { "content-type": "text/plain; version=0.0.4" });
  }));
  // Anything else: 404, in the Anthropic shape under /v1/messages, else in the shape the headers ask for.
  const anthropic = options.endpoints.find((endpoint) => endpoint.format === "anthropic");
  const unknownRouteShape = (req: HttpRequest): ErrorResponder =>
    anthropic && req.getUrl().startsWith("/v1/messages") ? anthropic.error : sharedShape(req);
  app.any("/*", guarded(guard, "(unknown)", unknownRouteShape, (connection, req) => {
    const method = req.getMethod().toUpperCase();
    const url = req.getUrl();
    const endpoint = anthropic && url.startsWith("/v1/messages") ? anthropic : context.endpointFor((name) => req.getHeader(name));
    const allowed = methodsOf(url);
    const error = allowed
      ? new ProtocolError("method_not_allowed", `${method} is not allowed on ${url}: use ${allowed}`)
      : new ProtocolError("not_found", `no route for ${method} ${url.slice(0, 200)}`);
    const { status, body, headers } = endpoint.error(error);
    context.metrics.request("(unknown)", status);
    const head = allowed ? { ...headers, allow: allowed } : headers;
    // A HEAD response has no body; the connection closes, since a body may follow this request unread.
    if (method === "HEAD") connection.send(status, "", head, true);
    else connection.sendJson(status, body, head, true);
  }));
  /** The methods a known path answers, or undefined for an unknown path. */
  function methodsOf(url: string): string | undefined {
    if (options.endpoints.some((e) => e.path === url || e.tokenCount?.path === url)) return "POST";
    if (url === "/v1/models" || url.startsWith("/v1/models/") || url === "/health" || url === "/metrics") return "GET";
    return undefined;
  }
  return new Promise((resolve, reject) => {
    app.listen(host, port, (token) => {
      if (!token) {
        reject(new Error(`could not listen on ${host}:${port} (address in use or not available)`));
        return;
      }
      resolve({
        port: uWS.us_socket_local_port(token),
        metrics: context.metrics,
        http: describeUwsBuild(build),
        close: () => uWS.us_listen_socket_close(token),
      });
    });
  });
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
