// Refuses requests whose length framing is ambiguous: two Content-Length headers, a non-numeric one, Content-Length
// beside Transfer-Encoding, or a transfer coding other than chunked. A proxy in front may frame such a request
// differently than uWebSockets.js does, which is how requests are smuggled past it (RFC 9112 sections 6.1 and 6.3).
import type { HttpRequest } from "uWebSockets.js";
import { ProtocolError } from "../protocol/internal.js";

/** The framing error of a request, or undefined when its framing is unambiguous. NOTE: call before the first await. */
export function framingError(req: HttpRequest): ProtocolError | undefined {
  const lengths: string[] = [];
  const codings: string[] = [];
  req.forEach((name, value) => {
    if (name === "content-length") lengths.push(value);
    else if (name === "transfer-encoding") codings.push(value);
  });
  if (lengths.length > 1) return new ProtocolError("invalid_request", "the request has more than one Content-Length header");
  if (lengths.length === 1 && !/^\d{1,15}$/.test(lengths[0].trim())) return new ProtocolError("invalid_request", "the Content-Length header must be a decimal number of bytes");
  if (codings.length === 0) return undefined;
  if (lengths.length > 0) return new ProtocolError("invalid_request", "the request has both Content-Length and Transfer-Encoding headers");
  if (codings.length > 1 || codings[0].trim().toLowerCase() !== "chunked") {
    return new ProtocolError("not_implemented", "the only transfer coding accepted is a single 'Transfer-Encoding: chunked'");
  }
  return undefined;
}
