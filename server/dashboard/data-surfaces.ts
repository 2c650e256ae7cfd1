// The dashboard's data endpoints assembled from what `loom serve` and `loom gateway` open: the platform, agent runs,
// and (behind a gateway) the workers' load. The session endpoints and the DashboardAuth are assembled elsewhere
// (surfaces.ts); this takes the auth they make.
import type { WorkerLoadSource } from "../cluster/worker-load.js";
import type { SurfaceFactory } from "../http/app.js";
import type { Runs } from "../runs/runs.js";
import type { Platform } from "../platform/platform.js";
import type { DashboardAuth } from "./dashboard-auth.js";
import { operatorSurface } from "./operator-routes.js";
import { type DashboardOrganizationServices, dashboardOrganizationSurface } from "./organization-routes.js";

/** What the data endpoints are built from. */
export interface DashboardDataDeps {
  /** Who calls (sessions and bearer credentials). */
  auth: DashboardAuth;
  platform: Platform;
  /** The organization's runs: the run store, and how to stop or follow up one (runServicesOf(runs) on a server). */
  runs: DashboardOrganizationServices["runs"];
  /** The workers' load behind a gateway (clusterWorkerLoad of its directory); absent on `loom serve`. */
  workers?: WorkerLoadSource;
}

/** The `/api/v1/dashboard/` (an organization's) and `/api/v1/operator/` data surfaces, for startServer. */
export function dashboardDataSurfaces(deps: DashboardDataDeps): { organization: SurfaceFactory; operator: SurfaceFactory } {
  const { auth, platform, runs } = deps;
  return {
    organization: dashboardOrganizationSurface({
      auth,
      stores: platform.stores,
      inferenceKeys: platform.inferenceKeys,
      runs,
    }),
    operator: operatorSurface({
      auth,
      stores: platform.stores,
      keyAuthenticators: [platform.inferenceKeys, platform.managementKeys],
      ...(deps.workers ? { workers: deps.workers } : {}),
    }),
  };
}

/** What the organization's runs pages need of a server's agent runs. */
export function runServicesOf(runs: Runs): DashboardOrganizationServices["runs"] {
  return { store: runs.store, cancelHere: (runId) => runs.worker.cancel(runId), callbackOf: (runId) => runs.callbacks.deliveryOf(runId) };
}
