// Writes responses on uWebSockets.js: whole JSON bodies, and server-sent event streams that respect backpressure.
// Writes are corked (one syscall per batch) and skipped once the client is gone. Every response carries the request's
// id, and every callback uWS runs for it is guarded: an exception becomes that request's failure, never the process's.
import { STATUS_CODES } from "node:http";
import type { HttpResponse } from "uWebSockets.js";
import type { ClientOrigin } from "./client-address.js";

/** HSTS for responses to HTTPS requests (a year; subdomains are the operator's to vouch for, so not included). */
const STRICT_TRANSPORT_SECURITY = "max-age=31536000";

/** One request's response side: disconnect tracking, guarded callbacks and the writes. */
/** Response headers: a name with several values (Set-Cookie) is written as one line per value. */
export type ResponseHeaders = Readonly<Record<string, string | readonly string[]>>;

export class Connection {
  /** The client disconnected. */
  aborted = false;
  /** The response was ended by us. */
  done = false;
  /** The status line and headers went out (a stream started): a failure can no longer change the status. */
  started = false;
  private readonly abortHandlers: Array<() => void> = [];
  private readonly endHandlers: Array<() => void> = [];
  /** The response has ended (its last bytes went to uWS, or the socket was dropped) or the client has gone. */
  private ended = false;
  /** Where the request comes from (client-address.ts; guard.ts sets it before the handler runs). */
  client: ClientOrigin = { address: "", https: false };

  /**
   * @param requestId sent back as `x-request-id` and `request-id` (the headers the OpenAI and Anthropic SDKs read).
   * @param onFailure called with anything a guarded callback throws; it answers the request (see guard.ts).
   */
  constructor(readonly res: HttpResponse, readonly requestId: string, private readonly onFailure: (error: unknown) => void) {
    res.onAborted(this.guard(() => {
      this.aborted = true;
      for (const handler of this.abortHandlers.splice(0)) handler();
      this.markEnded();
    }));
  }

  /** Reports a failure the request cannot recover from: it is logged and answered (500, or the stream is cut). */
  fail(error: unknown): void {
    this.onFailure(error);
  }

  /** `callback`, with anything it throws turned into this request's failure. */
  guard<A extends unknown[], R>(callback: (...args: A) => R): (...args: A) => R | undefined {
    return (...args: A) => {
      try {
        return callback(...args);
      } catch (error) {
        this.fail(error);
        return undefined;
      }
    };
  }

  /** Runs `handler` when the client disconnects (at once if it already has). */
  onAbort(handler: () => void): void {
    if (this.aborted) handler();
    else this.abortHandlers.push(handler);
  }

  /**
   * Runs `handler` once the response has ended: sent in full, dropped, or its client gone (at once if it has). The
   * server counts a request in flight until then (drain.ts).
   */
  onEnd(handler: () => void): void {
    if (this.ended) handler();
    else this.endHandlers.push(handler);
  }

  private markEnded(): void {
    if (this.ended) return;
    this.ended = true;
    for (const handler of this.endHandlers.splice(0)) handler();
  }

  /** Receives the body's chunks (guarded). NOTE: uWS reuses a chunk's memory once the handler returns. */
  onData(handler: (chunk: ArrayBuffer, isLast: boolean) => void): void {
    this.res.onData(this.guard(handler));
  }

  /**
   * Close the connection once this complete response is sent, instead of keeping it alive for another request: set
   * by a drain (drain.ts), whose server would refuse that request. (Not for a stream: see endWrites.)
   */
  closeWhenDone = false;

  /**
   * The request is a HEAD (guard.ts sets it): `send` writes the status and headers with the body's length, and no
   * body. (No route streams an answer to a GET, so EventStream does not look at it.)
   */
  headOnly = false;

  /** Whether nothing more can be written. */
  get closed(): boolean {
    return this.aborted || this.done;
  }

  /** Sends a complete JSON response. */
  sendJson(status: number, body: unknown, headers: ResponseHeaders = {}, closeConnection = false): void {
    this.send(status, JSON.stringify(body), { "content-type": "application/json", ...headers }, closeConnection);
  }

  /**
   * Sends a complete response (text, or bytes such as a static file); `closeConnection` closes the socket after it (a request whose body was not read to
   * its end, or whose framing cannot be trusted, leaves bytes that must not be read as the next request).
   *
   * NOTE: a closing answer goes out on the next turn of the event loop, with the rest of the body discarded. Sent
   * from inside the handler, uWS would go on parsing the bytes it already holds, and a request smuggled behind this
   * one in the same segment would be served on the still-open connection; deferred, uWS's rule against pipelining
   * behind a pending response closes the socket instead.
   */
  send(status: number, body: string | Uint8Array, headers: ResponseHeaders, closeConnection = false): void {
    if (this.closed || this.started) return;
    this.done = true;
    const write = () => {
      this.res.cork(() => {
        // A HEAD kept alive through a drain is closed with the drain's other idle connections (drain.ts).
        if (this.headOnly) this.endHead(status, headers, typeof body === "string" ? Buffer.byteLength(body) : body.byteLength, closeConnection);
        else {
          this.writeHead(status, headers);
          this.res.end(body, closeConnection || this.closeWhenDone);
        }
      });
      this.markEnded();
    };
    if (!closeConnection) return write();
    this.res.onData(() => {});
    setImmediate(() => {
      if (!this.aborted) write();
    });
  }

  /**
   * Writes a bodiless answer's head, with `Content-Length: contentLength`, and ends it, keeping the connection open;
   * or, with `closeConnection` (an answer to a request whose framing cannot be trusted), closes it, and then uWS
   * writes `Content-Length: 0` itself: its binding ends a closing answer only that way (a length given to
   * endWithoutBody makes it send nothing, an explicit undefined becomes 2^63).
   */
  private endHead(status: number, headers: ResponseHeaders, contentLength: number, closeConnection: boolean): void {
    if (closeConnection) {
      this.writeHead(status, headers);
      this.res.end("", true);
    } else {
      this.writeHead(status, { ...headers, "content-length": String(contentLength) });
      this.res.endWithoutBody();
    }
  }

  /** Writes the status line, the request id and `headers` (once). */
  writeHead(status: number, headers: ResponseHeaders): void {
    this.started = true;
    this.res.writeStatus(statusLine(status));
    this.res.writeHeader("x-request-id", this.requestId);
    this.res.writeHeader("request-id", this.requestId);
    // Only what came over HTTPS through a trusted proxy: a plain-HTTP answer's HSTS would be ignored, a spoofed one a lie.
    if (this.client.https) this.res.writeHeader("strict-transport-security", STRICT_TRANSPORT_SECURITY);
    for (const [name, value] of Object.entries(headers)) {
      if (typeof value === "string") this.res.writeHeader(name, value);
      else for (const line of value) this.res.writeHeader(name, line);
    }
  }

  /** Ends a response whose head and body went out in writes (a stream). */
  endWrites(): void {
    if (this.closed) return;
    // NOTE: kept alive even when closeWhenDone: uWS cuts a written stream that it ends with its connection's close
    // (the client sees no last chunk); the drain closes the connection once nothing else is in flight.
    this.res.cork(() => this.res.end());
    this.done = true;
    this.markEnded();
  }

  /**
   * Drops the connection (a stream that failed after its status went out), so the client sees a broken stream, not a
   * finished one. NOTE: on the next turn of the event loop: uWS discards what is still corked when a socket closes.
   */
  terminate(): void {
    if (this.closed) return;
    this.done = true;
    setImmediate(() => {
      if (!this.aborted) this.res.close();
      this.markEnded();
    });
  }
}

/** A server-sent event stream on one response. */
export class EventStream {
  private drained: (() => void) | undefined;
  lastWriteAt = performance.now();

  /** @param headers further response headers (rate limits), sent with the status line. */
  constructor(private readonly connection: Connection, private readonly headers: Readonly<Record<string, string>> = {}) {}

  /**
   * Writes frames; resolves once the socket has taken them (waits on onWritable under backpressure, so a slow
   * reader slows the pull of events rather than growing buffers without bound).
   */
  async write(frames: string): Promise<void> {
    const connection = this.connection;
    const { res } = connection;
    if (connection.closed || frames === "") return;
    let ok = true;
    res.cork(() => {
      if (!connection.started) {
        connection.writeHead(200, { ...this.headers, "content-type": "text/event-stream; charset=utf-8", "cache-control": "no-cache", "x-accel-buffering": "no" });
      }
      ok = res.write(frames);
    });
    this.lastWriteAt = performance.now();
    if (ok || connection.closed) return;
    await new Promise<void>((resolve) => {
      this.drained = resolve;
      connection.onAbort(resolve);
      const drain = connection.guard(() => {
        this.drained?.();
        this.drained = undefined;
      });
      res.onWritable(() => {
        drain();
        return true;
      });
    });
  }

  /** Ends the stream. */
  end(): void {
    this.connection.endWrites();
  }
}

/** Reason phrases: Node's table (every IANA status), and 529 (Anthropic's "overloaded"), which it lacks. */
const REASONS: Readonly<Record<number, string | undefined>> = { ...STATUS_CODES, 529: "Overloaded" };

function statusLine(status: number): string {
  return `${status} ${REASONS[status] ?? "Status"}`;
}
