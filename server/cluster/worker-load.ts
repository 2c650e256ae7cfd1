// Each engine worker's live load as a gateway sees it, for the operator's dashboard (GET /api/v1/operator/workers):
// per connected worker and model it serves, the worker's own engine stats, asked over its connection.
import type { EngineStats } from "../../engine/request.js";
import type { ClusterDirectory } from "./cluster-directory.js";
import { modelKey } from "./frames.js";
import { within } from "../time-limit.js";

/** One worker's load for one model. */
export interface WorkerLoad {
  /** The worker's id (unique per worker process). */
  id: string;
  /** Where the gateway reaches it (http://host:port). */
  address: string;
  /** The model, named as /metrics names it (its first slug). */
  model: string;
  running: number;
  waiting: number;
  kvBlocksUsed: number;
  kvBlocksFree: number;
}

/** Where the per-worker rows come from: a gateway's directory; `loom serve` has none. */
export interface WorkerLoadSource {
  /** Every connected worker's load per model; a worker that does not answer within the source's timeout is left out. */
  workers(): Promise<WorkerLoad[]>;
}

/** How long a worker may take to tell its stats before the listing goes on without it. */
const STATS_TIMEOUT_MS = 2_000;

/** The load of the workers connected to a gateway's `directory`. */
export function clusterWorkerLoad(directory: Pick<ClusterDirectory, "workers">, timeoutMs = STATS_TIMEOUT_MS): WorkerLoadSource {
  return {
    async workers() {
      const asks: Array<Promise<WorkerLoad>> = [];
      for (const [id, link] of directory.workers) {
        const description = link.description;
        if (!description || link.closed) continue;
        for (const model of description.models) {
          const key = modelKey(model);
          asks.push(within(timeoutMs, link.ask<EngineStats>(key, { method: "stats" })).then((stats) => ({
            id,
            address: link.url,
            model: key,
            running: stats.running,
            waiting: stats.waiting,
            kvBlocksUsed: stats.kvBlocks.used,
            kvBlocksFree: stats.kvBlocks.free,
          })));
        }
      }
      const settled = await Promise.allSettled(asks);
      return settled.flatMap((result) => (result.status === "fulfilled" ? [result.value] : []));
    },
  };
}

