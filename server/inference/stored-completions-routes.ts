// The stored chat completions (`store: true`): GET /v1/chat/completions (the list, filtered by model and metadata),
// GET, POST (metadata) and DELETE /v1/chat/completions/{id}, and GET /v1/chat/completions/{id}/messages, behind the
// same keys as generation. Each principal sees its own (its organization's) completions only: another's id answers
// 404, as a missing one does.
import type { HttpRequest } from "uWebSockets.js";
import { ownerOf } from "../adapters/responses/endpoint.js";
import { isObject, own } from "../adapters/openai/fields.js";
import { parseMetadata } from "../adapters/openai/metadata.js";
import type { ChatCompletionStorage, JsonRecord, PageRequest, StoredCompletion } from "../adapters/openai/stored.js";
import type { Principal } from "../http/auth.js";
import { readJsonBody } from "../http/body.js";
import type { ServerContext } from "../http/context.js";
import type { WireEndpoint } from "../http/endpoint.js";
import type { Connection } from "../http/reply.js";
import type { Routes } from "../http/routes.js";
import { ProtocolError } from "../protocol/internal.js";
import { answerError } from "./generation.js";

/** A completion id as this server makes them; anything else cannot name a stored completion. */
const COMPLETION_ID = /^chatcmpl-[A-Za-z0-9_-]{1,128}$/;

/** What a route answers from: whose completions, the id in the path (if any), the query, and a POST's body. */
interface RouteInput {
  owner: string;
  id: string;
  query: URLSearchParams;
  body?: unknown;
}

/** Registers the stored-completion routes; `endpoint` is POST /v1/chat/completions' (for the error shape and auth format). */
export function registerStoredCompletionRoutes(context: ServerContext, routes: Routes, endpoint: WireEndpoint, storage: ChatCompletionStorage): void {
  const errors = () => endpoint.error;
  const store = storage.store;
  const route = (method: "GET" | "POST" | "DELETE", name: string, answer: (input: RouteInput) => Promise<unknown>) =>
    (connection: Connection, req: HttpRequest) => {
      const url = req.getUrl();
      const query = new URLSearchParams(req.getQuery() ?? "");
      const label = `${method} ${name}`;
      const head = { contentType: req.getHeader("content-type"), contentLength: req.getHeader("content-length") };
      const authenticated = context.options.auth.authenticate({ authorization: req.getHeader("authorization"), xApiKey: req.getHeader("x-api-key") }, endpoint.format);
      const fail = (error: unknown, closeConnection = false) => {
        if (!(error instanceof ProtocolError)) return connection.fail(error);
        answerError(context, label, endpoint, connection, error, closeConnection);
      };
      const run = async (body?: unknown) => {
        const principal: Principal | ProtocolError = await authenticated;
        if (principal instanceof ProtocolError) throw principal;
        const id = name.includes("{id}") ? completionIdOf(url) : "";
        const result = await answer({ owner: ownerOf(principal), id, query, ...(body !== undefined ? { body } : {}) });
        context.metrics.request(label, 200);
        connection.sendJson(200, result);
      };
      if (method !== "POST") return run().catch(fail);
      // A key refused at once is refused before the body is read (the rest of it is still on the wire).
      if (authenticated instanceof ProtocolError) return fail(authenticated, true);
      readJsonBody(connection, context.bodyLimits, head, (body, complete) => {
        if (body instanceof ProtocolError) return fail(body, !complete);
        run(body).catch(fail);
      });
    };

  routes.add("GET", "/v1/chat/completions", errors, route("GET", "/v1/chat/completions", async ({ owner, query }) => {
    const metadata: Record<string, string> = {};
    for (const [key, value] of query) {
      const pair = /^metadata\[(.*)\]$/s.exec(key);
      if (pair) metadata[pair[1]!] = value;
      else if (!["after", "limit", "order", "model"].includes(key)) refuseQuery(key, ["after", "limit", "order", "model", "metadata[key]"]);
    }
    const filter = { metadata: parseMetadata(metadata), ...(query.has("model") ? { model: query.get("model")! } : {}) };
    const page = await readStored(() => store.list(owner, filter, pageOf(query)));
    return listOf(page.items.map(completionObject), page.hasMore);
  }), "GET /v1/chat/completions");

  routes.add("GET", "/v1/chat/completions/:id", errors, route("GET", "/v1/chat/completions/{id}", async ({ owner, id, query }) => {
    onlyQuery(query, []);
    const found = await readStored(() => store.get(owner, id));
    if (!found) throw notFound(id);
    return completionObject(found);
  }), "GET /v1/chat/completions/{id}");

  routes.add("POST", "/v1/chat/completions/:id", errors, route("POST", "/v1/chat/completions/{id}", async ({ owner, id, query, body }) => {
    onlyQuery(query, []);
    const metadata = updateOf(body);
    const updated = await readStored(() => store.updateMetadata(owner, id, metadata));
    if (!updated) throw notFound(id);
    return completionObject(updated);
  }), "POST /v1/chat/completions/{id}");

  routes.add("DELETE", "/v1/chat/completions/:id", errors, route("DELETE", "/v1/chat/completions/{id}", async ({ owner, id, query }) => {
    onlyQuery(query, []);
    if (!(await readStored(() => store.delete(owner, id)))) throw notFound(id);
    return { object: "chat.completion.deleted", id, deleted: true };
  }), "DELETE /v1/chat/completions/{id}");

  routes.add("GET", "/v1/chat/completions/:id/messages", errors, route("GET", "/v1/chat/completions/{id}/messages", async ({ owner, id, query }) => {
    onlyQuery(query, ["after", "limit", "order"]);
    const page = await readStored(() => store.messages(owner, id, pageOf(query)));
    if (!page) throw notFound(id);
    return listOf(page.items, page.hasMore);
  }), "GET /v1/chat/completions/{id}/messages");
}

/** A stored completion as the API returns it: the object as answered, with its (current) metadata. */
function completionObject(stored: StoredCompletion): JsonRecord {
  return { ...stored.completion, metadata: stored.metadata };
}

/** OpenAI's cursor page. */
function listOf(data: JsonRecord[], hasMore: boolean): JsonRecord {
  const ids = data.map((item) => item.id as string);
  return { object: "list", data, first_id: ids[0] ?? null, last_id: ids[ids.length - 1] ?? null, has_more: hasMore };
}

/** The body of POST /v1/chat/completions/{id}: `{metadata}` (null clears it), and nothing else. */
function updateOf(body: unknown): Record<string, string> {
  if (!isObject(body)) throw new ProtocolError("invalid_request", "The request body must be a JSON object with metadata");
  for (const key of Object.keys(body)) {
    if (key !== "metadata") throw new ProtocolError("invalid_request", `only metadata can be updated on a stored chat completion, got ${JSON.stringify(key.slice(0, 40))}`, key.slice(0, 40));
  }
  if (!Object.hasOwn(body, "metadata")) throw new ProtocolError("invalid_request", "metadata is required: the pairs to keep (null or {} to clear them)", "metadata");
  return parseMetadata(own(body, "metadata"));
}

/** The id in /v1/chat/completions/{id}[/...]; one that cannot be a completion id is a 404 like any other missing one. */
function completionIdOf(url: string): string {
  const id = decodeURIComponentSafely(url.split("/")[4] ?? "");
  if (!COMPLETION_ID.test(id)) throw notFound(id);
  return id;
}

function decodeURIComponentSafely(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

function notFound(id: string): ProtocolError {
  return new ProtocolError("not_found", `Chat completion with id '${id.slice(0, 140)}' not found: it was never stored (store: false), was deleted, expired, or belongs to another organization`, "completion_id");
}

/** `after`, `limit` (1 to 100, default 20) and `order` (asc, the default, or desc). */
function pageOf(query: URLSearchParams): PageRequest {
  const limitText = query.get("limit");
  const limit = limitText === null ? 20 : Number(limitText);
  if (limitText !== null && (!/^\d{1,3}$/.test(limitText) || limit < 1 || limit > 100)) {
    throw new ProtocolError("invalid_request", `limit must be an integer between 1 and 100, got ${JSON.stringify(limitText.slice(0, 40))}`, "limit");
  }
  const order = query.get("order") ?? "asc";
  if (order !== "asc" && order !== "desc") throw new ProtocolError("invalid_request", `order must be 'asc' or 'desc', got ${JSON.stringify(order.slice(0, 40))}`, "order");
  const after = query.get("after");
  return { limit, order, ...(after !== null ? { after } : {}) };
}

/** Query parameters a route does not read are refused (one that would change the answer is never ignored). */
function onlyQuery(query: URLSearchParams, allowed: readonly string[]): void {
  for (const key of query.keys()) if (!allowed.includes(key)) refuseQuery(key, allowed);
}

function refuseQuery(key: string, allowed: readonly string[]): never {
  const name = JSON.stringify(key.slice(0, 40));
  throw new ProtocolError("invalid_request", `the query parameter ${name} is not supported here${allowed.length > 0 ? `: only ${allowed.join(", ")}` : ""}`, key.slice(0, 40));
}

/** A store call; the database failing is a 502 naming what could not be read. */
async function readStored<T>(read: () => Promise<T>): Promise<T> {
  try {
    return await read();
  } catch (error) {
    if (error instanceof ProtocolError) throw error;
    throw new ProtocolError("bad_gateway", `stored chat completions cannot be read now (${(error as Error).message}); retry shortly`, undefined, 2);
  }
}
