// Writes responses on uWebSockets.js: whole JSON bodies, and server-sent event streams that respect backpressure.
// Writes are corked (one syscall per batch) and skipped once the client is gone.
import type { HttpResponse } from "uWebSockets.js";

/** Tracks whether the client disconnected; register it first thing in a route handler. */
export class Connection {
  /** The client disconnected. */
  aborted = false;
  /** The response was ended by us. */
  done = false;
  private readonly abortHandlers: Array<() => void> = [];

  constructor(readonly res: HttpResponse) {
    res.onAborted(() => {
      this.aborted = true;
      for (const handler of this.abortHandlers.splice(0)) handler();
    });
  }

  /** Runs `handler` when the client disconnects (at once if it already has). */
  onAbort(handler: () => void): void {
    if (this.aborted) handler();
    else this.abortHandlers.push(handler);
  }

  /** Sends a complete response. */
  sendJson(status: number, body: unknown, headers: Record<string, string> = {}): void {
    this.send(status, JSON.stringify(body), { "content-type": "application/json", ...headers });
  }

  /** Whether nothing more can be written. */
  get closed(): boolean {
    return this.aborted || this.done;
  }

  send(status: number, body: string, headers: Record<string, string>): void {
    if (this.closed) return;
    this.res.cork(() => {
      this.res.writeStatus(statusLine(status));
      for (const [name, value] of Object.entries(headers)) this.res.writeHeader(name, value);
      this.res.end(body);
    });
    this.done = true;
  }
}

/** A server-sent event stream on one response. */
export class EventStream {
  private started = false;
  private drained: (() => void) | undefined;
  lastWriteAt = performance.now();

  constructor(private readonly connection: Connection) {}

  /**
   * Writes frames; resolves once the socket has taken them (waits on onWritable under backpressure, so a slow
   * reader slows the pull of events rather than growing buffers without bound).
   */
  async write(frames: string): Promise<void> {
    const { res } = this.connection;
    if (this.connection.closed || frames === "") return;
    let ok = true;
    res.cork(() => {
      if (!this.started) {
        this.started = true;
        res.writeStatus("200 OK");
        res.writeHeader("content-type", "text/event-stream; charset=utf-8");
        res.writeHeader("cache-control", "no-cache");
        res.writeHeader("x-accel-buffering", "no");
      }
      ok = res.write(frames);
    });
    this.lastWriteAt = performance.now();
    if (ok || this.connection.closed) return;
    await new Promise<void>((resolve) => {
      this.drained = resolve;
      this.connection.onAbort(resolve);
      res.onWritable(() => {
        this.drained?.();
        this.drained = undefined;
        return true;
      });
    });
  }

  /** Ends the stream. */
  end(): void {
    if (this.connection.closed) return;
    this.connection.res.cork(() => this.connection.res.end());
    this.connection.done = true;
  }
}

const REASONS: Record<number, string> = {
  200: "OK", 400: "Bad Request", 401: "Unauthorized", 403: "Forbidden", 404: "Not Found", 405: "Method Not Allowed",
  413: "Payload Too Large", 429: "Too Many Requests", 500: "Internal Server Error", 503: "Service Unavailable", 529: "Overloaded",
};

function statusLine(status: number): string {
  return `${status} ${REASONS[status] ?? "Status"}`;
}
