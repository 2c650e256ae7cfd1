// Reads a request body from uWebSockets.js within limits and parses it as JSON, rejecting deep nesting, so that no
// input can exhaust memory or the stack of the adapters' walkers. Limits are per request (size, time to arrive) and
// server-wide (bytes of bodies being received at once), so that many stalled uploads cannot hold memory either.
import { ProtocolError } from "../protocol/internal.js";
import type { Connection } from "./reply.js";

/** Deepest nesting of arrays and objects a body may have. */
export const MAX_JSON_DEPTH = 64;

/** Bytes of request bodies being received across the server at once: what every request draws from. */
export class BodyBudget {
  private used = 0;

  constructor(readonly capacityBytes: number) {}

  /** Bytes held now. */
  get heldBytes(): number {
    return this.used;
  }

  /** Takes `bytes` from the budget; false (and nothing taken) when it would overflow. */
  tryTake(bytes: number): boolean {
    if (this.used + bytes > this.capacityBytes) return false;
    this.used += bytes;
    return true;
  }

  /** Gives `bytes` back. */
  give(bytes: number): void {
    this.used -= bytes;
  }
}

/** What a body read may take. */
export interface BodyLimits {
  /** Largest body in bytes. */
  maxBytes: number;
  /** Milliseconds from the start of the read to its last byte. */
  timeoutMs: number;
  /** The server-wide budget the body's bytes are drawn from while it arrives. */
  budget: BodyBudget;
}

/**
 * Collects the body (uWS hands out chunks whose memory is reused after the callback, so each is copied) and parses it.
 * `onBody` is called once: with the parsed JSON, or with a ProtocolError (400 wrong content type or bad JSON, 413 too
 * large, 408 too slow, 529/503 when the server-wide budget is full), and whether the body was read to its end. When
 * it was not, the caller must close the connection: the rest of the body is still on the wire. NOTE: call
 * synchronously from the route handler.
 */
export function readJsonBody(connection: Connection, limits: BodyLimits, headers: { contentType: string; contentLength: string }, onBody: (result: unknown | ProtocolError, complete: boolean) => void): void {
  if (!/^application\/json\b/i.test(headers.contentType.trim())) {
    onBody(new ProtocolError("invalid_request", `Content-Type must be application/json, got ${JSON.stringify(headers.contentType.slice(0, 100) || "(none)")}`), false);
    return;
  }
  const declared = headers.contentLength === "" ? undefined : Number(headers.contentLength);
  if (declared !== undefined && declared > limits.maxBytes) {
    onBody(tooLarge(limits.maxBytes), false);
    return;
  }
  const chunks: Buffer[] = [];
  let size = 0;
  let settled = false;
  /** Ends the read once: gives the budget back and reports `result` (nothing when the client left). */
  const settle = (result: { value: unknown; complete?: true } | undefined) => {
    if (settled) return;
    settled = true;
    clearTimeout(timer);
    limits.budget.give(size);
    chunks.length = 0;
    if (result) onBody(result.value, result.complete ?? false);
  };
  const timer = setTimeout(
    connection.guard(() => settle({ value: new ProtocolError("request_timeout", `the request body did not arrive within ${limits.timeoutMs / 1000} s`) })),
    limits.timeoutMs,
  );
  connection.onAbort(() => settle(undefined));
  connection.onData((chunk, isLast) => {
    if (settled) return;
    if (size + chunk.byteLength > limits.maxBytes) return settle({ value: tooLarge(limits.maxBytes) });
    if (!limits.budget.tryTake(chunk.byteLength)) {
      return settle({ value: new ProtocolError("overloaded", "the server is receiving too many request bodies at once; retry shortly", undefined, 1) });
    }
    size += chunk.byteLength;
    chunks.push(Buffer.from(new Uint8Array(chunk)));
    if (!isLast) return;
    settle({ value: parseJson(Buffer.concat(chunks).toString("utf8")), complete: true });
  });
}

function tooLarge(limit: number): ProtocolError {
  return new ProtocolError("request_too_large", `the request body exceeds the limit of ${limit} bytes`);
}

/** JSON.parse with clear errors and a nesting limit. */
export function parseJson(text: string): unknown | ProtocolError {
  const depth = nestingDepth(text);
  if (depth > MAX_JSON_DEPTH) return new ProtocolError("invalid_request", `the JSON body is nested ${depth} levels deep; at most ${MAX_JSON_DEPTH} are allowed`);
  try {
    return JSON.parse(text);
  } catch (error) {
    return new ProtocolError("invalid_request", `the body is not valid JSON: ${(error as Error).message.slice(0, 200)}`);
  }
}

/** Deepest bracket nesting outside strings (an upper bound of the parsed depth; linear, no recursion). */
function nestingDepth(text: string): number {
  let depth = 0;
  let deepest = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c) i++; // backslash escapes the next character
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x7b || c === 0x5b) deepest = Math.max(deepest, ++depth);
    else if (c === 0x7d || c === 0x5d) depth--;
  }
  return deepest;
}
