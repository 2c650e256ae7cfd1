// A graceful stop of an HTTP server: the requests it is answering (SSE streams until their last event), and its drain,
// which refuses new requests on the connections still open and waits for those in flight to end, up to a timeout,
// before it drops the ones still running. Also the wait itself, which `loom worker` shares for its gateways' requests.
import { ProtocolError } from "../protocol/internal.js";
import type { Connection } from "./reply.js";

/** How long to wait for the work in flight, and how to stop waiting early. */
export interface DrainOptions {
  /** The most milliseconds to wait (0: not at all). */
  timeoutMs: number;
  /** Aborting it stops the wait at once (a second SIGTERM or SIGINT). */
  signal?: AbortSignal;
}

/** Why a drain stopped waiting: the work in flight ended, the timeout passed, or its signal aborted. */
export type DrainEnd = "idle" | "timeout" | "stopped";

/** How a drain ended. */
export interface DrainOutcome {
  ended: DrainEnd;
  /** Requests still running when it stopped waiting, whose connections it dropped. */
  cut: number;
}

/**
 * Waits for `idle` (the work in flight has ended), but no longer than `timeoutMs` and not past `signal`'s abort;
 * resolves with whichever came first.
 */
export function waitForIdle(idle: Promise<unknown>, { timeoutMs, signal }: DrainOptions): Promise<DrainEnd> {
  if (signal?.aborted) return Promise.resolve("stopped");
  if (timeoutMs <= 0) return Promise.resolve("timeout");
  return new Promise<DrainEnd>((resolve) => {
    const finish = (end: DrainEnd) => {
      clearTimeout(timer);
      signal?.removeEventListener("abort", stopped);
      resolve(end);
    };
    const stopped = () => finish("stopped");
    const timer = setTimeout(() => finish("timeout"), timeoutMs);
    signal?.addEventListener("abort", stopped, { once: true });
    idle.then(() => finish("idle"), () => finish("idle"));
  });
}

/**
 * Routes still served during a drain: the operator's. A health checker must see the drain (/health answers 503
 * "draining"), and a scrape can follow it.
 */
const SERVED_WHILE_DRAINING: ReadonlySet<string> = new Set(["/health", "/metrics"]);

/** The error a request gets when it arrives on an open connection during a drain (503, Anthropic's 529). */
export function drainingError(): ProtocolError {
  return new ProtocolError("overloaded", "the server is shutting down and takes no new requests: retry on a new connection", undefined, 1);
}

/**
 * The HTTP requests one server is answering: the one count of requests in flight (/metrics exports it as
 * loom_http_requests_in_flight), and the drain of a graceful stop.
 */
export class InFlightRequests {
  readonly #connections = new Set<Connection>();
  #draining = false;
  /** Wakes a drain waiting for the last request to end. */
  #idle: (() => void) | undefined;

  /** Requests being answered now. */
  get count(): number {
    return this.#connections.size;
  }

  /** Whether a drain has begun. */
  get draining(): boolean {
    return this.#draining;
  }

  /** Counts `connection` until its response has ended (sent in full or dropped) or its client has gone. */
  track(connection: Connection): void {
    this.#connections.add(connection);
    connection.onEnd(() => {
      this.#connections.delete(connection);
      if (this.#connections.size === 0) this.#idle?.();
    });
  }

  /** Whether a request to `route` is refused now: during a drain, any but the operator's routes. */
  refuses(route: string): boolean {
    return this.#draining && !SERVED_WHILE_DRAINING.has(route);
  }

  /**
   * Begins a drain (requests arriving from now on are refused, see {@link refuses}) and waits for the requests in
   * flight to end, as {@link waitForIdle}; then drops the connections of those still running: a stream's client sees
   * it cut, and its engine request is aborted as on a client's disconnect. The caller stops listening first.
   * Kept-alive connections are closed rather than left to take a request that would be refused: each complete
   * response in flight closes its connection as it is sent, and `closeConnections` (which closes every connection
   * left) runs once nothing is in flight, so a client's next request goes out on a new connection (to whatever
   * listens next, such as the process replacing this one) instead of getting a 503 on this one. Connections idle
   * while other requests run, and those of streams that end before the last one, still get the 503 meanwhile: uWS
   * offers no way to close one idle connection.
   * NOTE: call it once; the server is no use afterwards.
   */
  async drain(options: DrainOptions, closeConnections?: () => void): Promise<DrainOutcome> {
    this.#draining = true;
    for (const connection of this.#connections) connection.closeWhenDone = true;
    const idle = new Promise<void>((resolve) => {
      this.#idle = resolve;
      if (this.#connections.size === 0) resolve();
    });
    const ended = await waitForIdle(idle, options);
    this.#idle = undefined;
    const running = [...this.#connections];
    for (const connection of running) connection.terminate();
    // After the cut connections' own close (terminate defers it a turn, for what is still corked).
    if (closeConnections !== undefined) {
      if (running.length === 0) closeConnections();
      else setImmediate(() => setImmediate(closeConnections));
    }
    return { ended, cut: running.length };
  }
}
