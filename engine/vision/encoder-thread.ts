// A vision encoder on its own thread (engine/vision/encoder-worker.ts runs the WebAssembly encoder there): encoding an
// image takes as long as a long prefill, and the engine's steps go on meanwhile, other requests decoding while the
// image's request waits for its embeddings. One image at a time, in the order asked.
import { existsSync } from "node:fs";
import { join } from "node:path";
import { Worker } from "node:worker_threads";
import { PACKAGE_ROOT } from "../../kernels/package-root.js";
import type { SimdLevel } from "../../kernels/wasm/runtime.js";
import type { RgbImage } from "../chat/messages.js";
import { type CallReply, PendingCalls } from "../host/pending-calls.js";
import { receivedError, type SentError } from "../host/messages.js";
import type { VisionConfig } from "./clip-config.js";
import type { VisionEncoder } from "./encoder.js";

/** What the encoder thread is started with. */
export interface EncoderWorkerData {
  path: string;
  threads: number;
  simd?: SimdLevel | "auto";
}

/** The encoder thread's first message: loaded (its config), or why not. */
export type EncoderReady = { ready: VisionConfig } | { failed: SentError };

/** Where the encoder thread's compiled entry lives (workers cannot load the TypeScript sources). */
export function encoderWorkerPath(): string {
  return join(PACKAGE_ROOT, "dist", "engine", "vision", "encoder-worker.js");
}

/** The WebAssembly vision encoder, run on a thread of its own. */
export class ThreadedVisionEncoder implements VisionEncoder {
  readonly #calls = new PendingCalls();
  #closed = false;

  private constructor(readonly path: string, readonly config: VisionConfig, private readonly worker: Worker) {
    worker.on("message", (reply: CallReply) => this.#calls.settle(reply));
    worker.on("error", (error) => this.#calls.rejectAll(error));
    worker.on("exit", (code) => this.#calls.rejectAll(new Error(`the vision encoder's thread exited with code ${code}`)));
  }

  /**
   * Starts the thread and loads the projector there. @throws the load's own error (a ModelFileError's message, say);
   * an Error when the build's worker script is missing.
   */
  static async start(path: string, data: Omit<EncoderWorkerData, "path">): Promise<ThreadedVisionEncoder> {
    const script = encoderWorkerPath();
    if (!existsSync(script)) throw new Error(`the vision encoder's thread needs the build (${script} is missing): run npm run build`);
    const worker = new Worker(script, { workerData: { path, ...data } satisfies EncoderWorkerData, execArgv: [] });
    let settle!: { message: (ready: EncoderReady) => void; error: (error: Error) => void; exit: (code: number) => void };
    const ready = await new Promise<EncoderReady>((resolve, reject) => {
      settle = { message: resolve, error: reject, exit: (code) => reject(new Error(`the vision encoder's thread exited with code ${code} while loading ${path}`)) };
      worker.once("message", settle.message).once("error", settle.error).once("exit", settle.exit);
    });
    // Only our own listeners go: removeAllListeners would take Node's, which start the port for later messages.
    worker.off("message", settle.message).off("error", settle.error).off("exit", settle.exit);
    if ("failed" in ready) {
      await worker.terminate();
      throw receivedError(ready.failed);
    }
    worker.unref();
    return new ThreadedVisionEncoder(path, ready.ready, worker);
  }

  encode(image: RgbImage): Promise<Float32Array> {
    if (this.#closed) return Promise.reject(new Error("the vision encoder is disposed"));
    return this.#calls.ask<Float32Array>((call) => this.worker.postMessage({ call, image }));
  }

  async dispose(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#calls.rejectAll(new Error("the vision encoder is disposed"));
    await this.worker.terminate();
  }
}
