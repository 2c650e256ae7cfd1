// Every call to the dashboard API: same-origin cookies, the session's CSRF token on state-changing calls, JSON in
// and out, and the platform's `{error, field}` turned into an ApiError. A 401 on any call but the session's own
// ends the session in the app (back to sign-in, "your session ended").

export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly field?: string,
    readonly retryAfter?: number,
  ) {
    super(message);
  }
}

let csrfToken: string | undefined;
let onUnauthorized: (() => void) | undefined;

export function setCsrfToken(token: string | undefined): void {
  csrfToken = token;
}

export function setUnauthorizedHandler(handler: () => void): void {
  onUnauthorized = handler;
}

type Method = "GET" | "POST" | "PATCH" | "DELETE";

/** Query string of the defined values. */
export function query(params: Record<string, string | number | null | undefined>): string {
  const search = new URLSearchParams();
  for (const [name, value] of Object.entries(params)) if (value !== undefined && value !== null && value !== "") search.set(name, String(value));
  const text = search.toString();
  return text ? `?${text}` : "";
}

export async function api<T>(method: Method, path: string, body?: unknown, options: { signal?: AbortSignal; sessionCall?: boolean } = {}): Promise<T> {
  const headers: Record<string, string> = { Accept: "application/json" };
  if (body !== undefined) headers["Content-Type"] = "application/json";
  if (method !== "GET" && csrfToken) headers["X-CSRF-Token"] = csrfToken;
  let response: Response;
  try {
    response = await fetch(path, {
      method,
      headers,
      credentials: "same-origin",
      cache: "no-store",
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: options.signal,
    });
  } catch (error) {
    if ((error as Error).name === "AbortError") throw error;
    throw new ApiError(0, "The server could not be reached. Check your connection and try again.");
  }
  let data: unknown = undefined;
  const text = await response.text();
  if (text) {
    try {
      data = JSON.parse(text);
    } catch {
      data = undefined;
    }
  }
  if (response.ok) return data as T;
  const error = (data && typeof data === "object" ? data : {}) as { error?: unknown; field?: unknown };
  const message = typeof error.error === "string" ? error.error : `The server answered ${response.status}${response.statusText ? ` ${response.statusText}` : ""}.`;
  const retry = Number(response.headers.get("Retry-After"));
  const failure = new ApiError(response.status, message, typeof error.field === "string" ? error.field : undefined, Number.isFinite(retry) && retry > 0 ? retry : undefined);
  if (response.status === 401 && !options.sessionCall) onUnauthorized?.();
  throw failure;
}

/** A message for an error a page shows (aborted requests are not errors). */
export function errorText(error: unknown): string {
  if (error instanceof ApiError) {
    if (error.status === 429) return `${error.message}${error.retryAfter ? ` Try again in ${error.retryAfter} s.` : ""}`;
    return error.message;
  }
  return error instanceof Error ? error.message : String(error);
}

export function isAbort(error: unknown): boolean {
  return error instanceof Error && error.name === "AbortError";
}
