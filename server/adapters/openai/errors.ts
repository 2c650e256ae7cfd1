// Maps a ProtocolError to an OpenAI-style error response: status, `{error: {message, type, param, code}}` body, and
// the Retry-After header for rate limits and overload.
import type { ProtocolError, ProtocolErrorKind } from "../../protocol/internal.js";

/** OpenAI's error object. */
export interface OpenAiErrorObject {
  message: string;
  type: string;
  param: string | null;
  code: string | null;
}

/** An error response ready for the HTTP layer to write. */
export interface OpenAiErrorResponse {
  status: number;
  body: { error: OpenAiErrorObject };
  headers: Record<string, string>;
}

/**
 * Status, OpenAI error type and code per error kind.
 *
 * NOTE: overload is 503 with `code: "server_overloaded"` (and Retry-After), so that clients can tell the server being
 * at capacity from their own key's rate limit (429 `rate_limit_exceeded`); the official SDKs retry both.
 */
const OPENAI_ERRORS: Record<ProtocolErrorKind, { status: number; type: string; code: string | null }> = {
  invalid_request: { status: 400, type: "invalid_request_error", code: null },
  authentication: { status: 401, type: "authentication_error", code: null },
  permission: { status: 403, type: "permission_error", code: null },
  not_found: { status: 404, type: "invalid_request_error", code: null },
  method_not_allowed: { status: 405, type: "invalid_request_error", code: "method_not_allowed" },
  request_timeout: { status: 408, type: "invalid_request_error", code: "request_timeout" },
  request_too_large: { status: 413, type: "request_too_large", code: null },
  headers_too_large: { status: 431, type: "invalid_request_error", code: "headers_too_large" },
  rate_limit: { status: 429, type: "rate_limit_error", code: "rate_limit_exceeded" },
  insufficient_quota: { status: 429, type: "insufficient_quota", code: "insufficient_quota" },
  bad_gateway: { status: 502, type: "server_error", code: null },
  internal: { status: 500, type: "server_error", code: null },
  not_implemented: { status: 501, type: "invalid_request_error", code: "not_implemented" },
  overloaded: { status: 503, type: "server_error", code: "server_overloaded" },
};

/** The OpenAI error object alone, as a stream's error frame carries it. */
export function openAiErrorObject(error: ProtocolError): OpenAiErrorObject {
  const mapping = OPENAI_ERRORS[error.kind];
  // A missing model is OpenAI's `model_not_found`; other 404s have no specific code.
  const code = error.kind === "not_found" && error.param === "model" ? "model_not_found" : mapping.code;
  return { message: error.message, type: mapping.type, param: error.param ?? null, code };
}

/** The full error response: status, body and headers (Retry-After, in whole seconds, when the error carries one). */
export function openAiErrorBody(error: ProtocolError): OpenAiErrorResponse {
  const headers: Record<string, string> = {};
  const retryAfter = error.retryAfterSeconds;
  if (retryAfter !== undefined && Number.isFinite(retryAfter)) headers["Retry-After"] = String(Math.ceil(Math.max(0, retryAfter)));
  return { status: OPENAI_ERRORS[error.kind].status, body: { error: openAiErrorObject(error) }, headers };
}
