// A loom server: the HTTP mechanism (server/http/app.ts) with the inference surface, and whichever further surfaces
// the caller adds (the platform's, when it is on).
import { type LoomServer, type ServerOptions, type SurfaceFactory, listen } from "./http/app.js";
import { inferenceSurface } from "./inference/routes.js";

export type { LoomServer, ServerOptions, SurfaceFactory } from "./http/app.js";

/**
 * Starts serving inference (and `surfaces`) on `host:port`; resolves with the bound port (pass 0 for any free port).
 * @throws UwsUnavailableError when no uWebSockets.js build loads here; Error when the address cannot be bound.
 */
export function startServer(options: ServerOptions, host: string, port: number, surfaces: readonly SurfaceFactory[] = []): Promise<LoomServer> {
  return listen(options, [inferenceSurface, ...surfaces], host, port);
}
