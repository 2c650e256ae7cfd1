// The web dashboard's front end: the files Vite builds into dist/dashboard/ (index.html and hashed assets), read into
// memory once at startup and served at /dashboard/. A path that names no file is a page of the single-page app and
// gets index.html; a missing asset is 404. Nothing outside the folder can be reached: requests are answered from the
// in-memory table only, and paths with dot segments, backslashes or NULs are refused outright.
import { createHash } from "node:crypto";
import { lstatSync, readFileSync, readdirSync } from "node:fs";
import { extname, join } from "node:path";
import type { HttpRequest } from "uWebSockets.js";
import { PACKAGE_ROOT } from "../../kernels/package-root.js";
import type { ServerContext } from "../http/context.js";
import type { ErrorResponder } from "../http/guard.js";
import type { Connection } from "../http/reply.js";
import type { Routes, Surface } from "../http/routes.js";

/** Where `npm run build` puts the front end: dist/dashboard of this package (found from this module, not the cwd). */
export const DEFAULT_DASHBOARD_FOLDER = join(PACKAGE_ROOT, "dist", "dashboard");

/** The most the front end may weigh in memory (it is a few hundred KiB; this bounds a wrong folder). */
export const MAX_DASHBOARD_BYTES = 20 * 1024 * 1024;
/** The most files it may have, and how deep its folders may go. */
const MAX_FILES = 2000;
const MAX_DEPTH = 8;

/** The policy of the dashboard's pages: its own scripts, styles and API only; no inline code, no framing. */
export const DASHBOARD_PAGE_CSP =
  "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; font-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

/** Headers of every static answer (errors included). */
const SECURITY_HEADERS: Readonly<Record<string, string>> = Object.freeze({
  "content-security-policy": DASHBOARD_PAGE_CSP,
  "x-content-type-options": "nosniff",
  "referrer-policy": "no-referrer",
});

/** Content types by extension; anything else is served as bytes. */
const CONTENT_TYPES: Readonly<Record<string, string>> = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".mjs": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".json": "application/json",
  ".map": "application/json",
  ".svg": "image/svg+xml",
  ".png": "image/png",
  ".jpg": "image/jpeg",
  ".jpeg": "image/jpeg",
  ".gif": "image/gif",
  ".webp": "image/webp",
  ".ico": "image/x-icon",
  ".woff": "font/woff",
  ".woff2": "font/woff2",
  ".txt": "text/plain; charset=utf-8",
  ".webmanifest": "application/manifest+json",
};

/** An asset Vite named by its content (`name-<hash>.ext`): it never changes, so browsers may keep it for a year. */
const HASHED_ASSET = /^assets\/(?:[^/]+\/)*[^/]+-[A-Za-z0-9_-]{8,}\.[A-Za-z0-9]+$/;

/** One file, ready to send. */
export interface StaticFile {
  body: Buffer;
  headers: Readonly<Record<string, string>>;
  /** A strong validator of its content, for If-None-Match. */
  etag: string;
}

/** The front end as loaded: its files by path relative to the folder (`index.html`, `assets/index-abc123.js`), or why not. */
export type DashboardFiles =
  | { available: true; folder: string; files: ReadonlyMap<string, StaticFile>; bytes: number }
  | { available: false; folder: string; reason: string };

/**
 * Reads the front end from `folder` (regular files only: links are not followed, dot-files are skipped). Never
 * throws: a missing, incomplete or oversized build is `available: false` with the reason, which /dashboard/ shows.
 */
export function loadDashboardFiles(folder: string = DEFAULT_DASHBOARD_FOLDER, maxBytes: number = MAX_DASHBOARD_BYTES): DashboardFiles {
  const files = new Map<string, StaticFile>();
  let bytes = 0;
  const unavailable = (reason: string): DashboardFiles => ({ available: false, folder, reason });
  const walk = (directory: string, prefix: string, depth: number): string | undefined => {
    if (depth > MAX_DEPTH) return `its folders nest more than ${MAX_DEPTH} deep`;
    for (const entry of readdirSync(directory, { withFileTypes: true })) {
      if (entry.name.startsWith(".")) continue;
      const path = join(directory, entry.name);
      const relative = `${prefix}${entry.name}`;
      if (entry.isDirectory()) {
        const problem = walk(path, `${relative}/`, depth + 1);
        if (problem) return problem;
        continue;
      }
      if (!entry.isFile()) continue;
      const size = lstatSync(path).size;
      bytes += size;
      if (bytes > maxBytes) return `it holds more than ${Math.round(maxBytes / 1024 / 1024)} MiB`;
      if (files.size >= MAX_FILES) return `it holds more than ${MAX_FILES} files`;
      files.set(relative, staticFile(relative, readFileSync(path)));
    }
    return undefined;
  };
  try {
    if (!lstatSync(folder).isDirectory()) return unavailable(`${folder} is not a folder`);
    const problem = walk(folder, "", 0);
    if (problem) return unavailable(`the dashboard build in ${folder} is refused: ${problem}`);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    return unavailable(code === "ENOENT" ? `the dashboard is not built (${folder} is missing)` : `the dashboard build in ${folder} cannot be read (${(error as Error).message})`);
  }
  if (!files.has("index.html")) return unavailable(`the dashboard is not built (${folder} has no index.html)`);
  return { available: true, folder, files, bytes };
}

function staticFile(path: string, body: Buffer): StaticFile {
  const extension = extname(path).toLowerCase();
  const cacheControl = HASHED_ASSET.test(path) ? "public, max-age=31536000, immutable" : "no-cache";
  const etag = `"${createHash("sha256").update(body).digest("base64url").slice(0, 27)}"`;
  return { body, etag, headers: { ...SECURITY_HEADERS, "content-type": CONTENT_TYPES[extension] ?? "application/octet-stream", "cache-control": cacheControl, etag } };
}

/** What a request path under /dashboard/ is: a file (or the app's index.html), or nothing. */
export function resolveDashboardPath(files: ReadonlyMap<string, StaticFile>, url: string): StaticFile | undefined {
  if (!url.startsWith("/dashboard/")) return undefined;
  let path: string;
  try {
    path = decodeURIComponent(url.slice("/dashboard/".length));
  } catch {
    return undefined;
  }
  if (path === "") return files.get("index.html");
  if (path.includes("\0") || path.includes("\\")) return undefined;
  const segments = path.split("/");
  // An empty segment is allowed only last (a trailing slash); `.` and `..` never.
  if (segments.some((segment, i) => segment === "." || segment === ".." || (segment === "" && i < segments.length - 1))) return undefined;
  const file = files.get(path);
  if (file) return file;
  // A missing asset, or any missing name with an extension, is a 404: a page of the app has no extension.
  if (path.startsWith("assets/") || segments.at(-1)!.includes(".")) return undefined;
  return files.get("index.html");
}

/** An answer of the static surface, sent whole to a GET and without its body to a HEAD. */
interface StaticAnswer {
  status: number;
  body: string | Buffer;
  headers: Readonly<Record<string, string>>;
}

/** The dashboard's static files at /dashboard/ (a 503 saying what to do when they are not built), to GET and HEAD. */
export function dashboardStaticSurface(dashboard: DashboardFiles): (context: ServerContext) => Surface {
  return (context) => ({
    register(routes: Routes) {
      addGet(context, routes, "/dashboard", () => ({ status: 301, body: "moved to /dashboard/\n", headers: { ...SECURITY_HEADERS, location: "/dashboard/", "content-type": "text/plain; charset=utf-8" } }));
      addGet(context, routes, "/dashboard/*", (req) => {
        if (!dashboard.available) return textAnswer(503, `${dashboard.reason}: run \`npm run build\` to build the web dashboard.\n`);
        const file = resolveDashboardPath(dashboard.files, req.getUrl());
        if (!file) return textAnswer(404, "no such file in the dashboard\n");
        const fresh = req.getHeader("if-none-match").split(",").some((tag) => tag.trim() === file.etag);
        return fresh ? { status: 304, body: "", headers: withoutContentType(file.headers) } : { status: 200, body: file.body, headers: file.headers };
      });
    },
    errorShapeFor(url) {
      return url === "/dashboard" || url.startsWith("/dashboard/") ? plainError : undefined;
    },
  });
}

/**
 * Where the dashboard is not served (loom serve without the platform: there is nobody to sign in): /dashboard/ says
 * so in plain text, 404.
 */
export function dashboardUnavailableSurface(reason: string): (context: ServerContext) => Surface {
  return (context) => ({
    register(routes: Routes) {
      for (const pattern of ["/dashboard", "/dashboard/*"]) addGet(context, routes, pattern, () => textAnswer(404, `${reason}\n`));
    },
    errorShapeFor(url) {
      return url === "/dashboard" || url.startsWith("/dashboard/") ? plainError : undefined;
    },
  });
}

/** Errors of the catch-all and the guard under /dashboard/ (a 405, a 500): `{error}` with the pages' headers. */
const plainError: ErrorResponder = (error) => ({
  status: error.status,
  body: { error: error.message },
  headers: { ...SECURITY_HEADERS, "cache-control": "no-store" },
});

function textAnswer(status: number, text: string): StaticAnswer {
  return { status, body: text, headers: { ...SECURITY_HEADERS, "content-type": "text/plain; charset=utf-8", "cache-control": "no-store" } };
}

/** Serves `answer` at `pattern` to GET (and so to HEAD: routes.ts answers it as the GET, without the body). */
function addGet(context: ServerContext, routes: Routes, pattern: string, answer: (req: HttpRequest) => StaticAnswer): void {
  routes.add("GET", pattern, () => plainError, (connection, req) => send(context, pattern, connection, answer(req)));
}

function send(context: ServerContext, route: string, connection: Connection, { status, body, headers }: StaticAnswer): void {
  context.metrics.request(route, status);
  connection.send(status, body, headers);
}

function withoutContentType(headers: Readonly<Record<string, string>>): Record<string, string> {
  const { "content-type": _omitted, ...rest } = headers;
  return rest;
}
