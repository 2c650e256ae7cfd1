// What a dashboard request presents about its caller, read from its headers at once (a uWS HttpRequest is valid only
// until the handler returns): the session cookie, a bearer credential, the CSRF header and the cross-site headers.
import type { HttpRequest } from "uWebSockets.js";
import { type RequestOrigin, SECURE_SESSION_COOKIE, SESSION_COOKIE, cookieValues } from "./cookies.js";

/** The caller-related headers of one request. */
export interface DashboardCredentials {
  /**
   * The session cookie's value, when the request carries a well-formed one: over HTTPS the `__Host-` one only (a
   * plain `loom_session` can be planted by a plain-HTTP page of the site: session fixation); over plain HTTP the
   * `__Host-` one first, else the plain one.
   */
  sessionToken: string | undefined;
  /** Every well-formed session cookie value the request carries, under either name (signing out ends them all). */
  presentedSessionTokens: string[];
  /** The browser reached this server over HTTPS, as a proxy in front says (see {@link credentialsOf}). */
  https: boolean;
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

/**
 * Reads the caller's headers. HTTPS is what any `X-Forwarded-Proto` value says, from any peer (beside the trusted
 * proxies' word, client-address.ts, which always agrees when it says HTTPS): loom serves plain HTTP only, so HTTPS
 * means a proxy in front, perhaps not yet listed in `trustedProxies`, and the header only decides the caller's own
 * cookie (its Secure flag and `__Host-` name, and that only the `__Host-` one is read): a client that claims HTTPS
 * falsely harms only its own session, and a browser cannot be made to send the header. HSTS, which binds the whole
 * host, follows the trusted proxies' word alone.
 * NOTE: call synchronously from the handler.
 */
export function credentialsOf(req: HttpRequest): DashboardCredentials {
  const authorization = req.getHeader("authorization");
  const bearer = /^Bearer\s+(\S+)\s*$/i.exec(authorization)?.[1];
  const csrfToken = req.getHeader("x-csrf-token").trim();
  // Every line of each: a browser sends one Cookie line, but a client or a proxy may split it, and a proxy may add
  // its own X-Forwarded-Proto line after one the client wrote.
  const cookieLines: string[] = [];
  let https = false;
  req.forEach((name, value) => {
    if (name === "cookie") cookieLines.push(value);
    else if (name === "x-forwarded-proto" && !https) https = value.split(",").some((proto) => proto.trim().toLowerCase() === "https");
  });
  const cookies = cookieLines.join("; ");
  const secureTokens = cookieValues(cookies, SECURE_SESSION_COOKIE);
  const plainTokens = cookieValues(cookies, SESSION_COOKIE);
  return {
    sessionToken: https ? secureTokens[0] : (secureTokens[0] ?? plainTokens[0]),
    presentedSessionTokens: [...new Set([...secureTokens, ...plainTokens])],
    https,
    bearer: bearer !== undefined && bearer.length <= MAX_CREDENTIAL_LENGTH ? bearer : undefined,
    malformedAuthorization: authorization !== "" && (bearer === undefined || bearer.length > MAX_CREDENTIAL_LENGTH),
    csrfToken: csrfToken.length <= MAX_CREDENTIAL_LENGTH ? csrfToken : "",
    origin: { host: req.getHeader("host"), origin: req.getHeader("origin"), secFetchSite: req.getHeader("sec-fetch-site") },
  };
}
