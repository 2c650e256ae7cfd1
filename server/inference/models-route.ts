// GET /v1/models and GET /v1/models/{id}: behind the same keys as generation, in the shape of the format the request
// is in (Anthropic's when it carries `anthropic-version`, else OpenAI's).
import type { HttpRequest } from "uWebSockets.js";
import { ProtocolError } from "../protocol/internal.js";
import type { ServerContext } from "../http/context.js";
import type { WireEndpoint } from "../http/endpoint.js";
import { answerError } from "./generation.js";
import type { Connection } from "../http/reply.js";

const PREFIX = "/v1/models/";

/** GET /v1/models or /v1/models/{id}. NOTE: reads everything from `req` before answering. */
export function handleModels(context: ServerContext, connection: Connection, req: HttpRequest): void | Promise<void> {
  const header = (name: string) => req.getHeader(name);
  const endpoint = context.endpointFor(header);
  const route = "/v1/models";
  const url = req.getUrl();
  const query = new URLSearchParams(req.getQuery() ?? "");
  const authenticated = context.options.auth.authenticate({ authorization: header("authorization"), xApiKey: header("x-api-key") }, endpoint.format);
  if (authenticated instanceof ProtocolError) return answerError(context, route, endpoint, connection, authenticated);
  if (authenticated instanceof Promise) {
    return authenticated.then((principal) => {
      if (principal instanceof ProtocolError) answerError(context, route, endpoint, connection, principal);
      else answerModels(context, endpoint, connection, url, query);
    });
  }
  answerModels(context, endpoint, connection, url, query);
}

/** The listing, or the one model the path names. */
function answerModels(context: ServerContext, endpoint: WireEndpoint, connection: Connection, url: string, query: URLSearchParams): void {
  const route = "/v1/models";
  const listing = context.options.registry.listing();
  try {
    if (!url.startsWith(PREFIX)) {
      context.metrics.request(route, 200);
      connection.sendJson(200, endpoint.models.list(listing, query));
      return;
    }
    const id = decodePathSegment(url.slice(PREFIX.length));
    const found = listing.find((model) => model.id === id);
    if (!found) throw new ProtocolError("not_found", `The model '${id.slice(0, 200)}' does not exist`, "model");
    context.metrics.request(route, 200);
    connection.sendJson(200, endpoint.models.one(found));
  } catch (error) {
    if (!(error instanceof ProtocolError)) throw error;
    answerError(context, route, endpoint, connection, error);
  }
}

/** A percent-encoded path segment, decoded; a malformed escape (`%ZZ`, a lone surrogate's bytes) is a 400. */
function decodePathSegment(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    throw new ProtocolError("invalid_request", `the model id in the path is not valid percent-encoded UTF-8: ${JSON.stringify(segment.slice(0, 100))}`, "model");
  }
}
