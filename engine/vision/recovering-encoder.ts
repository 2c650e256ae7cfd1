// Keeps a WebGPU model's vision encoder on the model's device: when the device is lost, images fail with an error
// that says so until the model runner has a new device (RecoveringGpuRunner), and the next image loads the encoder
// there first.
import type { GpuContext } from "../../kernels/webgpu/gpu.js";
import type { RgbImage } from "../chat/messages.js";
import type { VisionConfig } from "./clip-config.js";
import type { VisionEncoder } from "./encoder.js";
import { WebGpuVisionEncoder, type WebGpuVisionOptions } from "./webgpu-encoder.js";

/** A WebGPU vision encoder that follows the device a model runs on. */
export class RecoveringVisionEncoder implements VisionEncoder {
  /** The load onto a new device in progress, and that device. */
  private moving: { gpu: GpuContext; encoder: Promise<WebGpuVisionEncoder> } | undefined;
  private disposed = false;
  /** Times the encoder was loaded again on a new device. */
  reloads = 0;

  private constructor(private encoder: WebGpuVisionEncoder, private readonly deviceNow: () => GpuContext, private readonly options: WebGpuVisionOptions) {}

  /** Loads the mmproj file at `path` on `deviceNow()`, the model's device (asked again before each image). */
  static async load(path: string, deviceNow: () => GpuContext, options: WebGpuVisionOptions = {}): Promise<RecoveringVisionEncoder> {
    return new RecoveringVisionEncoder(await WebGpuVisionEncoder.load(path, deviceNow(), options), deviceNow, options);
  }

  get path(): string {
    return this.encoder.path;
  }

  get config(): VisionConfig {
    return this.encoder.config;
  }

  /** The encoder on the current device. */
  get current(): WebGpuVisionEncoder {
    return this.encoder;
  }

  /** @throws DeviceLostError while the model's device is lost and not yet replaced. */
  async encode(image: RgbImage): Promise<Float32Array> {
    const gpu = this.deviceNow();
    if (gpu !== this.encoder.gpu && !this.disposed) await this.moveTo(gpu);
    return this.encoder.encode(image);
  }

  async dispose(): Promise<void> {
    this.disposed = true;
    await this.moving?.encoder.catch(() => undefined);
    await this.encoder.dispose();
  }

  /** Loads the encoder on `gpu` (once, however many images wait for it) and frees the one on the lost device. */
  private async moveTo(gpu: GpuContext): Promise<void> {
    if (this.moving?.gpu !== gpu) {
      const moving = {
        gpu,
        encoder: WebGpuVisionEncoder.load(this.path, gpu, this.options).catch((error: Error) => {
          if (this.moving === moving) this.moving = undefined; // the next image tries again
          throw new Error(`the GPU device was replaced after a loss, but the vision encoder could not be loaded on the new one: ${error.message}`, { cause: error });
        }),
      };
      this.moving = moving;
    }
    const encoder = await this.moving!.encoder;
    if (this.encoder === encoder) return;
    if (this.disposed) {
      await encoder.dispose();
      return;
    }
    const old = this.encoder;
    this.encoder = encoder;
    this.moving = undefined;
    this.reloads++;
    await old.dispose();
  }
}
