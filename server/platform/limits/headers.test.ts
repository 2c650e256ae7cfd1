// Rate-limit headers in OpenAI's form (durations) and Anthropic's (RFC 3339 times, plus the OpenAI names).
import { describe, expect, it } from "vitest";
import type { BucketState } from "../contract.js";
import { durationText, rateLimitHeaders, resetTime, retryAfterSeconds } from "./headers.js";

const requests: BucketState = { key: "org:1:rpm", limit: 100, remaining: 99, resetMs: 600 };
const tokens: BucketState = { key: "org:1:tpm", limit: 1_000_000, remaining: 998_500, resetMs: 360_000 };
const now = Date.UTC(2025, 7, 21, 12, 40, 58, 250);

describe("rate-limit headers", () => {
  it("writes OpenAI's six headers, resets as durations", () => {
    expect(rateLimitHeaders(requests, tokens, "openai", now)).toEqual({
      "x-ratelimit-limit-requests": "100",
      "x-ratelimit-remaining-requests": "99",
      "x-ratelimit-reset-requests": "600ms",
      "x-ratelimit-limit-tokens": "1000000",
      "x-ratelimit-remaining-tokens": "998500",
      "x-ratelimit-reset-tokens": "6m0s",
    });
  });

  it("writes Anthropic's names as well, resets as RFC 3339 times rounded up to the second", () => {
    const headers = rateLimitHeaders(requests, tokens, "anthropic", now);
    expect(headers).toMatchObject({
      "x-ratelimit-limit-requests": "100",
      "x-ratelimit-reset-tokens": "6m0s",
      "anthropic-ratelimit-requests-limit": "100",
      "anthropic-ratelimit-requests-remaining": "99",
      "anthropic-ratelimit-requests-reset": "2025-08-21T12:40:59Z",
      "anthropic-ratelimit-tokens-limit": "1000000",
      "anthropic-ratelimit-tokens-remaining": "998500",
      "anthropic-ratelimit-tokens-reset": "2025-08-21T12:46:59Z",
    });
    expect(Object.keys(headers)).toHaveLength(12);
  });

  it("leaves out the headers of a limit that does not apply", () => {
    expect(Object.keys(rateLimitHeaders(undefined, tokens, "anthropic", now)).sort()).toEqual(
      [
        "anthropic-ratelimit-tokens-limit",
        "anthropic-ratelimit-tokens-remaining",
        "anthropic-ratelimit-tokens-reset",
        "x-ratelimit-limit-tokens",
        "x-ratelimit-remaining-tokens",
        "x-ratelimit-reset-tokens",
      ].sort(),
    );
    expect(rateLimitHeaders(undefined, undefined, "openai", now)).toEqual({});
  });

  it("writes durations the way Go (and OpenAI) does", () => {
    expect([0, 0.2, 17, 120, 999, 1000, 1500, 1250, 59_999, 60_000, 360_000, 3_723_000, 3_600_000].map(durationText)).toEqual([
      "0s",
      "1ms",
      "17ms",
      "120ms",
      "999ms",
      "1s",
      "1.5s",
      "1.25s",
      "59.999s",
      "1m0s",
      "6m0s",
      "1h2m3s",
      "1h0m0s",
    ]);
    // Milliseconds keep their leading zeros and lose only their trailing ones.
    expect([1050, 1005, 60_010, 3_600_100].map(durationText)).toEqual(["1.05s", "1.005s", "1m0.01s", "1h0m0.1s"]);
  });

  it("rounds times and Retry-After up, never down", () => {
    expect(resetTime(Date.UTC(2025, 0, 1, 0, 0, 0), 0)).toBe("2025-01-01T00:00:00Z");
    expect(resetTime(Date.UTC(2025, 0, 1, 0, 0, 0), 1)).toBe("2025-01-01T00:00:01Z");
    expect([0, 1, 999, 1000, 1001, 30_060].map(retryAfterSeconds)).toEqual(["1", "1", "1", "1", "2", "31"]);
  });

  it("never writes a negative or fractional count", () => {
    const odd: BucketState = { key: "k", limit: 7.5, remaining: -2, resetMs: -5 };
    expect(rateLimitHeaders(odd, undefined, "openai", now)).toEqual({
      "x-ratelimit-limit-requests": "7",
      "x-ratelimit-remaining-requests": "0",
      "x-ratelimit-reset-requests": "0s",
    });
  });
});
