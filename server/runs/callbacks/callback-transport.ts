// How a deliverer sends one attempt: an injected function, so the service can pass its SSRF-guarded HTTP client and
// tests a loopback one (testing/loopback-transport.ts).

/** One POST of a callback. */
export interface CallbackRequest {
  url: string;
  headers: Readonly<Record<string, string>>;
  body: string;
  /** The attempt's time limit; the deliverer also aborts `signal` then. */
  timeoutMs: number;
  /** Aborted when the attempt times out: stop the request and reject. */
  signal: AbortSignal;
}

/**
 * Sends a callback and resolves with the receiver's HTTP status once the response head arrives (the body is not
 * needed); rejects with an Error saying why when no response came (refused, reset, a refused address, aborted).
 */
export type CallbackPost = (request: CallbackRequest) => Promise<{ status: number }>;
