// A raw HTTP/1.1 client for tests of the server's parsing and limits: it writes exactly the bytes given (pipelined
// requests, broken framing, stalls, half-closes) and reads back every response the server sends until the socket
// closes or goes quiet.
import { connect, type Socket } from "node:net";

/** One response as read off the socket. */
export interface RawResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** What came back for a raw exchange. */
export interface RawExchange {
  responses: RawResponse[];
  /** The server closed the connection (rather than the read stopping on quiet). */
  closed: boolean;
  /** Everything received, as text. */
  raw: string;
}

/** Options for {@link rawExchange}. */
export interface RawOptions {
  /** Shut down the write side after sending (a client that half-closes after its request). */
  halfClose?: boolean;
  /** Stop reading after this long without new bytes (default 1500 ms). */
  quietMs?: number;
  /** Bytes written later, after `delayMs` (a stalled body that resumes). */
  later?: { bytes: string | Buffer; delayMs: number };
}

/** Sends `bytes` to 127.0.0.1:`port` and collects the responses. */
export function rawExchange(port: number, bytes: string | Buffer, options: RawOptions = {}): Promise<RawExchange> {
  return new Promise((resolve, reject) => {
    const socket: Socket = connect(port, "127.0.0.1");
    const chunks: Buffer[] = [];
    let closed = false;
    let quiet: NodeJS.Timeout | undefined;
    const done = () => {
      clearTimeout(quiet);
      socket.destroy();
      const raw = Buffer.concat(chunks).toString("latin1");
      resolve({ responses: parseResponses(raw), closed, raw });
    };
    const armQuiet = () => {
      clearTimeout(quiet);
      quiet = setTimeout(done, options.quietMs ?? 1500);
    };
    socket.on("connect", () => {
      socket.write(bytes);
      if (options.later) {
        const { bytes: rest, delayMs } = options.later;
        setTimeout(() => {
          if (!socket.destroyed) socket.write(rest);
        }, delayMs);
      }
      if (options.halfClose) socket.end();
      armQuiet();
    });
    socket.on("data", (chunk) => {
      chunks.push(chunk);
      armQuiet();
    });
    socket.on("end", () => {
      closed = true;
      done();
    });
    socket.on("close", () => {
      closed = true;
      done();
    });
    socket.on("error", (error: NodeJS.ErrnoException) => {
      if (error.code === "ECONNRESET" || error.code === "EPIPE") {
        closed = true;
        done();
      } else reject(error);
    });
  });
}

/** Splits a byte stream into responses (Content-Length or chunked bodies). */
function parseResponses(raw: string): RawResponse[] {
  const responses: RawResponse[] = [];
  let rest = raw;
  while (rest.length > 0) {
    const headEnd = rest.indexOf("\r\n\r\n");
    if (headEnd < 0) break;
    const [statusLine, ...lines] = rest.slice(0, headEnd).split("\r\n");
    const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(statusLine)?.[1] ?? Number.NaN);
    const headers: Record<string, string> = {};
    for (const line of lines) {
      const colon = line.indexOf(":");
      if (colon > 0) headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
    }
    rest = rest.slice(headEnd + 4);
    let body = "";
    if (headers["content-length"] !== undefined) {
      const length = Number(headers["content-length"]);
      body = rest.slice(0, length);
      rest = rest.slice(length);
    } else if (/chunked/i.test(headers["transfer-encoding"] ?? "")) {
      for (;;) {
        const sizeEnd = rest.indexOf("\r\n");
        if (sizeEnd < 0) break;
        const size = Number.parseInt(rest.slice(0, sizeEnd), 16);
        if (!Number.isFinite(size)) break;
        body += rest.slice(sizeEnd + 2, sizeEnd + 2 + size);
        rest = rest.slice(sizeEnd + 2 + size + 2);
        if (size === 0) break;
      }
    } else {
      body = rest;
      rest = "";
    }
    responses.push({ status, headers, body });
  }
  return responses;
}

/** A request's bytes: the request line, headers (Host added) and body. */
export function rawRequest(method: string, path: string, headers: Record<string, string | string[]> = {}, body = ""): string {
  let text = `${method} ${path} HTTP/1.1\r\nhost: 127.0.0.1\r\n`;
  for (const [name, value] of Object.entries(headers)) for (const item of Array.isArray(value) ? value : [value]) text += `${name}: ${item}\r\n`;
  return `${text}\r\n${body}`;
}
