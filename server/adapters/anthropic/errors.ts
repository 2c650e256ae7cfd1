// ProtocolError -> Anthropic's error shape: `{type: "error", error: {type, message}}` with the matching HTTP status,
// for whole responses and for the `error` event of a stream.
import type { ProtocolError, ProtocolErrorKind } from "../../protocol/internal.js";

/** Anthropic's error `type` for each internal error kind (the status is the kind's, see ERROR_STATUS, but for ANTHROPIC_STATUS). */
export const ANTHROPIC_ERROR_TYPES: Readonly<Record<ProtocolErrorKind, string>> = {
  invalid_request: "invalid_request_error",
  authentication: "authentication_error",
  permission: "permission_error",
  not_found: "not_found_error",
  method_not_allowed: "invalid_request_error",
  request_timeout: "timeout_error",
  request_too_large: "request_too_large",
  headers_too_large: "invalid_request_error",
  rate_limit: "rate_limit_error",
  insufficient_quota: "invalid_request_error",
  bad_gateway: "api_error",
  internal: "api_error",
  not_implemented: "invalid_request_error",
  overloaded: "overloaded_error",
};

/** Where Anthropic's status differs from the kind's: a spent credit balance is a 400 there. */
const ANTHROPIC_STATUS: Partial<Record<ProtocolErrorKind, number>> = { insufficient_quota: 400 };

/** The JSON body of an Anthropic error (also the `data` of a stream's `error` event). */
export interface AnthropicErrorBody {
  type: "error";
  error: { type: string; message: string; details?: Record<string, unknown> };
}

/** A complete error response: status, body, and headers to add (`retry-after` when the error says when to retry). */
export interface AnthropicErrorResponse {
  status: number;
  body: AnthropicErrorBody;
  headers: Record<string, string>;
}

/** The body of an Anthropic error for `error`. */
export function anthropicErrorPayload(error: ProtocolError): AnthropicErrorBody {
  const body: AnthropicErrorBody = { type: "error", error: { type: ANTHROPIC_ERROR_TYPES[error.kind], message: error.message } };
  if (error.details) body.error.details = error.details;
  return body;
}

/** The Anthropic error response for `error`. */
export function anthropicErrorBody(error: ProtocolError): AnthropicErrorResponse {
  const headers: Record<string, string> = {};
  if (error.retryAfterSeconds !== undefined && Number.isFinite(error.retryAfterSeconds)) headers["retry-after"] = String(Math.max(0, Math.ceil(error.retryAfterSeconds)));
  return { status: ANTHROPIC_STATUS[error.kind] ?? error.status, body: anthropicErrorPayload(error), headers };
}
