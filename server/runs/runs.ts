// Agent runs assembled on a platform: the run store over its database, the worker on the served models, and the runs
// routes. `loom serve` opens them whenever the platform is on.
import type { ServerContext } from "../http/context.js";
import { logFailure } from "../http/log.js";
import type { Surface } from "../http/routes.js";
import type { ModelRegistry } from "../models.js";
import type { Platform } from "../platform/platform.js";
import type { RunSpec, ToolName } from "./contract.js";
import { firstTurnRequest } from "./agent-loop.js";
import { checkFirstTurn, runTurnAdmitter } from "./turn-admission.js";
import { type AgentEngine, type EngineName, type EngineOverrides, resolveEngines } from "./engines.js";
import { runsSurface } from "./routes.js";
import { type RunEndHook, RunStore } from "./run-store.js";
import type { BackoffPolicy } from "./callbacks/backoff.js";
import type { RunCallbackPayload } from "./callbacks/callback-payload.js";
import { organizationSecretResolver } from "./callbacks/callback-secrets.js";
import { serviceWebhookSecret } from "../platform/store/webhook-secret-store.js";
import { CallbackStore, enqueueCallback } from "./callbacks/callback-store.js";
import type { CallbackPost } from "./callbacks/callback-transport.js";
import { CallbackDeliverer } from "./callbacks/deliverer.js";
import type { RunTool } from "./tools/tool.js";
import { RunWorker, type RunWorkerOptions } from "./worker.js";

/** Makes a run's tool from its options (`{id, options}` items of the create body). */
export type ToolFactory = (options: Record<string, unknown>) => RunTool;

/** Options of agent runs (the config file's `runs`). */
export interface RunsOptions {
  engines?: EngineOverrides;
  /** Runs processed at once by this process (default: half of `engineSequences`, 1 to 16). */
  concurrency?: number;
  /** Sequences the first model's engine batches (its maxSequences; default 32, engine/load.ts's default). */
  engineSequences?: number;
  /** Seconds a worker's take of a run lasts without renewal (default 30). */
  leaseSeconds?: number;
  /** Most runs an organization may have queued or processing at once (default 1000); more are refused with 429. */
  maxActivePerOrganization?: number;
  /** How each tool is made. */
  tools: Record<ToolName, ToolFactory>;
  /** How callbacks are sent (the SSRF-guarded client in `loom serve`), and their retry schedule. */
  callbacks: { post: CallbackPost; backoff?: Partial<BackoffPolicy>; pollMs?: number; timeoutMs?: number };
  /** Worker settings for tests (poll interval, error reporting). */
  worker?: Pick<RunWorkerOptions, "pollMs" | "onError" | "priority">;
}

/** Agent runs on one server. */
export interface Runs {
  readonly store: RunStore;
  /** The agent configurations by engine name, config changes applied. */
  readonly engines: Readonly<Record<EngineName, AgentEngine>>;
  /** Whether a configured model slug (undefined: the default model) is served here. */
  serves(slug: string | undefined): boolean;
  readonly worker: RunWorker;
  readonly callbacks: CallbackStore;
  readonly surface: (context: ServerContext) => Surface;
  /** Stops the worker (its runs go back to the queue) and the callback deliverer; the database stays open. */
  close(): Promise<void>;
}

/** Opens agent runs on `platform`, running on the models of `registry`. The worker starts at once. */
export function openRuns(platform: Platform, registry: ModelRegistry, options: RunsOptions): Runs {
  const engines = resolveEngines(options.engines);
  const callbacks = new CallbackStore(platform.database, options.callbacks.backoff);
  const deliverer = new CallbackDeliverer({
    store: callbacks,
    post: options.callbacks.post,
    secretFor: organizationSecretResolver(platform.database, () => serviceWebhookSecret(platform.database)),
    ...(options.callbacks.pollMs !== undefined ? { pollIntervalMs: options.callbacks.pollMs } : {}),
    ...(options.callbacks.timeoutMs !== undefined ? { timeoutMs: options.callbacks.timeoutMs } : {}),
    onError: (error) => logFailure("run callbacks", error),
  });
  const store = new RunStore(platform.database, enqueueRunCallback, () => deliverer.notify());
  // A configured name may be an alias: runs are recorded and billed under the slug it stands for.
  const findModel = (name: string | undefined) => {
    const entry = name === undefined ? registry.entries[0] : registry.find(name, "openai");
    return entry ? { slug: (name === undefined ? undefined : registry.resolve(name, "openai")) ?? entry.slugs.openai[0]!, engine: entry.engine, served: entry } : undefined;
  };
  const toolsOf = (spec: RunSpec) => new Map(spec.tools.map((choice) => {
    const tool = options.tools[choice.id](choice.options);
    return [tool.name, tool];
  }));
  const sequences = options.engineSequences ?? 32;
  const worker = new RunWorker({
    store,
    engines,
    model: findModel,
    toolsFor: (run) => toolsOf(run.spec),
    admitTurn: runTurnAdmitter({ accountant: platform.accountant, key: (organizationId, keyId) => platform.stores.keys.get(organizationId, keyId) }),
    concurrency: options.concurrency ?? Math.min(16, Math.max(1, Math.floor(sequences / 2))),
    leaseMs: (options.leaseSeconds ?? 30) * 1000,
    ...options.worker,
  });
  const surface = runsSurface({
    inferenceKeys: platform.inferenceKeys,
    store,
    engines,
    maxActivePerOrganization: options.maxActivePerOrganization ?? 1000,
    serves: (slug) => findModel(slug) !== undefined,
    // Whether the organization can pay for the run's first turn now: admitted, then given back at once.
    admitFirstTurn: async (spec, principal) => {
      const config = engines[spec.engine as EngineName];
      const model = config.model === null ? undefined : findModel(config.model);
      if (!model) return;
      await checkFirstTurn(platform.accountant, principal, model.served, firstTurnRequest({ config, model: model.slug, tools: toolsOf(spec), spec }), spec.engine);
    },
    callbackOf: (runId) => callbacks.deliveryOf(runId),
    notify: () => worker.notify(),
    cancelHere: (runId) => worker.cancel(runId),
  });
  worker.start();
  deliverer.start();
  return {
    store,
    engines,
    serves: (slug) => findModel(slug) !== undefined,
    worker,
    callbacks,
    surface,
    async close() {
      await worker.stop();
      await deliverer.stop();
    },
  };
}

/** In the transaction that ends a run: its callback, when it asked for one, with what polling it now answers. */
const enqueueRunCallback: RunEndHook = async (tx, run) => {
  if (run.spec.callbackUrl === undefined) return;
  const usage = run.usage;
  const payload: RunCallbackPayload = run.status === "succeeded"
    ? { runId: run.id, status: "succeeded", result: run.result, usage }
    : { runId: run.id, status: "failed", error: run.error, usage };
  await enqueueCallback(tx, { runId: run.id, url: run.spec.callbackUrl, payload });
};
