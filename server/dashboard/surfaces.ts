// The web dashboard's surfaces, together: sign-in sessions, the data endpoints (which ask `auth` who is calling), and
// the front end's files. loom serve (with the platform) and loom gateway add them to their server.
import type { WorkerLoadSource } from "../cluster/worker-load.js";
import type { SurfaceFactory } from "../http/app.js";
import type { Platform } from "../platform/platform.js";
import type { DashboardSessionStore } from "../platform/store/dashboard-session-store.js";
import type { DashboardAuth } from "./dashboard-auth.js";
import { type DashboardDataDeps, dashboardDataSurfaces } from "./data-surfaces.js";
import { createDashboardAuth } from "./session-auth.js";
import { dashboardSessionSurface } from "./session-routes.js";
import { SIGN_IN_ATTEMPTS_PER_MINUTE } from "./sign-in-limit.js";
import { type DashboardFiles, dashboardStaticSurface } from "./static-files.js";

/** What the dashboard is built on. */
export interface DashboardDependencies {
  /** The platform: its stores, keys and limit store. */
  platform: Platform;
  /** Agent runs, for the organization's runs pages (runServicesOf(runs) on a server). */
  runs: DashboardDataDeps["runs"];
  /** The workers' load behind a gateway (clusterWorkerLoad of its directory); absent on `loom serve`. */
  workers?: WorkerLoadSource;
  /** The sessions (shared with their cleanup job). */
  sessions: DashboardSessionStore;
  /** The front end, as loadDashboardFiles read it. */
  files: DashboardFiles;
  /** Sign-in attempts admitted per client address per minute (default 10, as the README says). */
  signInAttemptsPerMinute?: number;
}

/** The dashboard's surfaces, and the DashboardAuth their routes ask. */
export interface Dashboard {
  surfaces: SurfaceFactory[];
  auth: DashboardAuth;
}

/** Builds the dashboard's surfaces over its dependencies. */
export function dashboardSurfaces(dependencies: DashboardDependencies): Dashboard {
  const { platform, sessions, runs, workers } = dependencies;
  const auth = createDashboardAuth({ sessions, operatorTokens: platform.stores.operatorTokens, managementKeys: platform.managementKeys });
  const signIn = { limits: platform.limits, attemptsPerMinute: dependencies.signInAttemptsPerMinute ?? SIGN_IN_ATTEMPTS_PER_MINUTE, failOpen: platform.limitsFailOpen };
  const surfaces: SurfaceFactory[] = [
    dashboardSessionSurface({
      sessions,
      operatorTokens: platform.stores.operatorTokens,
      managementKeys: platform.managementKeys,
      organization: (id) => platform.stores.organizations.get(id),
      signIn,
    }),
    ...Object.values(dashboardDataSurfaces({ auth, platform, runs, ...(workers ? { workers } : {}) })),
    dashboardStaticSurface(dependencies.files),
  ];
  return { surfaces, auth };
}
