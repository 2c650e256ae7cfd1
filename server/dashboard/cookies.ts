// The dashboard session's cookie and the cross-site check of state-changing requests: the browser keeps
// the session token only in an HttpOnly, SameSite=Strict cookie (over TLS Secure, and named with the `__Host-` prefix,
// which browsers accept only Secure, for Path=/, without Domain: no subdomain or plain-HTTP page can plant or shadow
// it), and a request that changes state must come from the dashboard's own origin. Over HTTPS only the `__Host-`
// name is read (request-credentials.ts): a plain `loom_session` may have been planted by a plain-HTTP page of the
// site. Pure functions over header values; the routes do the I/O.

/** The session cookie's name over plain HTTP. */
export const SESSION_COOKIE = "loom_session";

/** The session cookie's name over HTTPS (Secure). */
export const SECURE_SESSION_COOKIE = `__Host-${SESSION_COOKIE}`;

/** The session cookie's name for a Secure cookie or not. */
export function sessionCookieName(secure: boolean): string {
  return secure ? SECURE_SESSION_COOKIE : SESSION_COOKIE;
}

/** The most Cookie header a request may carry that is read (browsers send at most about 4 KiB per cookie). */
const MAX_COOKIE_HEADER = 8192;

/** A cookie value as this server writes them (base64url and `_`): anything else is never a session token. */
const COOKIE_VALUE = /^[A-Za-z0-9_-]{1,200}$/;

/** The value of cookie `name` in a Cookie header, or undefined (absent, malformed, or the header too long). */
export function cookieValue(header: string, name: string): string | undefined {
  if (header.length > MAX_COOKIE_HEADER) return undefined;
  for (const pair of header.split(";")) {
    const equals = pair.indexOf("=");
    if (equals < 0 || pair.slice(0, equals).trim() !== name) continue;
    const value = pair.slice(equals + 1).trim();
    return COOKIE_VALUE.test(value) ? value : undefined;
  }
  return undefined;
}

/** Cookies of one name a request may carry that are read (a browser sends two when one was set for a parent domain). */
const MAX_SAME_NAME_COOKIES = 4;

/**
 * Every well-formed value of cookie `name` in a Cookie header, in order, distinct, at most a few ([] when the header
 * is too long).
 */
export function cookieValues(header: string, name: string): string[] {
  if (header.length > MAX_COOKIE_HEADER) return [];
  const values: string[] = [];
  for (const pair of header.split(";")) {
    const equals = pair.indexOf("=");
    if (equals < 0 || pair.slice(0, equals).trim() !== name) continue;
    const value = pair.slice(equals + 1).trim();
    if (COOKIE_VALUE.test(value) && !values.includes(value)) values.push(value);
    if (values.length === MAX_SAME_NAME_COOKIES) break;
  }
  return values;
}

/** The Set-Cookie header that gives the browser a session for `maxAgeSeconds`. */
export function sessionCookie(token: string, options: { secure: boolean; maxAgeSeconds: number }): string {
  if (!COOKIE_VALUE.test(token)) throw new Error("a session token must be base64url text");
  const maxAge = Math.max(0, Math.floor(options.maxAgeSeconds));
  return `${sessionCookieName(options.secure)}=${token}; Path=/; HttpOnly; SameSite=Strict; Max-Age=${maxAge}${options.secure ? "; Secure" : ""}`;
}

/** The Set-Cookie header that removes the session cookie of one name (`__Host-` when secure). */
export function clearedSessionCookie(options: { secure: boolean }): string {
  return `${sessionCookieName(options.secure)}=; Path=/; HttpOnly; SameSite=Strict; Max-Age=0${options.secure ? "; Secure" : ""}`;
}

/**
 * The response headers that remove both session cookies (signing out), one Set-Cookie line each: the browser may
 * hold a plain one from before its server was put behind HTTPS, or one a plain-HTTP page of the site planted, beside
 * the `__Host-` one. The plain one is cleared Secure over HTTPS; the `__Host-` one is always Secure (a browser ignores
 * it over plain HTTP).
 */
export function clearedSessionCookies(options: { secure: boolean }): { "set-cookie": readonly string[] } {
  const plain = `${SESSION_COOKIE}=; Path=/; HttpOnly; SameSite=Strict; Max-Age=0${options.secure ? "; Secure" : ""}`;
  return { "set-cookie": [clearedSessionCookie({ secure: true }), plain] };
}

/** The request headers the cross-site check reads. */
export interface RequestOrigin {
  /** `Host`. */
  host: string;
  /** `Origin` ("" when absent). */
  origin: string;
  /** `Sec-Fetch-Site` ("" when absent: an older browser, or not a browser). */
  secFetchSite: string;
}

/**
 * Why a state-changing request is refused as cross-site, or undefined when it may proceed. Browsers send
 * `Sec-Fetch-Site` and `Origin` on such requests: anything but the dashboard's own origin is refused. A request with
 * neither comes from no browser (a script holding the cookie already has the session), and proceeds; the CSRF token
 * header is checked beside this in any case.
 */
export function crossSiteRefusal(request: RequestOrigin): string | undefined {
  const site = request.secFetchSite.toLowerCase();
  if (site !== "" && site !== "same-origin") return `Sec-Fetch-Site is '${site.slice(0, 20)}': the dashboard accepts changes from its own pages only`;
  if (request.origin === "") return undefined;
  let originHost: string;
  try {
    originHost = new URL(request.origin).host;
  } catch {
    return "the Origin header is not a URL";
  }
  if (originHost.toLowerCase() !== request.host.toLowerCase()) return `the request comes from another origin (${request.origin.slice(0, 100)})`;
  return undefined;
}
