// A real loom server for the dashboard's tests: the platform (on a test database), its routes and the dashboard's
// surfaces, with no model (an empty registry, as a gateway has before its workers come), so it starts in a second.
// Plain code, no test-runner imports.
import { createEndpoints } from "../../adapters/endpoints.js";
import type { SurfaceFactory } from "../../http/app.js";
import type { ServerLog } from "../../http/log.js";
import { ModelRegistry } from "../../models.js";
import { CallbackStore } from "../../runs/callbacks/callback-store.js";
import { RunStore } from "../../runs/run-store.js";
import { type LoomServer, startServer } from "../../server.js";
import { type Platform, type PlatformOptions, openPlatform } from "../../platform/platform.js";
import { DashboardSessionStore } from "../../platform/store/dashboard-session-store.js";
import type { DashboardAuth } from "../dashboard-auth.js";
import type { DashboardFiles } from "../static-files.js";
import { type DashboardDependencies, dashboardSurfaces } from "../surfaces.js";

/** A running dashboard server. */
export interface DashboardServer {
  /** `http://127.0.0.1:<port>`. */
  base: string;
  port: number;
  platform: Platform;
  sessions: DashboardSessionStore;
  auth: DashboardAuth;
  close(): Promise<void>;
}

/** What to start it with. */
export interface DashboardServerOptions {
  platform: PlatformOptions;
  files?: DashboardFiles;
  /** Overrides of the dashboard's dependencies (a limit store of its own, another sign-in limit). */
  dashboard?: Partial<Omit<DashboardDependencies, "platform" | "sessions" | "runs">> & { platform?: Partial<DashboardDependencies["platform"]> };
  /** Surfaces the test adds (probes of DashboardAuth), given the server's DashboardAuth. */
  extraSurfaces?: (auth: DashboardAuth) => SurfaceFactory[];
  log?: ServerLog;
  /** The server's trusted reverse proxies (ServerOptions.trustedProxies). */
  trustedProxies?: string[];
}

/** Opens the platform and starts a server on a free port with the platform's and the dashboard's surfaces. */
export async function startDashboardServer(options: DashboardServerOptions): Promise<DashboardServer> {
  const platform = await openPlatform(options.platform);
  let server: LoomServer;
  const sessions = new DashboardSessionStore(platform.database);
  const { platform: platformOverrides, ...dashboardOverrides } = options.dashboard ?? {};
  const files: DashboardFiles = options.files ?? { available: false, folder: "(none)", reason: "no front end in this test" };
  // The runs pages read the run store; no worker takes runs here, so none is cancelled in this process.
  const callbacks = new CallbackStore(platform.database);
  const runs = { store: new RunStore(platform.database), cancelHere: () => false, callbackOf: (runId: string) => callbacks.deliveryOf(runId) };
  const dashboard = dashboardSurfaces({ platform: { ...platform, ...platformOverrides }, runs, sessions, files, ...dashboardOverrides });
  try {
    const registry = new ModelRegistry([]);
    const serverOptions = { registry, auth: platform.authenticator, accountant: platform.accountant, endpoints: createEndpoints(registry), ...(options.log ? { log: options.log } : {}), trustedProxies: options.trustedProxies };
    server = await startServer(serverOptions, "127.0.0.1", 0, [platform.surface, ...dashboard.surfaces, ...(options.extraSurfaces?.(dashboard.auth) ?? [])]);
  } catch (error) {
    await platform.close();
    throw error;
  }
  return {
    base: `http://127.0.0.1:${server.port}`,
    port: server.port,
    platform,
    sessions,
    auth: dashboard.auth,
    async close() {
      server.close();
      await platform.close();
    },
  };
}
