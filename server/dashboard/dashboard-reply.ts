// How every dashboard API route answers (README.md in this folder): the platform's `{error, field}` shape and JSON
// bodies, each with DASHBOARD_API_HEADERS, errors included. The routes of every dashboard surface use these, so that
// no answer leaves without the headers.
import type { HttpRequest } from "uWebSockets.js";
import { readJsonBody } from "../http/body.js";
import type { ServerContext } from "../http/context.js";
import type { ErrorResponder } from "../http/guard.js";
import type { Connection, ResponseHeaders } from "../http/reply.js";
import { ProtocolError } from "../protocol/internal.js";
import { clientErrorOf, platformError } from "../platform/route-helpers.js";
import { DASHBOARD_API_HEADERS } from "./api-headers.js";

/** The platform's `{error, field}` shape (Retry-After where the error has one) with the dashboard's headers. */
export const dashboardError: ErrorResponder = (error) => {
  const { status, body, headers } = platformError(error);
  return { status, body, headers: { ...DASHBOARD_API_HEADERS, ...headers } };
};

/** A route's answer when it is more than a 200 JSON body: another status, or headers of its own (Set-Cookie). */
export class DashboardReply {
  constructor(readonly body: unknown, readonly headers: ResponseHeaders = {}, readonly status = 200) {}
}

/**
 * Runs `work` and answers what it returns (a body, answered 200, or a {@link DashboardReply}), or its ProtocolError in
 * the `{error}` shape (clientErrorOf: text the database refused is a 400 too); every answer with DASHBOARD_API_HEADERS.
 * Anything else `work` throws is the guard's (a 500).
 * `closeConnection`: close the socket after the answer (a body was left unread).
 */
export async function answerDashboard(context: ServerContext, route: string, connection: Connection, work: () => Promise<unknown>, closeConnection = false): Promise<void> {
  let result: unknown;
  try {
    result = await work();
  } catch (thrown) {
    const error = clientErrorOf(thrown);
    if (error === undefined) throw thrown;
    const { status, body, headers } = dashboardError(error);
    context.metrics.request(route, status);
    connection.sendJson(status, body, headers, closeConnection);
    return;
  }
  const reply = result instanceof DashboardReply ? result : new DashboardReply(result);
  context.metrics.request(route, reply.status);
  connection.sendJson(reply.status, reply.body, { ...DASHBOARD_API_HEADERS, ...reply.headers }, closeConnection);
}

/**
 * Reads a JSON body of at most `maxBytes`, then answers what `work` makes of it, as {@link answerDashboard}.
 * NOTE: call synchronously from the route handler (it reads the request's headers).
 */
export function withDashboardBody(context: ServerContext, route: string, connection: Connection, req: HttpRequest, maxBytes: number, work: (body: unknown) => Promise<unknown>): void {
  const head = { contentType: req.getHeader("content-type"), contentLength: req.getHeader("content-length") };
  readJsonBody(connection, { ...context.bodyLimits, maxBytes: Math.min(maxBytes, context.bodyLimits.maxBytes) }, head, (body, complete) => {
    void answerDashboard(context, route, connection, async () => {
      if (body instanceof ProtocolError) throw body;
      return work(body);
    }, !complete).catch((error: unknown) => connection.fail(error));
  });
}
