// Takes queued runs from the store and runs each one's agent loop: at most `concurrency` at once, leases renewed while
// they run, cancels and timeouts turned into aborts, runs of dead workers recovered, and every way a run can end
// written back. One per `loom serve` process; several processes share one PostgreSQL queue.
import { hostname } from "node:os";
import { randomBytes } from "node:crypto";
import type { ServingEngine } from "../../engine/engine.js";
import type { PreparedPrompt } from "../../engine/prompt.js";
import { logFailure } from "../http/log.js";
import type { PlatformAdmission, UsageCommit } from "../platform/accountant.js";
import { type ServedModel, outputFormatOf } from "../models.js";
import type { InternalRequest } from "../protocol/internal.js";
import type { RunRecord, RunStep } from "./contract.js";
import { type AgentEngine, type EngineName } from "./engines.js";
import { LeaseLostError, RunFailure, type StepLog, runAgentLoop } from "./agent-loop.js";
import type { RunStore } from "./run-store.js";
import type { RunTool } from "./tools/tool.js";

/** A served model a run can use. */
export interface RunModel {
  slug: string;
  engine: ServingEngine;
  /** Its registry entry (context size, prompt counter), for admission. */
  served?: ServedModel;
}

/**
 * Admits a model turn of `run` as a request of its organization (server/runs/turn-admission.ts); undefined for runs
 * nobody is billed per turn for (paid machine runs). A transient refusal is retried until `signal` (the run's) aborts.
 * @throws RunFailure when a limit or the balance refuses it; `signal`'s reason when it aborts.
 */
export type TurnAdmitter = (run: RunRecord, model: RunModel, request: InternalRequest, signal: AbortSignal) => Promise<AdmittedTurn | undefined>;

/** A model turn admitted: its admission, and the prompt its engine prepared to count it (the turn then runs with it). */
export interface AdmittedTurn {
  admission: PlatformAdmission;
  prepared?: PreparedPrompt;
}

/** What the worker needs. */
export interface RunWorkerOptions {
  store: RunStore;
  engines: Readonly<Record<EngineName, AgentEngine>>;
  /** The model behind a configured slug; with no slug, the default (first served) model. */
  model(slug: string | undefined): RunModel | undefined;
  /** The tools of a run (its choice of tools, with their options). */
  toolsFor(run: RunRecord): Map<string, RunTool>;
  /** Admits each model turn (limits, balance); its usage is then committed with its step. Absent: nothing is metered. */
  admitTurn?: TurnAdmitter;
  /** Runs processed at once (default 4). */
  concurrency?: number;
  /** How long a take is held without renewal (default 30 s): a dead worker's runs are recovered after it. */
  leaseMs?: number;
  /** How often to look for queued runs when not woken (default 1 s). */
  pollMs?: number;
  /** The engine priority class of run turns (default 1: after interactive requests, class 0). */
  priority?: number;
  /** Where failures of the worker itself are reported (default stderr). */
  onError?: (error: unknown) => void;
}

interface ActiveRun {
  controller: AbortController;
  done: Promise<void>;
}

/** The run worker of one process. */
export class RunWorker {
  /** This worker's lease owner name: host, pid and a random part (a restarted process is a new owner). */
  readonly owner = `${hostname()}:${process.pid}:${randomBytes(4).toString("hex")}`;
  readonly #options: Required<Pick<RunWorkerOptions, "concurrency" | "leaseMs" | "pollMs" | "priority">> & RunWorkerOptions;
  readonly #active = new Map<string, ActiveRun>();
  #timer: NodeJS.Timeout | undefined;
  #heartbeat: NodeJS.Timeout | undefined;
  #ticking = false;
  /** Looks at the queue and recoveries under way, which stop() waits for. */
  readonly #chores = new Set<Promise<void>>();
  #again = false;
  #stopped = true;
  #requests = 0;

  constructor(options: RunWorkerOptions) {
    this.#options = { concurrency: 4, leaseMs: 30_000, pollMs: 1000, priority: 1, ...options };
  }

  /** Most runs processed here at once. */
  get concurrency(): number {
    return this.#options.concurrency;
  }

  /** Runs being processed here now. */
  get active(): number {
    return this.#active.size;
  }

  /** Starts taking runs (and recovering dead workers' runs). */
  start(): void {
    if (!this.#stopped) return;
    this.#stopped = false;
    // Leases are renewed, and dead workers' runs recovered, every third of a lease; not on every look at the queue.
    const beat = () => {
      void this.#renew();
      this.#chore(this.#recover());
    };
    this.#heartbeat = setInterval(beat, Math.max(50, Math.floor(this.#options.leaseMs / 3)));
    this.#chore(this.#recover());
    this.notify();
  }

  /** Looks for runs now (a run was created in this process) instead of at the next poll. */
  notify(): void {
    if (this.#stopped) return;
    if (this.#ticking) {
      this.#again = true;
      return;
    }
    this.#chore(this.#tick());
  }

  /** Stops a run processing here at once (a cancel through this process); false when it is not here. */
  cancel(runId: string): boolean {
    const run = this.#active.get(runId);
    if (!run) return false;
    run.controller.abort(new RunFailure("cancelled", "the run was cancelled"));
    return true;
  }

  /** Stops taking runs, stops the ones running here, and gives them back to the queue for whoever comes next. */
  async stop(): Promise<void> {
    if (this.#stopped) return;
    this.#stopped = true;
    clearTimeout(this.#timer);
    clearInterval(this.#heartbeat);
    // A look at the queue under way may still take runs: they are among those given back.
    await Promise.allSettled([...this.#chores]);
    const ids = [...this.#active.keys()];
    for (const run of this.#active.values()) run.controller.abort(new LeaseLostError("the worker is shutting down"));
    await Promise.allSettled([...this.#active.values()].map((run) => run.done));
    await this.#options.store.release(this.owner, ids).catch(this.#report);
  }

  async #tick(): Promise<void> {
    this.#ticking = true;
    clearTimeout(this.#timer);
    try {
      do {
        this.#again = false;
        const free = this.#options.concurrency - this.#active.size;
        const runs = free > 0 ? await this.#options.store.claim(this.owner, free, this.#options.leaseMs) : [];
        for (const run of runs) this.#start(run);
      } while (this.#again && !this.#stopped);
    } catch (error) {
      this.#report(error);
    } finally {
      this.#ticking = false;
      if (!this.#stopped) this.#timer = setTimeout(() => this.notify(), this.#options.pollMs);
    }
  }

  #start(run: RunRecord): void {
    const controller = new AbortController();
    const entry: ActiveRun = { controller, done: Promise.resolve() };
    this.#active.set(run.id, entry);
    entry.done = this.#process(run, controller).catch(this.#report).finally(() => {
      this.#active.delete(run.id);
      this.notify();
    });
  }

  async #process(run: RunRecord, controller: AbortController): Promise<void> {
    const { store } = this.#options;
    const startedAt = run.startedAt?.getTime() ?? Date.now();
    const left = run.spec.timeoutSeconds * 1000 - (Date.now() - startedAt);
    const timeout = setTimeout(() => controller.abort(new RunFailure("timeout", `the run took longer than options.timeout (${run.spec.timeoutSeconds} s)`)), Math.max(0, left));
    if (run.cancelRequested) controller.abort(new RunFailure("cancelled", "the run was cancelled"));
    try {
      const result = await this.#loop(run, controller.signal);
      if (!(await store.finish(run.id, this.owner, { result }))) return;
    } catch (error) {
      if (error instanceof LeaseLostError) return;
      // Not the run's own failure (a database that went away, a bug): its text is the log's (#report), not the caller's.
      const failure = error instanceof RunFailure ? error : new RunFailure("internal", "the run failed inside loom; the server log has the details");
      if (!(error instanceof RunFailure)) this.#report(error);
      await store.finish(run.id, this.owner, { error: { code: failure.code, message: failure.message } });
    } finally {
      clearTimeout(timeout);
    }
  }

  async #loop(run: RunRecord, signal: AbortSignal) {
    const config = this.#options.engines[run.engine as EngineName];
    if (!config) throw new RunFailure("no_model", `the engine '${run.engine}' is not configured in this deployment`);
    if (config.model === null) throw new RunFailure("no_model", `the engine '${run.engine}' has no model to run on in this deployment`);
    const model = this.#options.model(config.model);
    if (!model) throw new RunFailure("no_model", `the engine '${run.engine}' names the model '${config.model}', which this server does not serve`);
    const history = run.attempts > 1 ? await this.#options.store.steps(run.id) : [];
    return runAgentLoop({
      engine: model.engine,
      model: model.slug,
      ...(model.served ? { outputFormat: outputFormatOf(model.served) } : {}),
      config,
      spec: run.spec,
      tools: this.#options.toolsFor(run),
      signal,
      priority: this.#options.priority,
      log: this.#stepLog(run, model, signal),
      history,
      requestId: () => `${run.id}-${++this.#requests}`,
    });
  }

  /** The step log of one take of `run`: each write checks the take still holds the run. */
  #stepLog(run: RunRecord, model: RunModel, signal: AbortSignal): StepLog {
    const { store } = this.#options;
    const lost = () => new LeaseLostError(`run ${run.id} is no longer held by ${this.owner}`);
    const step = (kind: RunStep["kind"], status: RunStep["status"], detail: Record<string, unknown>, inputTokens = 0, outputTokens = 0, durationMs?: number) =>
      ({ attempt: run.attempts, kind, status, detail, inputTokens, outputTokens, ...(durationMs !== undefined ? { durationMs } : {}) });
    return {
      modelTurn: async (request) => {
        const admitted = await this.#options.admitTurn?.(run, model, request, signal);
        const admission = admitted?.admission;
        return {
          ...(admitted?.prepared ? { prepared: admitted.prepared } : {}),
          write: async (status, detail, usage, durationMs) => {
            const written = step("model", status, detail, usage.promptTokens, usage.completionTokens, durationMs);
            let index: number | undefined;
            // The turn's usage commits with its step: counted once, whatever happens to this worker. A take that lost
            // the run writes no step: the turn is billed only if no take will ask for it again.
            if (admission) {
              await admission.settleWith(usage, async (record) => {
                index = await store.appendStep(run.id, this.owner, written, record);
                return index !== undefined ? "committed" : this.#unloggedTurn(run.id);
              });
            } else index = await store.appendStep(run.id, this.owner, written);
            if (index === undefined) throw lost();
          },
          abandon: async (usage) => {
            await admission?.settleWith(usage, () => this.#unloggedTurn(run.id));
          },
          release: async () => {
            await admission?.release();
          },
        };
      },
      toolStarted: async (detail) => {
        const index = await store.appendStep(run.id, this.owner, step("tool", "started", detail));
        if (index === undefined) throw lost();
        return index;
      },
      toolEnded: async (index, status, detail, durationMs) => {
        if (!(await store.finishStep(run.id, this.owner, index, status, detail, durationMs))) throw lost();
      },
      note: async (detail) => {
        if ((await store.appendStep(run.id, this.owner, step("note", "finished", detail))) === undefined) throw lost();
      },
    };
  }

  /**
   * What becomes of a turn of `runId` that this take ran but could not log (it stopped, or lost the run): billed when
   * the run has ended, since no take will ask for it again; given back when the run is queued or another take holds
   * it (or this one, stopping, is about to queue it again), since the customer does not pay twice for loom's restart.
   * A run that cannot be read counts as one to be run again: loom's own failure is not billed.
   */
  async #unloggedTurn(runId: string): Promise<UsageCommit> {
    try {
      const now = await this.#options.store.get(runId);
      return now === undefined || now.status === "succeeded" || now.status === "failed" ? "record" : "release";
    } catch (error) {
      this.#report(error);
      return "release";
    }
  }

  #chore(work: Promise<void>): void {
    this.#chores.add(work);
    void work.finally(() => this.#chores.delete(work));
  }

  /** Queues again (or fails) the runs of workers whose leases ran out; looks at the queue when some came back. */
  async #recover(): Promise<void> {
    try {
      const { requeued } = await this.#options.store.recoverExpired();
      if (requeued > 0) this.notify();
    } catch (error) {
      this.#report(error);
    }
  }

  /** Renews the leases of the runs here; stops runs that were lost or cancelled elsewhere. */
  async #renew(): Promise<void> {
    const ids = [...this.#active.keys()];
    if (ids.length === 0) return;
    try {
      const held = await this.#options.store.renew(this.owner, ids, this.#options.leaseMs);
      for (const id of ids) {
        const run = this.#active.get(id);
        const state = held.get(id);
        if (!run) continue;
        if (!state) run.controller.abort(new LeaseLostError(`run ${id} is no longer held by ${this.owner}`));
        else if (state.cancelRequested) run.controller.abort(new RunFailure("cancelled", "the run was cancelled"));
      }
    } catch (error) {
      this.#report(error);
    }
  }

  readonly #report = (error: unknown): void => {
    if (this.#options.onError) this.#options.onError(error);
    else logFailure("run worker", error);
  };
}
