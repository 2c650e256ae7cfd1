// Agent runs assembled on a platform: the run store over its database, the worker on the served models, and the runs
// routes. `loom serve` opens them whenever the platform is on.
import type { ServerContext } from "../http/context.js";
import type { Surface } from "../http/routes.js";
import type { ModelRegistry } from "../models.js";
import type { Platform } from "../platform/platform.js";
import type { RunRecord, ToolName } from "./contract.js";
import { type EngineOverrides, resolveEngines } from "./engines.js";
import { runsSurface } from "./routes.js";
import { type RunEndHook, RunStore } from "./run-store.js";
import type { RunTool } from "./tools/tool.js";
import { RunWorker, type RunWorkerOptions } from "./worker.js";

/** Makes a run's tool from its options (`{id, options}` items of the create body). */
export type ToolFactory = (options: Record<string, unknown>) => RunTool;

/** Options of agent runs (the config file's `runs`). */
export interface RunsOptions {
  engines?: EngineOverrides;
  /** Runs processed at once by this process (default: half of `engineSequences`, 1 to 16). */
  concurrency?: number;
  /** Sequences the first model's engine batches (its maxSequences; default 32). */
  engineSequences?: number;
  /** Seconds a worker's take of a run lasts without renewal (default 30). */
  leaseSeconds?: number;
  /** How each tool is made. */
  tools: Record<ToolName, ToolFactory>;
  /** In the transaction that ends a run (the callback delivery). */
  onEnd?: RunEndHook;
  /** Worker settings for tests (poll interval, error reporting). */
  worker?: Pick<RunWorkerOptions, "pollMs" | "onError" | "priority">;
}

/** Agent runs on one server. */
export interface Runs {
  readonly store: RunStore;
  readonly worker: RunWorker;
  readonly surface: (context: ServerContext) => Surface;
  /** Stops the worker (its runs go back to the queue); the platform's database stays open. */
  close(): Promise<void>;
}

/** Opens agent runs on `platform`, running on the models of `registry`. The worker starts at once. */
export function openRuns(platform: Platform, registry: ModelRegistry, options: RunsOptions): Runs {
  const engines = resolveEngines(options.engines);
  const store = new RunStore(platform.database, options.onEnd);
  const findModel = (slug: string | undefined) => {
    const entry = slug === undefined ? registry.entries[0] : registry.find(slug, "openai");
    return entry ? { slug: slug ?? entry.slugs.openai[0]!, engine: entry.engine } : undefined;
  };
  const sequences = options.engineSequences ?? 32;
  const worker = new RunWorker({
    store,
    engines,
    model: findModel,
    toolsFor: (run: RunRecord) => new Map(run.spec.tools.map((choice) => {
      const tool = options.tools[choice.id](choice.options);
      return [tool.name, tool];
    })),
    usageOf: (run, model, usage) => platform.usageRecordOf(run, model, usage),
    concurrency: options.concurrency ?? Math.min(16, Math.max(1, Math.floor(sequences / 2))),
    leaseMs: (options.leaseSeconds ?? 30) * 1000,
    ...options.worker,
  });
  const surface = runsSurface({
    inferenceKeys: platform.inferenceKeys,
    store,
    engines,
    serves: (slug) => findModel(slug) !== undefined,
    notify: () => worker.notify(),
    cancelHere: (runId) => worker.cancel(runId),
  });
  worker.start();
  return { store, worker, surface, close: () => worker.stop() };
}
