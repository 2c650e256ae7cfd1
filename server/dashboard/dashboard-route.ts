// How every dashboard endpoint runs: ask the DashboardAuth who calls (synchronously, before anything awaits), read the
// path parameters, query string and (where it takes one) JSON body, and answer JSON or the platform's `{error,
// field}`, with the dashboard's security headers on every answer, errors included.
import type { HttpRequest } from "uWebSockets.js";
import type { ServerContext } from "../http/context.js";
import type { Method, Routes } from "../http/routes.js";
import { ProtocolError } from "../protocol/internal.js";
import { decodePathSegment } from "../platform/route-helpers.js";
import { DashboardReply, answerDashboard, dashboardError, withDashboardBody } from "./dashboard-reply.js";
import { QueryParams } from "./query-params.js";

/** Bodies of dashboard requests are small: a key's name, an organization patch. */
export const MAX_DASHBOARD_BODY_BYTES = 64 * 1024;
/** The longest id a path may name; longer ones name nothing (404, without a query). */
const MAX_PATH_ID_CHARS = 255;

/** What a dashboard endpoint's work gets. */
export interface DashboardRequest<P> {
  /** Who calls, as the DashboardAuth said. */
  caller: P;
  /** The path's `:name` segments in order, percent-decoded. */
  params: string[];
  query: QueryParams;
  /** The JSON body (endpoints declared with `body`), else undefined. */
  body: unknown;
}

/** One dashboard endpoint. */
export interface DashboardEndpoint<P> {
  method: Method;
  /** The uWS pattern, `:name` for path parameters. */
  pattern: string;
  /** Query parameters it takes (others are refused). */
  query?: readonly string[];
  /** Whether it reads a JSON body. */
  body?: boolean;
  /** Status of a success (default 200). */
  status?: number;
  work(request: DashboardRequest<P>): Promise<unknown>;
}

/**
 * Registers `endpoint`, authorized by `authorize` (called synchronously from the handler, with whether the method
 * changes state).
 */
export function addDashboardEndpoint<P>(context: ServerContext, routes: Routes, authorize: (req: HttpRequest, changesState: boolean) => Promise<P>, endpoint: DashboardEndpoint<P>): void {
  const route = endpoint.pattern.replace(/:(\w+)/g, "{$1}");
  // The path parameters' names (`id`, `keyId`): the field a bad one is refused under.
  const parameterNames = endpoint.pattern.split("/").filter((segment) => segment.startsWith(":")).map((segment) => segment.slice(1));
  routes.add(endpoint.method, endpoint.pattern, () => dashboardError, (connection, req) => {
    // Everything read from `req` is read now: it is invalid once the handler awaits.
    const caller = authorize(req, endpoint.method !== "GET");
    caller.catch(() => undefined); // answered below
    const rawParams = parameterNames.map((_, i) => req.getParameter(i) ?? "");
    const rawQuery = req.getQuery() ?? "";
    const work = async (body: unknown) => {
      const who = await caller;
      const params = rawParams.map((raw, i) => pathId(raw, parameterNames[i]!));
      const query = new QueryParams(rawQuery, endpoint.query ?? []);
      const result = await endpoint.work({ caller: who, params, query, body });
      return endpoint.status === undefined ? result : new DashboardReply(result, {}, endpoint.status);
    };
    if (endpoint.body) return withDashboardBody(context, route, connection, req, MAX_DASHBOARD_BODY_BYTES, work);
    return answerDashboard(context, route, connection, () => work(undefined));
  }, route);
}

/** The path parameter `name`, decoded (a 400 naming it when malformed or holding %00); one too long to be an id: 404. */
function pathId(raw: string, name: string): string {
  const id = decodePathSegment(raw, name, name);
  if (id.length > MAX_PATH_ID_CHARS) throw new ProtocolError("not_found", `no such object: the ${name} is longer than ${MAX_PATH_ID_CHARS} characters`, name);
  return id;
}
