// Admin commands over HTTP: the server side as a transport-free function (the server's route passes the header and
// body in and writes the answer out), and the client side `loom admin` uses to reach a running server.
import { createHash, timingSafeEqual } from "node:crypto";
import { DatabaseUnavailableError, PlatformInputError, UnstorableTextError } from "../contract.js";
import type { PlatformStores } from "../store/platform-stores.js";
import type { AdminEndpoint } from "./admin-endpoint-file.js";
import { type AdminResult, runAdminCommand } from "./run-admin-command.js";

/** An answer to an admin request: 200 `{result}`, 400 `{error, field}`, 401 / 502 / 500 `{error}`. */
export interface AdminAnswer {
  status: 200 | 400 | 401 | 500 | 502;
  body: { result: AdminResult } | { error: string; field?: string };
}

/** Whether an Authorization header carries `Bearer <token>`; compared in constant time. */
export function adminTokenMatches(authorization: string | undefined, token: string): boolean {
  const match = /^Bearer (\S+)$/i.exec(authorization?.trim() ?? "");
  if (match === null) return false;
  const digest = (text: string) => createHash("sha256").update(text).digest();
  return timingSafeEqual(digest(match[1]!), digest(token));
}

/**
 * Answers one admin request: checks the bearer token, parses the body as a command (AdminCommand JSON), runs it.
 * Never throws: an unexpected error is a 500 whose message is kept out of the body (the caller may log `cause`).
 */
export async function answerAdminRequest(request: {
  stores: PlatformStores;
  /** The token written to admin.json by writeAdminEndpointFile. */
  token: string;
  authorization: string | undefined;
  body: string;
}): Promise<AdminAnswer & { cause?: unknown }> {
  if (!adminTokenMatches(request.authorization, request.token)) return { status: 401, body: { error: "a valid admin token is required (Authorization: Bearer <token from admin.json>)" } };
  let command: unknown;
  try {
    command = JSON.parse(request.body);
  } catch {
    return { status: 400, body: { error: "the body must be an admin command as JSON", field: "body" } };
  }
  try {
    return { status: 200, body: { result: await runAdminCommand(request.stores, command) } };
  } catch (error) {
    if (error instanceof PlatformInputError) return { status: 400, body: { error: error.message, field: error.field } };
    if (error instanceof UnstorableTextError) return { status: 400, body: { error: error.message } };
    if (error instanceof DatabaseUnavailableError) return { status: 502, body: { error: error.message } };
    return { status: 500, body: { error: "the admin command failed inside the server (see its log)" }, cause: error };
  }
}

/**
 * Sends a command to a running server and returns its result.
 * @throws PlatformInputError when the server refused a field (status 400), with the server's field and message.
 * @throws Error when the server cannot be reached or answers anything else.
 */
export async function sendAdminCommand(endpoint: AdminEndpoint, command: unknown, timeoutMs = 30_000): Promise<AdminResult> {
  let response: Response;
  try {
    response = await fetch(endpoint.url, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${endpoint.token}` },
      body: JSON.stringify(command),
      signal: AbortSignal.timeout(timeoutMs),
    });
  } catch (error) {
    const cause = (error as Error & { cause?: Error }).cause?.message ?? (error as Error).message;
    throw new Error(`could not reach the loom server (process ${endpoint.pid}) at ${endpoint.url}: ${cause}`, { cause: error });
  }
  const text = await response.text();
  let body: { result?: AdminResult; error?: string; field?: string } | undefined;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  if (response.status === 200 && body?.result !== undefined) return body.result;
  if (response.status === 400 && typeof body?.error === "string") throw new PlatformInputError(body.field ?? "command", body.error);
  const detail = typeof body?.error === "string" ? body.error : text.slice(0, 200);
  throw new Error(`the loom server at ${endpoint.url} answered ${response.status}: ${detail}`);
}
