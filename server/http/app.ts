// The HTTP server on uWebSockets.js: the mechanism every surface shares. Surfaces (server/inference, server/platform,
// ...) register their routes in a route table (routes.ts), each guarded (guard.ts) so that no exception ends the
// process; a catch-all answers the rest with 405 or 404 in the shape of the surface that owns the path.
import type { HttpRequest } from "uWebSockets.js";
import { ProtocolError } from "../protocol/internal.js";
import { ServerContext, type ServerOptions } from "./context.js";
import type { DrainOptions, DrainOutcome } from "./drain.js";
import type { ErrorResponder } from "./guard.js";
import { guarded } from "./guard.js";
import type { Metrics } from "./metrics.js";
import { Routes, type Surface } from "./routes.js";
import { alignTimeouts, bindApp, describeUwsBuild, loadUws } from "./uws.js";

export { type ServerOptions } from "./context.js";

/** A running server. */
export interface LoomServer {
  readonly port: number;
  readonly metrics: Metrics;
  /** The uWebSockets.js build serving HTTP ("uWebSockets.js v20.49 (uws-pack 20.0.8)"). */
  readonly http: string;
  /** HTTP requests being answered now (a stream until its last event). */
  readonly inFlight: number;
  /**
   * A graceful stop: stops listening (new connections are refused), answers requests that arrive on open connections
   * with 503 / 529 and `Connection: close` (but /health, which answers 503 "draining", and /metrics), and waits for
   * the requests in flight to end, up to the timeout or the signal's abort; then drops those still running (see
   * InFlightRequests.drain). Call it once.
   */
  drain(options: DrainOptions): Promise<DrainOutcome>;
  /** Stops listening at once (connections open stay open). */
  close(): void;
}

/** Makes a surface from the server's shared context. */
export type SurfaceFactory = (context: ServerContext) => Surface;

/**
 * Starts listening with the surfaces' routes, the last-listed surface claiming an unknown path giving its error shape
 * (later surfaces own narrower paths);
 * resolves with the bound port (pass 0 for any free port).
 * @throws UwsUnavailableError when no uWebSockets.js build loads on this Node.js release and machine; Error when the
 * address cannot be bound.
 */
export async function listen(options: ServerOptions, surfaceFactories: readonly SurfaceFactory[], host: string, port: number): Promise<LoomServer> {
  const { uws: uWS, build } = await loadUws();
  const context = new ServerContext(options);
  const guard = { log: context.options.log, countStatus: (route: string, status: number) => context.metrics.request(route, status), requests: context.requests, proxies: context.proxies };
  const app = uWS.App();
  alignTimeouts(app);
  const routes = new Routes(app, guard);
  const surfaces = surfaceFactories.map((make) => make(context));
  for (const surface of surfaces) surface.register(routes);
  routes.addHeadForGets();

  const header = (req: HttpRequest) => (name: string) => req.getHeader(name);
  const unknownRouteShape = (req: HttpRequest): ErrorResponder => {
    const url = req.getUrl();
    // The most specific surface first: later surfaces own narrower paths (/api/v1/dashboard/ under the platform's
    // /api/), and the inference surface, first of all, answers for any path.
    for (const surface of [...surfaces].reverse()) {
      const shape = surface.errorShapeFor?.(url, header(req));
      if (shape) return shape;
    }
    return context.endpointFor(header(req)).error;
  };
  app.any("/*", guarded(guard, "(unknown)", unknownRouteShape, (connection, req) => {
    const method = req.getMethod().toUpperCase();
    const url = req.getUrl();
    const respond = unknownRouteShape(req);
    const allowed = routes.methodsOf(url);
    const error = allowed
      ? new ProtocolError("method_not_allowed", `${method} is not allowed on ${url}: use ${allowed}`)
      : new ProtocolError("not_found", `no route for ${method} ${url.slice(0, 200)}`);
    const { status, body, headers } = respond(error);
    context.metrics.request("(unknown)", status);
    const head = allowed ? { ...headers, allow: allowed } : headers;
    // Closing: a body may follow this request unread. (A HEAD's answer goes without its body: guard.ts.)
    connection.sendJson(status, body, head, true);
  }));
  const bound = await bindApp(uWS, app, host, port);
  return {
    port: bound.port,
    metrics: context.metrics,
    http: describeUwsBuild(build),
    get inFlight() {
      return context.requests.count;
    },
    drain: (drainOptions) => {
      bound.close();
      // Once nothing is in flight, every connection left is an idle kept-alive one: closed, not answered 503.
      return context.requests.drain(drainOptions, () => app.close());
    },
    close: bound.close,
  };
}
