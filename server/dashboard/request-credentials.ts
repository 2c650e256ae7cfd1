// What a dashboard request presents about its caller, read from its headers at once (a uWS HttpRequest is valid only
// until the handler returns): the session cookie, a bearer credential, the CSRF header and the cross-site headers.
import type { HttpRequest } from "uWebSockets.js";
import { type RequestOrigin, SECURE_SESSION_COOKIE, SESSION_COOKIE, cookieValue } from "./cookies.js";

/** The caller-related headers of one request. */
export interface DashboardCredentials {
  /** The session cookie's value, when the request carries a well-formed one (the `__Host-` one first). */
  sessionToken: string | undefined;
  /** The `Authorization: Bearer` credential; undefined without the header. */
  bearer: string | undefined;
  /** An Authorization header that is not `Bearer <credential>` (refused rather than ignored). */
  malformedAuthorization: boolean;
  /** `X-CSRF-Token` ("" when absent). */
  csrfToken: string;
  /** Host, Origin and Sec-Fetch-Site, for the cross-site check. */
  origin: RequestOrigin;
}

/** The longest credential or CSRF token read (every key and token loom mints is under 100 characters). */
export const MAX_CREDENTIAL_LENGTH = 200;

/** Reads the caller's headers. NOTE: call synchronously from the handler. */
export function credentialsOf(req: HttpRequest): DashboardCredentials {
  const authorization = req.getHeader("authorization");
  const bearer = /^Bearer\s+(\S+)\s*$/i.exec(authorization)?.[1];
  const csrfToken = req.getHeader("x-csrf-token").trim();
  const cookies = req.getHeader("cookie");
  return {
    // Both names: a browser signed in before its server was put behind HTTPS still holds the plain one.
    sessionToken: cookieValue(cookies, SECURE_SESSION_COOKIE) ?? cookieValue(cookies, SESSION_COOKIE),
    bearer: bearer !== undefined && bearer.length <= MAX_CREDENTIAL_LENGTH ? bearer : undefined,
    malformedAuthorization: authorization !== "" && (bearer === undefined || bearer.length > MAX_CREDENTIAL_LENGTH),
    csrfToken: csrfToken.length <= MAX_CREDENTIAL_LENGTH ? csrfToken : "",
    origin: { host: req.getHeader("host"), origin: req.getHeader("origin"), secFetchSite: req.getHeader("sec-fetch-site") },
  };
}

/**
 * Whether the browser says it reached this server over HTTPS. loom serves plain HTTP only, so HTTPS means a proxy in
 * front that says so in `X-Forwarded-Proto`. Believed from any peer here (beside the trusted proxies' word,
 * client-address.ts), so that a proxy not yet listed in `trustedProxies` still gets Secure cookies: the header only
 * decides the Secure flag (and `__Host-` name) of the caller's own cookie, so a client that lies about it harms only
 * its own session. HSTS, which binds the whole host, follows the trusted proxies' word alone.
 */
export function reachedOverHttps(req: HttpRequest): boolean {
  return req.getHeader("x-forwarded-proto").split(",")[0]!.trim().toLowerCase() === "https";
}
