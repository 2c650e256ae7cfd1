// Refuses requests whose length framing is ambiguous: two Content-Length headers, a non-numeric one, Content-Length
// beside Transfer-Encoding, or a transfer coding other than chunked. A proxy in front may frame such a request
// differently than uWebSockets.js does, which is how requests are smuggled past it (RFC 9112 sections 6.1 and 6.3).
// Also, in the same pass over the headers, headers larger than loom serves: a 431 in JSON (uWebSockets.js's own 431,
// past the larger limit it parses, is a fixed HTML page).
import type { HttpRequest } from "uWebSockets.js";
import { ProtocolError } from "../protocol/internal.js";
import { REQUEST_HEADERS_LIMIT } from "./uws.js";

/**
 * The framing error of a request (or its headers' excess size), or undefined when its framing is unambiguous.
 * NOTE: call before the first await.
 */
export function framingError(req: HttpRequest, headersLimit = REQUEST_HEADERS_LIMIT): ProtocolError | undefined {
  const lengths: string[] = [];
  const codings: string[] = [];
  // Bytes of the header lines as sent: "name: value" and CRLF.
  let headerBytes = 0;
  req.forEach((name, value) => {
    headerBytes += name.length + value.length + 4;
    if (name === "content-length") lengths.push(value);
    else if (name === "transfer-encoding") codings.push(value);
  });
  if (headerBytes > headersLimit) {
    return new ProtocolError("headers_too_large", `the request's headers take ${headerBytes} bytes; the limit is ${headersLimit} (all header lines together)`);
  }
  if (lengths.length > 1) return new ProtocolError("invalid_request", "the request has more than one Content-Length header");
  if (lengths.length === 1 && !/^\d{1,15}$/.test(lengths[0].trim())) return new ProtocolError("invalid_request", "the Content-Length header must be a decimal number of bytes");
  if (codings.length === 0) return undefined;
  if (lengths.length > 0) return new ProtocolError("invalid_request", "the request has both Content-Length and Transfer-Encoding headers");
  if (codings.length > 1 || codings[0].trim().toLowerCase() !== "chunked") {
    return new ProtocolError("not_implemented", "the only transfer coding accepted is a single 'Transfer-Encoding: chunked'");
  }
  return undefined;
}
