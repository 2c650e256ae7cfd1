// Keeps a WebGPU model serving through device loss (a driver reset, a GPU fault, the device destroyed): the pass in
// flight fails with a DeviceLostError that says so, a fresh device is opened and the weights uploaded again, and the
// passes after it run there. The KV cache's contents die with the device: the engine drops its cached prefixes when
// it sees the error (DeviceLostError.kvLost).
import type { KvDtype } from "../../kv/budget.js";
import type { KvCopy } from "../../kv/kv-cache.js";
import type { ModelConfig } from "../../model/config.js";
import type { ModelSource } from "../../model/source.js";
import type { ModelRunner, RunnerOptions, SampledForward, SequenceChunk } from "../runner.js";
import { type GpuContext, type GpuUnavailable, openGpu } from "../../../kernels/webgpu/gpu.js";
import { WebGpuModelRunner, type WebGpuTuning } from "./model-runner.js";

/** A forward pass failed because the GPU device was lost; every KV block's contents are gone with it. */
export class DeviceLostError extends Error {
  override readonly name = "DeviceLostError";
  /** Tells the engine that cached KV (prefix and section caches) no longer holds what its index says. */
  readonly kvLost = true;
}

/** A WebGPU runner that replaces its device when the device is lost. */
export class RecoveringGpuRunner implements ModelRunner {
  private runner: WebGpuModelRunner;
  private context: GpuContext;
  /** Why the last device was lost (kept after it is replaced, for the error of the first pass after the loss). */
  private lossReason = "";
  /** The replacement being built after a loss. */
  private recovery: Promise<void> | undefined;
  /** Set when no replacement could be built: every later pass fails with it. */
  private broken: Error | undefined;
  /**
   * A loss no pass has failed for yet: the running sequences' KV died with the device even when the loss came
   * between passes, so the first pass after it fails (and the engine fails those requests and clears its caches).
   */
  private unreported = false;
  private disposed = false;
  /** Devices lost so far (and replaced, unless `broken`). */
  deviceLosses = 0;

  private constructor(
    private readonly source: ModelSource,
    private readonly tuning: WebGpuTuning,
    private readonly open: () => Promise<GpuContext | GpuUnavailable>,
    gpu: GpuContext,
    runner: WebGpuModelRunner,
  ) {
    this.context = gpu;
    this.runner = runner;
    this.watch(gpu);
  }

  /**
   * Builds the runner on `gpu` (see WebGpuModelRunner.create); after a device loss, `open` (default: openGpu)
   * provides the next device.
   */
  static async create(source: ModelSource, gpu: GpuContext, options: RunnerOptions, tuning: WebGpuTuning = {},
    open: () => Promise<GpuContext | GpuUnavailable> = openGpu): Promise<RecoveringGpuRunner> {
    const runner = await WebGpuModelRunner.create(source, gpu, options, tuning);
    return new RecoveringGpuRunner(source, tuning, open, gpu, runner);
  }

  get options(): RunnerOptions {
    return this.runner.options;
  }

  get config(): ModelConfig {
    return this.runner.config;
  }

  get kvBlocks(): number {
    return this.runner.kvBlocks;
  }

  get localKvBlocks(): number | undefined {
    return this.runner.localKvBlocks;
  }

  get kvDtype(): KvDtype {
    return this.runner.kvDtype;
  }

  get hiddenStates(): Float32Array {
    return this.runner.hiddenStates;
  }

  /** The device in use now (a new one after a loss). */
  get gpu(): GpuContext {
    return this.context;
  }

  /** The WebGPU runner on the current device. */
  get current(): WebGpuModelRunner {
    return this.runner;
  }

  forward(chunks: readonly SequenceChunk[]): Promise<Float32Array> {
    return this.guard(() => this.runner.forward(chunks));
  }

  forwardSampled(chunks: readonly SequenceChunk[]): Promise<SampledForward> {
    return this.guard(() => this.runner.forwardSampled(chunks));
  }

  copyKv(copies: readonly KvCopy[], targetBlocks: readonly number[], localSlot?: (block: number) => number): void {
    // While the device is lost and not yet replaced the copies would be dropped; the pass that follows fails anyway
    // and the engine clears its caches.
    if (!this.recovery && !this.broken) this.runner.copyKv(copies, targetBlocks, localSlot);
  }

  /** Frees the buffers and the device. */
  dispose(): void {
    this.disposed = true;
    this.runner.dispose();
    this.context.device.destroy();
  }

  private async guard<T>(pass: () => Promise<T>): Promise<T> {
    if (this.unreported) throw this.lostError();
    if (this.recovery) await this.recovery;
    if (this.broken) throw this.broken;
    const context = this.context;
    let result: T;
    try {
      result = await pass();
    } catch (error) {
      // A pass on a lost device fails (its readback is refused) before or after `lost` resolves: give it a moment.
      const lost = await Promise.race([context.device.lost.then(() => true), new Promise<boolean>((resolve) => setTimeout(() => resolve(false), 250))]);
      if (lost) throw this.lostError(error);
      throw error;
    }
    if (this.unreported) throw this.lostError(); // the device went during the pass: its results cannot be trusted
    return result;
  }

  /** The error for the first pass after a loss (marking the loss reported). */
  private lostError(cause?: unknown): DeviceLostError {
    this.unreported = false;
    return new DeviceLostError(`the GPU device was lost (${this.lossReason}); a new device is being set up for the next requests`, { cause });
  }

  private watch(gpu: GpuContext): void {
    void gpu.device.lost.then((info) => {
      if (this.disposed || gpu !== this.context) return;
      this.lossReason = `${info.reason}${info.message ? `: ${info.message}` : ""}`;
      this.unreported = true;
      this.deviceLosses++;
      this.recovery = this.replaceDevice().finally(() => { this.recovery = undefined; });
    });
  }

  /** Opens a new device and rebuilds the runner there with the same number of KV blocks (the pool's size is fixed). */
  private async replaceDevice(): Promise<void> {
    const old = this.runner;
    old.dispose();
    const opened = await this.open();
    if ("unavailable" in opened) {
      this.broken = new DeviceLostError(`the GPU device was lost (${this.lossReason}) and no new one could be opened: ${opened.unavailable}`);
      return;
    }
    try {
      const options = { ...old.options, kvCache: { ...old.options.kvCache, bytes: old.kvBudgetBytes, memoryFraction: undefined } };
      const runner = await WebGpuModelRunner.create(this.source, opened, options, this.tuning);
      if (runner.kvBlocks !== old.kvBlocks || runner.localKvBlocks !== old.localKvBlocks) {
        runner.dispose();
        throw new RangeError(`the new device holds ${runner.kvBlocks} KV blocks (${runner.localKvBlocks ?? "no"} window slots), not ${old.kvBlocks} (${old.localKvBlocks ?? "no"})`);
      }
      if (this.disposed) {
        runner.dispose();
        opened.device.destroy();
        return;
      }
      this.runner = runner;
      this.context = opened;
      this.watch(opened);
    } catch (error) {
      opened.device.destroy();
      this.broken = new DeviceLostError(`the GPU device was lost (${this.lossReason}) and the model could not be set up on a new one: ${(error as Error).message}`, { cause: error });
    }
  }
}
