// The server side of a WorkerEngine's prompt thread (engine/host/prompt-worker.ts): asks it for prompts, started on
// first use and again after it dies. A thread that cannot start (a model whose tokenizer it cannot read alone) is
// not started again: its engine then prepares prompts on the engine thread, as before there was a prompt thread.
import { existsSync } from "node:fs";
import { join } from "node:path";
import { Worker } from "node:worker_threads";
import { PACKAGE_ROOT } from "../../kernels/package-root.js";
import type { PreparedPrompt, PromptSettings } from "../prompt.js";
import type { EngineRequest } from "../request.js";
import type { DetokenizeRequest, Detokenized, TokenizeRequest } from "../tokenize.js";
import { type CallReply, PendingCalls } from "./pending-calls.js";

/** What the prompt thread is started with (its workerData). */
export interface PromptWorkerData {
  /** The model file or directory: its tokenizer and chat template are read, not its weights. */
  path: string;
  /** The model's vision projector, whose header says how images are written. */
  mmproj?: string;
}

/** A question to the prompt thread: one request's prompt, or only its length; or a tokenization. */
export type ToPromptWorker =
  | { call: number; request: EngineRequest; settings: PromptSettings; countOnly: boolean }
  | { call: number; tokenize: TokenizeRequest; settings: PromptSettings }
  | { call: number; detokenize: DetokenizeRequest };

/** The prompt thread's answer: the prepared prompt, or its length for a count; token ids; decoded text. */
export type PromptAnswer = PreparedPrompt | number | number[] | Detokenized;

/** Where the prompt thread's compiled entry lives (workers cannot load the TypeScript sources). */
export function promptWorkerPath(): string {
  return join(PACKAGE_ROOT, "dist", "engine", "host", "prompt-worker.js");
}

/** Omit over each member of a union. */
type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;

/** One model's prompt thread. */
export class PromptThread {
  #worker: Worker | undefined;
  readonly #calls = new PendingCalls();
  /** Whether a thread has answered once: one that dies before its first answer could not start, and is not restarted. */
  #started = false;
  #broken = false;
  #closed = false;

  constructor(private readonly modelPath: string, private readonly mmproj?: string) {
    this.#broken = !existsSync(promptWorkerPath());
  }

  /** Whether prompts can be asked for: false once the thread could not start, or after close. */
  get available(): boolean {
    return !this.#broken && !this.#closed;
  }

  /** Starts the thread now (it reads the tokenizer), so that the first request does not wait for it. */
  warm(): void {
    if (this.available) this.#thread();
  }

  /**
   * The prompt `request` runs with, prepared with its engine's `settings`.
   * @throws EngineError as the engine would report the request's prompt; any other Error when the thread failed.
   */
  prepare(request: EngineRequest, settings: PromptSettings): Promise<PreparedPrompt> {
    return this.#ask<PreparedPrompt>(request, settings, false);
  }

  /** The prompt's length in tokens; throws as {@link prepare}. */
  count(request: EngineRequest, settings: PromptSettings): Promise<number> {
    return this.#ask<number>(request, settings, true);
  }

  /** The token ids of a text or conversation (engine/tokenize.ts); throws as {@link prepare}. */
  tokenize(request: TokenizeRequest, settings: PromptSettings): Promise<number[]> {
    return this.#send<number[]>({ tokenize: request, settings });
  }

  /** Token ids back to text (engine/tokenize.ts); throws as {@link prepare}. */
  detokenize(request: DetokenizeRequest): Promise<Detokenized> {
    return this.#send<Detokenized>({ detokenize: request });
  }

  /** Ends the thread; questions still open fail. */
  async close(): Promise<void> {
    this.#closed = true;
    const worker = this.#worker;
    this.#worker = undefined;
    this.#calls.rejectAll(new Error("the prompt thread was closed"));
    await worker?.terminate();
  }

  #ask<T>(request: EngineRequest, settings: PromptSettings, countOnly: boolean): Promise<T> {
    return this.#send<T>({ request, settings, countOnly });
  }

  #send<T>(question: DistributiveOmit<ToPromptWorker, "call">): Promise<T> {
    if (!this.available) return Promise.reject(new Error("the prompt thread is not available"));
    const worker = this.#thread();
    return this.#calls.ask<T>((call) => worker.postMessage({ call, ...question } as ToPromptWorker));
  }

  #thread(): Worker {
    if (this.#worker) return this.#worker;
    // No inherited Node flags (an --input-type would fail the thread's start); unref'd: it never keeps a process alive.
    const worker = new Worker(promptWorkerPath(), { workerData: { path: this.modelPath, ...(this.mmproj ? { mmproj: this.mmproj } : {}) } satisfies PromptWorkerData, execArgv: [] });
    worker.unref();
    let failure: Error | undefined;
    worker.on("message", (reply: CallReply) => {
      this.#started = true;
      this.#calls.settle(reply);
    });
    worker.on("error", (error) => {
      failure = error;
    });
    worker.on("exit", (code) => {
      if (this.#worker === worker) this.#worker = undefined;
      if (!this.#started) this.#broken = true;
      this.#calls.rejectAll(failure ?? new Error(`the prompt thread exited with code ${code}`));
    });
    this.#worker = worker;
    return worker;
  }
}
