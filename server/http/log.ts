// Where the server reports what went wrong: one line per event on stderr by default, each with the request id the
// client got in its `x-request-id` header, so that a 500 a user reports can be found; and the details of failures a
// client is told of only in loom's own words (a store, database, chain or facilitator that failed). URLs in either
// are redacted (redact.ts): an RPC endpoint's API key or a database password never reaches the log.
import { redactUrls } from "./redact.js";

/** The server's error log. */
export interface ServerLog {
  /** A request failed on the server's side (a 500, or a stream cut by a server error). */
  requestError(requestId: string, route: string, error: unknown): void;
}

/** Writes one line per failure, then the stack, to stderr. */
export const stderrLog: ServerLog = {
  requestError(requestId, route, error) {
    const detail = error instanceof Error ? (error.stack ?? `${error.name}: ${error.message}`) : String(error);
    process.stderr.write(`loom: request ${requestId} (${route}) failed: ${redactUrls(detail)}\n`);
  },
};

/** How long after a failure is logged the same `what` is only counted (an outage fails every request alike). */
export const REPEAT_WINDOW_MS = 10_000;

/** Per `what` logged: until when repeats are only counted, and how many were. */
const recent = new Map<string, { until: number; repeats: number }>();

/**
 * Reports the details of a failure whose client got loom's own message instead (which must not carry them: a
 * driver's or a library's text can name hosts, ports and URLs with their keys): `what` failed, then the error's
 * message and its causes', on stderr as `loom: <what>: <message>`, with URLs redacted. The same `what` is written
 * once per {@link REPEAT_WINDOW_MS}; the next line after a window says how many were left out.
 */
export function logFailure(what: string, error: unknown, nowMs = Date.now()): void {
  const last = recent.get(what);
  if (last && nowMs < last.until) {
    last.repeats += 1;
    return;
  }
  if (recent.size >= 1000) recent.clear();
  recent.set(what, { until: nowMs + REPEAT_WINDOW_MS, repeats: 0 });
  const repeats = last && last.repeats > 0 ? ` (and ${last.repeats} more like it since the last such line)` : "";
  process.stderr.write(`loom: ${what}${repeats}: ${redactUrls(describeError(error))}\n`);
}

/** An error in words: its message (its name when it has none), then its causes', or the value as text. */
function describeError(error: unknown): string {
  const parts: string[] = [];
  // A library's error often says only what failed and keeps why in `cause` (three deep at most: enough to say why).
  for (let current = error, depth = 0; current !== undefined && current !== null && depth < 4; current = (current as { cause?: unknown }).cause, depth++) {
    const text = current instanceof Error ? current.message || current.name : String(current);
    // Wrappers often repeat their cause's message (the database's errors do): said once.
    if (!parts.some((part) => part.includes(text))) parts.push(text);
    if (!(current instanceof Error)) break;
  }
  return parts.join("; caused by: ");
}
