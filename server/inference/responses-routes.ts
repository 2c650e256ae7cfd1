// The stored responses of the Responses API: GET and DELETE /v1/responses/{id} and GET /v1/responses/{id}/input_items,
// behind the same keys as generation. Each principal sees its own (its organization's) responses only: another's id
// answers 404, as a missing one does.
import type { HttpRequest } from "uWebSockets.js";
import { ownerOf, readStored, type ResponsesStorage } from "../adapters/responses/endpoint.js";
import type { ServerContext } from "../http/context.js";
import type { WireEndpoint } from "../http/endpoint.js";
import type { Connection } from "../http/reply.js";
import type { Routes } from "../http/routes.js";
import { ProtocolError } from "../protocol/internal.js";
import { answerError } from "./generation.js";

/** A response id as this server makes them; anything else cannot name a stored response. */
const RESPONSE_ID = /^resp_[A-Za-z0-9]{1,128}$/;

/** Registers the stored-response routes; `endpoint` is POST /v1/responses' (for the error shape and auth format). */
export function registerStoredResponseRoutes(context: ServerContext, routes: Routes, endpoint: WireEndpoint, storage: ResponsesStorage): void {
  const errors = () => endpoint.error;
  const route = (method: string, name: string, answer: (owner: string, id: string, query: URLSearchParams) => Promise<unknown>) =>
    (connection: Connection, req: HttpRequest) => {
      const url = req.getUrl();
      const query = new URLSearchParams(req.getQuery() ?? "");
      const label = `${method} ${name}`;
      const authenticated = context.options.auth.authenticate({ authorization: req.getHeader("authorization"), xApiKey: req.getHeader("x-api-key") }, endpoint.format);
      const run = async () => {
        const principal = await authenticated;
        if (principal instanceof ProtocolError) throw principal;
        const body = await answer(ownerOf(principal), responseIdOf(url), query);
        context.metrics.request(label, 200);
        connection.sendJson(200, body);
      };
      return run().catch((error: unknown) => {
        if (!(error instanceof ProtocolError)) throw error;
        answerError(context, label, endpoint, connection, error);
      });
    };
  const store = storage.store;
  routes.add("GET", "/v1/responses/:id", errors, route("GET", "/v1/responses/{id}", async (owner, id, query) => {
    rejectQuery(query, []);
    const found = await readStored(() => store.get(owner, id));
    if (!found) throw notFound(id);
    return found.response;
  }), "GET /v1/responses/{id}");
  routes.add("DELETE", "/v1/responses/:id", errors, route("DELETE", "/v1/responses/{id}", async (owner, id, query) => {
    rejectQuery(query, []);
    if (!(await readStored(() => store.delete(owner, id)))) throw notFound(id);
    return { id, object: "response.deleted", deleted: true };
  }), "DELETE /v1/responses/{id}");
  routes.add("GET", "/v1/responses/:id/input_items", errors, route("GET", "/v1/responses/{id}/input_items", async (owner, id, query) => {
    rejectQuery(query, ["limit", "order", "after"]);
    const limit = pageLimit(query.get("limit"));
    const order = query.get("order") ?? "desc";
    if (order !== "asc" && order !== "desc") throw new ProtocolError("invalid_request", `order must be 'asc' or 'desc', got ${JSON.stringify(order.slice(0, 40))}`, "order");
    const after = query.get("after") ?? undefined;
    const page = await readStored(() => store.inputItems(owner, id, { limit, order, ...(after !== undefined ? { after } : {}) }));
    if (!page) throw notFound(id);
    const ids = page.items.map((item) => item.id as string);
    return { object: "list", data: page.items, first_id: ids[0] ?? null, last_id: ids[ids.length - 1] ?? null, has_more: page.hasMore };
  }), "GET /v1/responses/{id}/input_items");
}

/** The id in /v1/responses/{id}[/...]; one that cannot be a response id is a 404 like any other missing one. */
function responseIdOf(url: string): string {
  const id = url.split("/")[3] ?? "";
  if (!RESPONSE_ID.test(id)) throw notFound(id);
  return id;
}

function notFound(id: string): ProtocolError {
  return new ProtocolError("not_found", `Response with id '${id.slice(0, 140)}' not found`, "response_id");
}

/** Query parameters these routes do not read are refused (an `include` or `stream` would change the answer). */
function rejectQuery(query: URLSearchParams, allowed: readonly string[]): void {
  for (const key of query.keys()) {
    if (allowed.includes(key)) continue;
    const name = JSON.stringify(key.slice(0, 40));
    throw new ProtocolError("invalid_request", `the query parameter ${name} is not supported here${allowed.length > 0 ? `: only ${allowed.join(", ")}` : ""}`, key.slice(0, 40));
  }
}

/** `limit`: 1 to 100, default 20. */
function pageLimit(value: string | null): number {
  if (value === null) return 20;
  const limit = Number(value);
  if (!/^\d{1,3}$/.test(value) || limit < 1 || limit > 100) throw new ProtocolError("invalid_request", `limit must be an integer between 1 and 100, got ${JSON.stringify(value.slice(0, 40))}`, "limit");
  return limit;
}
