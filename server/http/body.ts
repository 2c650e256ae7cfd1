// Reads a request body from uWebSockets.js within a size limit and parses it as JSON, rejecting deep nesting, so that
// no input can exhaust memory or the stack of the adapters' walkers.
import type { HttpResponse } from "uWebSockets.js";
import { ProtocolError } from "../protocol/internal.js";

/** Deepest nesting of arrays and objects a body may have. */
export const MAX_JSON_DEPTH = 64;

/**
 * Collects the body (uWS hands out chunks whose memory is reused after the callback, so each is copied) and parses
 * it. NOTE: call synchronously from the route handler, after onAborted is registered.
 */
export function readJsonBody(res: HttpResponse, limitBytes: number, contentType: string, onBody: (result: unknown | ProtocolError) => void): void {
  if (!/^application\/json\b/i.test(contentType.trim())) {
    res.onData(() => {}); // drain
    onBody(new ProtocolError("invalid_request", `Content-Type must be application/json, got ${JSON.stringify(contentType || "(none)")}`));
    return;
  }
  const chunks: Buffer[] = [];
  let size = 0;
  let failed = false;
  res.onData((chunk, isLast) => {
    if (failed) return;
    size += chunk.byteLength;
    if (size > limitBytes) {
      failed = true;
      onBody(new ProtocolError("request_too_large", `the request body exceeds the limit of ${limitBytes} bytes`));
      return;
    }
    chunks.push(Buffer.from(new Uint8Array(chunk)));
    if (isLast) onBody(parseJson(Buffer.concat(chunks).toString("utf8")));
  });
}

/** JSON.parse with clear errors and a nesting limit. */
export function parseJson(text: string): unknown | ProtocolError {
  const depth = nestingDepth(text);
  if (depth > MAX_JSON_DEPTH) return new ProtocolError("invalid_request", `the JSON body is nested ${depth} levels deep; at most ${MAX_JSON_DEPTH} are allowed`);
  try {
    return JSON.parse(text);
  } catch (error) {
    return new ProtocolError("invalid_request", `the body is not valid JSON: ${(error as Error).message}`);
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
