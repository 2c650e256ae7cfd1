// Rate-limit response headers from the bucket states of an admission, in the forms OpenAI and Anthropic document:
// OpenAI's x-ratelimit-{limit,remaining,reset}-{requests,tokens} with the reset as a duration ("1s", "6m0s",
// "120ms"); Anthropic's responses carry those and also anthropic-ratelimit-{requests,tokens}-{limit,remaining,reset}
// with the reset as an RFC 3339 time. Pure functions.
import type { BucketState } from "../contract.js";

/** Which vendor's header set to produce: "anthropic" is the OpenAI set plus Anthropic's own names. */
export type RateLimitHeaderFormat = "openai" | "anthropic";

/**
 * The rate-limit headers for a response: the `-requests` trio from `requests`, the `-tokens` trio from `tokens`
 * (a missing state gives no headers of its kind), and for "anthropic" the `anthropic-ratelimit-*` names as well.
 * `nowMs` anchors Anthropic's absolute reset times (default: the current time).
 */
export function rateLimitHeaders(
  requests: BucketState | undefined,
  tokens: BucketState | undefined,
  format: RateLimitHeaderFormat,
  nowMs: number = Date.now(),
): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const [kind, state] of [["requests", requests], ["tokens", tokens]] as const) {
    if (state === undefined) continue;
    headers[`x-ratelimit-limit-${kind}`] = wholeUnits(state.limit);
    headers[`x-ratelimit-remaining-${kind}`] = wholeUnits(state.remaining);
    headers[`x-ratelimit-reset-${kind}`] = durationText(state.resetMs);
    if (format === "anthropic") {
      headers[`anthropic-ratelimit-${kind}-limit`] = wholeUnits(state.limit);
      headers[`anthropic-ratelimit-${kind}-remaining`] = wholeUnits(state.remaining);
      headers[`anthropic-ratelimit-${kind}-reset`] = resetTime(nowMs, state.resetMs);
    }
  }
  return headers;
}

/**
 * A duration as OpenAI writes x-ratelimit-reset-* (Go's duration text, to the millisecond, rounded up): "0s",
 * "120ms", "1s", "1.5s", "6m0s", "1h2m3s".
 */
export function durationText(ms: number): string {
  const total = Math.max(0, Math.ceil(ms));
  if (total === 0) return "0s";
  if (total < 1000) return `${total}ms`;
  const hours = Math.floor(total / 3_600_000);
  const minutes = Math.floor((total % 3_600_000) / 60_000);
  const milliseconds = total % 60_000;
  const seconds = `${Math.floor(milliseconds / 1000)}${milliseconds % 1000 === 0 ? "" : `.${String(milliseconds % 1000).padStart(3, "0").replace(/0+$/, "")}`}s`;
  if (hours > 0) return `${hours}h${minutes}m${seconds}`;
  if (minutes > 0) return `${minutes}m${seconds}`;
  return seconds;
}

/** The instant `resetMs` after `nowMs` as RFC 3339 in UTC, to the second, rounded up so a client never retries early: "2025-08-21T12:40:59Z". */
export function resetTime(nowMs: number, resetMs: number): string {
  return new Date(Math.ceil((nowMs + Math.max(0, resetMs)) / 1000) * 1000).toISOString().replace(".000Z", "Z");
}

/** The Retry-After header's value for a refusal: whole seconds, rounded up, at least 1. */
export function retryAfterSeconds(retryAfterMs: number): string {
  return String(Math.max(1, Math.ceil(retryAfterMs / 1000)));
}

function wholeUnits(units: number): string {
  return String(Math.max(0, Math.floor(units)));
}
