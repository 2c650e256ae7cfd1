// Every uWS route handler runs through here: it gets a Connection with a fresh request id once the request's framing
// is known to be unambiguous, and nothing it throws, synchronously, in a promise, or in a callback uWS runs later,
// can end the process. A failure becomes a 500 in the
// route's error shape (or, once a stream has started, a dropped connection), logged with the request id.
import { randomBytes } from "node:crypto";
import type { HttpRequest, HttpResponse } from "uWebSockets.js";
import { ProtocolError } from "../protocol/internal.js";
import { type InFlightRequests, drainingError } from "./drain.js";
import type { ClientOrigin, TrustedProxies } from "./client-address.js";
import { framingError } from "./framing.js";
import type { ServerLog } from "./log.js";
import { Connection } from "./reply.js";

/** A format's error response for a ProtocolError (each wire adapter has one). */
export type ErrorResponder = (error: ProtocolError) => { status: number; body: unknown; headers: Record<string, string> };

/** What a guarded handler gets: the connection, the request (valid until the handler first awaits), its route. */
export type GuardedHandler = (connection: Connection, req: HttpRequest) => void | Promise<void>;

/** Reports failures and counts statuses; shared by every route. */
export interface GuardContext {
  log: ServerLog;
  /** Counts a response's status for the route (metrics). */
  countStatus(route: string, status: number): void;
  /** The requests in flight, and whether the server is draining. */
  requests: InFlightRequests;
  /** Whose X-Forwarded-For and X-Forwarded-Proto are believed (none when absent). */
  proxies?: TrustedProxies;
}

/** A fresh, unguessable request id. */
export function newRequestId(): string {
  return `req_${randomBytes(12).toString("hex")}`;
}

/**
 * Wraps `handler` for uWS. `errors` picks the error shape from the request (read before the handler runs, since the
 * request object is only valid synchronously).
 */
export function guarded(context: GuardContext, route: string, errors: (req: HttpRequest) => ErrorResponder, handler: GuardedHandler): (res: HttpResponse, req: HttpRequest) => void {
  return (res, req) => {
    let respond: ErrorResponder | undefined;
    let connection: Connection | undefined;
    const fail = (error: unknown) => {
      const requestId = connection?.requestId ?? "(none)";
      try {
        context.log.requestError(requestId, route, error);
        if (!connection || connection.closed) return;
        if (connection.started) {
          connection.terminate();
          return;
        }
        const internal = new ProtocolError("internal", `internal server error (request ${requestId}); the server log has the details`);
        const { status, body, headers } = (respond ?? plainError)(internal);
        context.countStatus(route, status);
        connection.sendJson(status, body, headers, true);
      } catch (secondary) {
        // Answering failed too (the socket is gone): nothing more can be done for this request.
        context.log.requestError(requestId, route, secondary);
      }
    };
    try {
      connection = new Connection(res, newRequestId(), fail);
      connection.client = clientOrigin(context.proxies, res, req);
      // Every answer to a HEAD, refusals included, is a head without a body (a body would be read as the next answer).
      connection.headOnly = req.getMethod() === "head";
      context.requests.track(connection);
      respond = errors(req);
      // Ambiguous framing is refused on every route, so that no request can be smuggled behind one (framing.ts).
      const framing = framingError(req);
      if (framing) {
        const { status, body, headers } = respond(framing);
        context.countStatus(route, status);
        connection.sendJson(status, body, headers, true);
        return;
      }
      // Refused during a drain rather than served, so that the drain waits only for what was running when it began
      // and ends as soon as it can; the official SDKs retry a 503 / 529 on a new connection (to whatever listens now).
      if (context.requests.refuses(route)) {
        const { status, body, headers } = respond(drainingError());
        context.countStatus(route, status);
        connection.sendJson(status, body, headers, true);
        return;
      }
      const pending = handler(connection, req);
      if (pending) pending.catch(fail);
    } catch (error) {
      if (!connection) {
        // Not even a connection: answer on the raw response, once.
        context.log.requestError("(none)", route, error);
        try {
          res.cork(() => res.writeStatus("500 Internal Server Error").end("", true));
        } catch {
          // The socket is gone.
        }
        return;
      }
      fail(error);
    }
  };
}

/** Where a request comes from: its peer, or what a trusted proxy in front says (client-address.ts). */
function clientOrigin(proxies: TrustedProxies | undefined, res: HttpResponse, req: HttpRequest): ClientOrigin {
  const peer = Buffer.from(res.getRemoteAddressAsText()).toString();
  if (!proxies) return { address: peer, https: false };
  const { forwardedFor, forwardedProto } = forwardedHeaders(req);
  return proxies.originOf(peer, forwardedFor, forwardedProto);
}

/**
 * X-Forwarded-For and X-Forwarded-Proto, each as its every line joined with commas in order. req.getHeader gives the
 * first line only: that is the client's own when a proxy adds a line of its own instead of extending the client's
 * (HAProxy's `option forwardfor`), and the client would pick its address. The lines are bounded by the headers' limit.
 * NOTE: call before the first await (uWS invalidates the request when the handler returns).
 */
export function forwardedHeaders(req: HttpRequest): { forwardedFor: string; forwardedProto: string } {
  let forwardedFor = "";
  let forwardedProto = "";
  req.forEach((name, value) => {
    if (name === "x-forwarded-for") forwardedFor = forwardedFor === "" ? value : `${forwardedFor},${value}`;
    else if (name === "x-forwarded-proto") forwardedProto = forwardedProto === "" ? value : `${forwardedProto},${value}`;
  });
  return { forwardedFor, forwardedProto };
}

/** The error shape of last resort (an OpenAI-style body), before a route's own is known. */
function plainError(error: ProtocolError) {
  return { status: error.status, body: { error: { message: error.message, type: "server_error", param: null, code: null } }, headers: {} };
}
