// The headers of every dashboard API answer (README.md in this folder): JSON that is never a page, never framed,
// never cached (it carries keys and usage), and never sniffed into something else.

/** Headers every `/api/v1/dashboard/` and `/api/v1/operator/` answer carries, errors included. */
export const DASHBOARD_API_HEADERS: Readonly<Record<string, string>> = Object.freeze({
  "content-security-policy": "default-src 'none'; frame-ancestors 'none'",
  "cache-control": "no-store",
  "x-content-type-options": "nosniff",
});
