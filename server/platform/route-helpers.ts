// What every `{error}`-shaped surface of the platform (its own routes, agent runs) does per request: authenticate a
// platform key, read a small JSON body, answer JSON or a ProtocolError, and turn database failures into 502s.
import type { HttpRequest } from "uWebSockets.js";
import { readJsonBody } from "../http/body.js";
import type { ServerContext } from "../http/context.js";
import type { ErrorResponder } from "../http/guard.js";
import { logFailure } from "../http/log.js";
import type { Connection } from "../http/reply.js";
import { ProtocolError } from "../protocol/internal.js";
import { DatabaseUnavailableError, PlatformInputError, UnstorableTextError } from "./contract.js";
import { unstorableCharacter, unstorableTextMessage } from "./db/storable-text.js";
import type { KeyAuthenticator, KeyPrincipal } from "./keys/key-authenticator.js";

/** The `{error}` shape of spec 2.7 (plus `field`), with Retry-After where the error has one. */
export const platformError: ErrorResponder = (error) => {
  const headers: Record<string, string> = {};
  if (error.retryAfterSeconds !== undefined && Number.isFinite(error.retryAfterSeconds)) headers["retry-after"] = String(Math.ceil(error.retryAfterSeconds));
  const body: { error: string; field?: string } = { error: error.message };
  if (error.param) body.field = error.param;
  return { status: error.status, body, headers };
};

/** The principal of a platform key of the authenticator's kind (Bearer, or X-API-Key). NOTE: reads `req` synchronously. */
export function authenticate(keys: KeyAuthenticator, req: HttpRequest): Promise<KeyPrincipal> {
  // "anthropic" accepts x-api-key as well as Bearer, as spec section 5 allows on the platform routes.
  const result = keys.authenticate({ authorization: req.getHeader("authorization"), xApiKey: req.getHeader("x-api-key") }, "anthropic");
  return Promise.resolve(result).then((principal) => {
    if (principal instanceof ProtocolError) throw principal;
    return principal;
  });
}

/**
 * What a surface answers for an error of its work: a ProtocolError as it is, and text the database refused to store
 * (a statement given U+0000 past every parser: the last guard, db/storable-text.ts) as a 400; undefined for the
 * rest, which are the guard's 500s.
 */
export function clientErrorOf(error: unknown): ProtocolError | undefined {
  if (error instanceof ProtocolError) return error;
  if (error instanceof UnstorableTextError) return new ProtocolError("invalid_request", error.message);
  return undefined;
}

/** Runs `work` and answers its JSON with `status` (200), or its ProtocolError in the `{error}` shape. */
export async function answer(context: ServerContext, route: string, connection: Connection, work: () => Promise<unknown>, closeConnection = false, status = 200): Promise<void> {
  let body: unknown;
  try {
    body = await work();
  } catch (thrown) {
    const error = clientErrorOf(thrown);
    if (error === undefined) throw thrown;
    const { status: errorStatus, body: errorBody, headers } = platformError(error);
    context.metrics.request(route, errorStatus);
    connection.sendJson(errorStatus, errorBody, headers, closeConnection);
    return;
  }
  context.metrics.request(route, status);
  connection.sendJson(status, body);
}

/**
 * Reads a JSON body of at most `maxBytes`, then answers what `work` makes of it (with `status`). NOTE: call
 * synchronously from the route handler.
 */
export function withBody(context: ServerContext, route: string, connection: Connection, req: HttpRequest, maxBytes: number, work: (body: unknown) => Promise<unknown>, status = 200): void {
  const head = { contentType: req.getHeader("content-type"), contentLength: req.getHeader("content-length") };
  readJsonBody(connection, { ...context.bodyLimits, maxBytes }, head, (body, complete) => {
    void answer(context, route, connection, async () => {
      if (body instanceof ProtocolError) throw body;
      return work(body);
    }, !complete, status).catch((error: unknown) => connection.fail(error));
  });
}

/**
 * A percent-encoded path segment (`what`: "key id"), decoded. A malformed escape, or one that decodes to U+0000
 * (`%00`, which no id holds and the database cannot take), is a 400 naming `field`, the path parameter (`id`, `runId`).
 */
export function decodePathSegment(segment: string, what: string, field = "id"): string {
  let decoded: string;
  try {
    decoded = decodeURIComponent(segment);
  } catch {
    throw new ProtocolError("invalid_request", `the ${what} in the path is not valid percent-encoded UTF-8: ${JSON.stringify(segment.slice(0, 100))}`, field);
  }
  // decodeURIComponent refuses the UTF-8 of a surrogate, so U+0000 is the one character found here.
  const found = unstorableCharacter(decoded);
  if (found) throw new ProtocolError("invalid_request", unstorableTextMessage(`the ${what} in the path`, found), field);
  return decoded;
}

/**
 * A database failure as a 502 saying what could not be done (spec 7: usage that cannot be read is a 502); a refused
 * input as a 400 (404 for an unknown object), text the database cannot store as a 400.
 */
export async function read<T>(what: string, query: () => Promise<T>): Promise<T> {
  try {
    return await query();
  } catch (error) {
    if (error instanceof PlatformInputError) throw new ProtocolError(error.notFound ? "not_found" : "invalid_request", error.message, error.field);
    if (error instanceof UnstorableTextError) throw new ProtocolError("invalid_request", error.message);
    if (error instanceof DatabaseUnavailableError) {
      // The error names the database (host, port, user, data dir): the operator's to read in the log, not the client's.
      logFailure(what, error);
      throw new ProtocolError("bad_gateway", `${what}: the platform database did not answer`);
    }
    throw error;
  }
}
