// The headers of every dashboard API answer (README.md in this folder): JSON that is never a page, never framed,
// never cached (it carries keys and usage), and never sniffed into something else.

/** Headers every `/api/v1/dashboard/` and `/api/v1/operator/` answer carries, errors included. */
export const DASHBOARD_API_HEADERS: Readonly<Record<string, string>> = Object.freeze({
  "content-security-policy": "default-src 'none'; frame-ancestors 'none'",
  "cache-control": "no-store",
  "x-content-type-options": "nosniff",
});

/** The path families of the dashboard's JSON API (README.md in this folder). */
export const DASHBOARD_API_PREFIXES: readonly string[] = Object.freeze(["/api/v1/dashboard/", "/api/v1/operator/"]);

/** Whether a request path belongs to the dashboard's JSON API (its answers carry {@link DASHBOARD_API_HEADERS}). */
export function isDashboardApiPath(url: string): boolean {
  return DASHBOARD_API_PREFIXES.some((prefix) => url.startsWith(prefix)) || url === "/api/v1/dashboard" || url === "/api/v1/operator";
}
