// The route table every surface registers into (inference, platform, later runs and payments): each route is guarded
// (guard.ts), counted under its name, and known to the catch-all, which answers 405 with `Allow` for a known path
// and 404 otherwise, in the error shape of the surface that owns the path.
import type { HttpRequest, TemplatedApp } from "uWebSockets.js";
import { type ErrorResponder, type GuardContext, type GuardedHandler, guarded } from "./guard.js";

export type Method = "GET" | "HEAD" | "POST" | "PATCH" | "DELETE";

/** A group of routes served from its own folder (server/inference/routes.ts, server/platform/routes.ts, ...). */
export interface Surface {
  /** Adds its routes. */
  register(routes: Routes): void;
  /** The error shape for a request to an unknown path this surface owns (e.g. anything under /api/v1/), if it owns it. */
  errorShapeFor?(url: string, header: (name: string) => string): ErrorResponder | undefined;
}

/** One registered route, for the catch-all's 405s and the HEAD routes of GET routes. */
interface RouteEntry {
  method: Method;
  /** The uWS pattern: exact, or ending in `/*`, with `:name` segments. */
  pattern: string;
  errors: (req: HttpRequest) => ErrorResponder;
  handler: GuardedHandler;
  route: string;
}

/** The server's routes. uWS matches a request to the most specific pattern; the catch-all gets the rest. */
export class Routes {
  private readonly entries: RouteEntry[] = [];

  constructor(private readonly app: TemplatedApp, private readonly guard: GuardContext) {}

  /**
   * Serves `method pattern`. `route` names it in metrics and logs (default: the pattern); `errors` picks the error
   * shape from the request, before the handler runs.
   */
  add(method: Method, pattern: string, errors: (req: HttpRequest) => ErrorResponder, handler: GuardedHandler, route = pattern): void {
    const wrapped = guarded(this.guard, route, errors, handler);
    if (method === "GET") this.app.get(pattern, wrapped);
    else if (method === "HEAD") this.app.head(pattern, wrapped);
    else if (method === "POST") this.app.post(pattern, wrapped);
    else if (method === "PATCH") this.app.patch(pattern, wrapped);
    else this.app.del(pattern, wrapped);
    this.entries.push({ method, pattern, errors, handler, route });
  }

  /**
   * Serves HEAD on every GET route that has no HEAD route of its own (RFC 9110: a server that serves GET serves
   * HEAD): the GET's handler runs, and its answer goes out as the status and headers, with the body's length and
   * no body (guard.ts marks every HEAD's connection `headOnly`). Called once every surface has registered, before the catch-all.
   */
  addHeadForGets(): void {
    const withHead = new Set(this.entries.filter((entry) => entry.method === "HEAD").map((entry) => entry.pattern));
    for (const entry of this.entries.filter((candidate) => candidate.method === "GET" && !withHead.has(candidate.pattern))) {
      this.add("HEAD", entry.pattern, entry.errors, entry.handler, entry.route);
    }
  }

  /** The methods some route serves at `url` ("GET, POST"), or undefined when no route has that path. */
  methodsOf(url: string): string | undefined {
    const methods = [...new Set(this.entries.filter((entry) => matches(entry.pattern, url)).map((entry) => entry.method))];
    return methods.length > 0 ? methods.join(", ") : undefined;
  }
}

/** Whether a uWS pattern matches a path: `:name` takes one non-empty segment, a trailing `/*` any rest. */
function matches(pattern: string, url: string): boolean {
  const wildcard = pattern.endsWith("/*");
  const patternParts = (wildcard ? pattern.slice(0, -2) : pattern).split("/");
  const urlParts = url.split("/");
  if (wildcard ? urlParts.length <= patternParts.length : urlParts.length !== patternParts.length) return false;
  return patternParts.every((part, i) => (part.startsWith(":") ? urlParts[i] !== "" : part === urlParts[i]));
}
