// Gemma 3's vision projector on WGSL kernels, on a WebGPU device it is given (the text model's): the computation of
// wasm-encoder.ts (patch embedding, the SigLIP layers, average pooling, the soft-embedding RMS norm, the projection)
// with the matmul kernels and weight layout of the WebGPU model runner. Images are cut into patches on the host; the
// encoder runs as one submission per layer and its image tokens come back in one readback.
import { GgmlType, ggmlTypeName } from "../../kernels/formats/types.js";
import type { GpuContext } from "../../kernels/webgpu/gpu.js";
import { type ShaderRef, grid } from "../../kernels/webgpu/shaders.js";
import { type Step, StepEncoder } from "../../kernels/webgpu/step-encoder.js";
import { gpuWait } from "../../kernels/webgpu/wait.js";
import { CompiledPipelines } from "../backends/webgpu/compiled-pipelines.js";
import { DeviceBuffers } from "../backends/webgpu/device-buffers.js";
import { matmulPlan } from "../backends/webgpu/gpu-matmul.js";
import { type GpuWeight, uploadWeight } from "../backends/webgpu/gpu-weights.js";
import { DeviceLostError } from "../backends/webgpu/recovering-runner.js";
import { readTensors } from "../backends/wasm/weight-loader.js";
import type { RgbImage } from "../chat/messages.js";
import { ModelFileError } from "../model/errors.js";
import type { VisionConfig } from "./clip-config.js";
import type { VisionEncoder } from "./encoder.js";
import { imagePatches } from "./preprocess.js";
import { VISION_MATRIX_TYPES, openVisionFile, positionRows, projectionRows } from "./vision-file.js";
import type { VisionLayerNames } from "./vision-tensors.js";

const SHADERS = {
  add: { op: "add" },
  gelu: { op: "gelu" },
  layerNorm: { op: "layer_norm" },
  pool: { op: "pool_2d" },
  rmsnorm: { op: "rmsnorm" },
} satisfies Record<string, ShaderRef>;

/** attention_dense.wgsl's query rows per workgroup, and the most dimensions a head may have there (4 lanes x 32). */
const QUERY_TILE = 16;
const MAX_HEAD_DIM = 128;
/** The largest key tile used: the kernel's default, and what its conformance cases run at SigLIP's head dim. */
const MAX_KEY_TILE = 16;

/**
 * Keys attention_dense stages per step for heads of `headDim`: the largest multiple of 4 up to 16 whose workgroup
 * memory, 4 (16 + 2 KEY_TILE) headDim + 64 KEY_TILE bytes, fits `workgroupBytes` (16 KiB by default: SigLIP's 72
 * takes 16). @throws RangeError when the kernel cannot take the head dim within that memory.
 */
export function attentionKeyTile(headDim: number, workgroupBytes: number): number {
  const fits = Math.floor((workgroupBytes - 4 * QUERY_TILE * headDim) / (8 * headDim + 4 * QUERY_TILE));
  const keyTile = Math.min(MAX_KEY_TILE, fits - (fits % 4));
  if (headDim > MAX_HEAD_DIM || keyTile < 4) {
    throw new RangeError(`the vision encoder's attention heads of ${headDim} dimensions do not fit attention_dense.wgsl `
      + `(at most ${MAX_HEAD_DIM}, and 4 keys within ${workgroupBytes} bytes of workgroup memory): use --backend wasm`);
  }
  return keyTile;
}

/** Work buffers of an encoder, by name. */
type Activation = "patches" | "x" | "h" | "q" | "k" | "v" | "attention" | "up" | "pooled" | "normed" | "output";

/** Bytes of each work buffer of an encoder of `config` (one image at a time). */
export function visionActivationBytes(config: VisionConfig): Record<Activation, number> {
  const { hiddenSize: d, feedForwardSize: ffn, patchSize: p, patchesPerSide: side, tokensPerImage, outputSize } = config;
  const n = side * side;
  return {
    patches: n * 3 * p * p * 4, x: n * d * 4, h: n * d * 4, q: n * d * 4, k: n * d * 4, v: n * d * 4, attention: n * d * 4,
    up: n * ffn * 4, pooled: tokensPerImage * d * 4, normed: tokensPerImage * d * 4, output: tokensPerImage * outputSize * 4,
  };
}

/** Settings tests change; the defaults are what the device allows. */
export interface WebGpuVisionOptions {
  /** The largest weight part in bytes, below the adapter's binding limit: larger matrices are split by rows. */
  weightPartBytes?: number;
  /** false: the workgroup-memory matmul kernels even where subgroups are usable. */
  subgroups?: boolean;
}

/** One encoder layer's weights on the device. */
interface GpuVisionLayer {
  norm1: GPUBuffer; norm1Bias: GPUBuffer;
  q: GpuWeight; qBias: GPUBuffer; k: GpuWeight; kBias: GPUBuffer; v: GpuWeight; vBias: GPUBuffer;
  output: GpuWeight; outputBias: GPUBuffer;
  norm2: GPUBuffer; norm2Bias: GPUBuffer;
  up: GpuWeight; upBias: GPUBuffer; down: GpuWeight; downBias: GPUBuffer;
}

/** Every weight of the encoder on the device. */
interface GpuVisionWeights {
  patch: GpuWeight; patchBias: GPUBuffer;
  /** The learned positions as f32 rows [patches, hidden]. */
  positions: GPUBuffer;
  layers: GpuVisionLayer[];
  postNorm: GPUBuffer; postNormBias: GPUBuffer;
  softEmbeddingNorm: GPUBuffer;
  /** The projection as an F32 [hidden, outputSize] weight: a row per output. */
  projection: GpuWeight;
}

/** Gemma 3's vision projector on a WebGPU device. */
export class WebGpuVisionEncoder implements VisionEncoder {
  /** Encodes run one after another: they share the work buffers. */
  private queue: Promise<unknown> = Promise.resolve();
  /** Why the device was lost, once it is. */
  private lostReason: string | undefined;
  private disposed = false;

  private constructor(
    readonly path: string,
    readonly config: VisionConfig,
    /** The device it runs on (not its own: dispose leaves it open). */
    readonly gpu: GpuContext,
    private readonly memory: DeviceBuffers,
    private readonly weights: GpuVisionWeights,
    private readonly buffers: Record<Activation, GPUBuffer>,
    private readonly readback: GPUBuffer,
    private readonly pipelines: CompiledPipelines,
    /** The attention pipeline (its head dim and key tile). */
    private readonly attention: ShaderRef,
    /** Per submission (the patch embedding, each layer, the projector), its own encoder: bind groups stay cached. */
    private readonly steps: StepEncoder[],
    private readonly subgroups: boolean,
  ) {
    void gpu.device.lost.then((info) => { this.lostReason = `${info.reason}${info.message ? `: ${info.message}` : ""}`; });
  }

  /**
   * Loads the mmproj file at `path` onto `gpu`'s device: weights in the model runner's layout (F32, F16 and BF16
   * matrices as stored, split by rows past the binding limit), work buffers for one image, pipelines compiled.
   * @throws ModelFileError for a file loom cannot run; RangeError for a shape this device cannot run.
   */
  static async load(path: string, gpu: GpuContext, options: WebGpuVisionOptions = {}): Promise<WebGpuVisionEncoder> {
    const file = openVisionFile(path);
    const { config } = file;
    const { device } = gpu;
    const keyTile = attentionKeyTile(config.headDim, device.limits.maxComputeWorkgroupStorageSize);
    const memory = new DeviceBuffers(device, gpu.limits.maxStorageBufferBindingSize, "the vision encoder cannot run on this adapter; use --backend wasm");
    try {
      const partBytes = Math.min(gpu.limits.maxStorageBufferBindingSize, options.weightPartBytes ?? Infinity);
      const subgroups = gpu.subgroups && options.subgroups !== false;
      const weights = uploadVisionWeights(file, memory, partBytes);
      const buffers = Object.fromEntries(Object.entries(visionActivationBytes(config)).map(([name, bytes]) => [name, memory.create(name, bytes)])) as Record<Activation, GPUBuffer>;
      const readback = memory.create("image tokens readback", visionActivationBytes(config).output, GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST);
      const n = config.patchesPerSide ** 2;
      const attention: ShaderRef = { op: "attention_dense", constants: { HEAD_DIM: config.headDim, KEY_TILE: keyTile } };
      const layerMatrices = weights.layers.map((layer) => [layer.q, layer.k, layer.v, layer.output, layer.up, layer.down]);
      const pipelines = await CompiledPipelines.compile(device, [
        ...Object.values(SHADERS), attention,
        ...[weights.patch, ...layerMatrices.flat()].map((weight) => matmulPlan(weight, n, subgroups).shader),
        matmulPlan(weights.projection, config.tokensPerImage, subgroups).shader,
      ]);
      // Dispatches per submission: 12 besides the matmuls, and each matmul's parts and bias.
      const dispatches = (matrices: GpuWeight[]) => 12 + matrices.reduce((sum, weight) => sum + weight.parts.length + 1, 0);
      const steps = [[weights.patch], ...layerMatrices, [weights.projection]].map((matrices) => new StepEncoder(device, dispatches(matrices)));
      for (const step of steps) memory.adopt(step.params);
      return new WebGpuVisionEncoder(path, config, gpu, memory, weights, buffers, readback, pipelines, attention, steps, subgroups);
    } catch (error) {
      memory.destroyAll();
      throw error;
    }
  }

  /** The image's token embeddings; encodes run one at a time. @throws DeviceLostError once the device is lost. */
  encode(image: RgbImage): Promise<Float32Array> {
    const run = this.queue.then(() => this.run(image));
    this.queue = run.catch(() => undefined);
    return run;
  }

  /** How many parts the weight matrix `name` is split into on the device (undefined for a name it does not hold). */
  weightParts(name: string): number | undefined {
    const { weights: w } = this;
    const matrices = [w.patch, w.projection, ...w.layers.flatMap((layer) => [layer.q, layer.k, layer.v, layer.output, layer.up, layer.down])];
    return matrices.find((weight) => weight.name === name)?.parts.length;
  }

  /** Frees the encoder's buffers once the encode in flight is done (the device stays open: it is the model's). */
  async dispose(): Promise<void> {
    this.disposed = true;
    await this.queue;
    this.memory.destroyAll();
  }

  private async run(image: RgbImage): Promise<Float32Array> {
    if (this.disposed) throw new Error("the vision encoder was disposed");
    if (this.lostReason !== undefined) throw this.lostError();
    const patches = imagePatches(image, this.config);
    const { device } = this.gpu;
    const { config, buffers: b, weights: w } = this;
    const n = config.patchesPerSide ** 2;
    const d = config.hiddenSize;
    const bytes = config.tokensPerImage * config.outputSize * 4;
    try {
      device.queue.writeBuffer(b.patches, 0, patches);
      // Patch embedding (the convolution as a matmul over patch rows), its bias, the learned positions.
      const first = this.steps[0]!.begin();
      this.linear(first, b.patches, n, w.patch, b.x, w.patchBias);
      this.add(first, b.x, w.positions, n * d);
      first.submit();
      w.layers.forEach((layer, i) => {
        const step = this.steps[i + 1]!.begin();
        this.layer(step, layer, n);
        step.submit();
      });
      // Projector: average patches merge x merge, RMS norm times soft_emb_norm, map into the text model.
      const last = this.steps[this.steps.length - 1]!.begin();
      this.layerNorm(last, b.x, w.postNorm, w.postNormBias, b.h, n);
      const pooled = config.tokensPerImage * d;
      last.dispatch(this.pipelines.get(SHADERS.pool), [b.h, b.pooled], [["u32", config.patchesPerSide], ["u32", config.patchesPerSide], ["u32", d], ["u32", config.mergeFactor]], grid(pooled, 256));
      last.dispatch(this.pipelines.get(SHADERS.rmsnorm), [b.pooled, w.softEmbeddingNorm, b.normed], [["u32", d], ["f32", config.layerNormEps]], grid(config.tokensPerImage, 1));
      this.linear(last, b.normed, config.tokensPerImage, w.projection, b.output);
      last.copy(b.output, this.readback, bytes);
      last.submit();
      await gpuWait(this.readback.mapAsync(GPUMapMode.READ, 0, bytes));
    } catch (error) {
      // Work on a lost device fails (its readback is refused) before or after `lost` resolves: give it a moment.
      await Promise.race([device.lost, new Promise((resolve) => setTimeout(resolve, 250))]);
      if (this.lostReason !== undefined) throw this.lostError(error);
      throw error;
    }
    const embeddings = new Float32Array(this.readback.getMappedRange(0, bytes).slice(0));
    this.readback.unmap();
    return embeddings;
  }

  private lostError(cause?: unknown): DeviceLostError {
    return new DeviceLostError(`the GPU device was lost (${this.lostReason}): the vision encoder cannot encode images on it`, { cause });
  }

  /** One encoder layer on x [n, d]: x += attn(ln1(x)); x += mlp(ln2(x)). */
  private layer(step: Step, layer: GpuVisionLayer, n: number): void {
    const { config, buffers: b } = this;
    const { hiddenSize: d, feedForwardSize: ffn, heads, headDim } = config;
    this.layerNorm(step, b.x, layer.norm1, layer.norm1Bias, b.h, n);
    this.linear(step, b.h, n, layer.q, b.q, layer.qBias);
    this.linear(step, b.h, n, layer.k, b.k, layer.kBias);
    this.linear(step, b.h, n, layer.v, b.v, layer.vBias);
    const scale = Math.fround(1 / Math.sqrt(headDim));
    step.dispatch(this.pipelines.get(this.attention), [b.q, b.k, b.v, b.attention], [["u32", n], ["u32", heads], ["f32", scale]], [Math.ceil(n / QUERY_TILE), heads]);
    this.linear(step, b.attention, n, layer.output, b.h, layer.outputBias);
    this.add(step, b.x, b.h, n * d);
    this.layerNorm(step, b.x, layer.norm2, layer.norm2Bias, b.h, n);
    this.linear(step, b.h, n, layer.up, b.up, layer.upBias);
    step.dispatch(this.pipelines.get(SHADERS.gelu), [b.up], [["u32", n * ffn]], grid(n * ffn, 256));
    this.linear(step, b.up, n, layer.down, b.h, layer.downBias);
    this.add(step, b.x, b.h, n * d);
  }

  /** out = x W^T (+ bias) for `rows` rows; W's rows are its outputs. */
  private linear(step: Step, x: GPUBuffer, rows: number, weight: GpuWeight, out: GPUBuffer, bias?: GPUBuffer): void {
    const plan = matmulPlan(weight, rows, this.subgroups);
    const pipeline = this.pipelines.get(plan.shader);
    for (const { part, params, workgroups } of plan.parts) step.dispatch(pipeline, [x, part.data!, out], params, workgroups);
    const n = weight.shape[1]!;
    if (bias) this.add(step, out, bias, rows * n, n);
  }

  /** x[i] += y[i % period] for i < count (period: count for a residual add, the row width for a bias). */
  private add(step: Step, x: GPUBuffer, y: GPUBuffer, count: number, period = count): void {
    step.dispatch(this.pipelines.get(SHADERS.add), [x, y], [["u32", count], ["u32", period], ["u32", 0], ["u32", 0]], grid(count, 256));
  }

  /** out = layer_norm(x) * weight + bias, row by row (layer_norm.wgsl cannot write its input). */
  private layerNorm(step: Step, x: GPUBuffer, weight: GPUBuffer, bias: GPUBuffer, out: GPUBuffer, rows: number): void {
    step.dispatch(this.pipelines.get(SHADERS.layerNorm), [x, weight, bias, out], [["u32", this.config.hiddenSize], ["f32", this.config.layerNormEps]], grid(rows, 1));
  }
}

/** Reads the encoder's tensors and puts them on the device: matrices in the runner's layout, vectors as f32. */
function uploadVisionWeights(file: ReturnType<typeof openVisionFile>, memory: DeviceBuffers, partBytes: number): GpuVisionWeights {
  const { config, names, tensors } = file;
  const { hiddenSize: d, patchSize: p, outputSize } = config;
  const path = tensors.get(names.patch)!.path;
  const matrixNames = new Set([names.patch, ...names.layers.flatMap((layer) => [layer.q, layer.k, layer.v, layer.output, layer.up, layer.down])]);
  const matrices = new Map<string, GpuWeight>();
  const vectors = new Map<string, GPUBuffer>();
  const upload = (label: string, bytes: ArrayBufferView) => memory.upload(label, bytes);
  // The positions and the projection are read as f32 on their own (positionRows, projectionRows).
  const needed = new Map([...tensors].filter(([name]) => name !== names.positions && name !== names.projection));
  readTensors({ tensors: needed, totalTensorBytes: 0 }, { kernelTypes: VISION_MATRIX_TYPES }, { allocate: (bytes) => new Uint8Array(bytes) }, (tensor) => {
    if (matrixNames.has(tensor.name)) {
      // The patch kernel [p, p, 3, d] is read as [3 p^2, d]: a row of its values per output channel.
      const shape = tensor.name === names.patch ? [3 * p * p, d] : tensor.shape;
      matrices.set(tensor.name, uploadWeight({ ...tensor, shape }, upload, partBytes, path));
    } else if (tensor.type !== GgmlType.F32) {
      throw new ModelFileError(path, `tensor '${tensor.name}' has shape [${tensor.shape.join(", ")}] in ${ggmlTypeName(tensor.type)}: a vector must be 1-D or F32`);
    } else {
      vectors.set(tensor.name, memory.upload(tensor.name, tensor.bytes));
    }
  });
  const projection = projectionRows(file);
  const matrix = (name: string) => matrices.get(name)!;
  const vector = (name: string) => vectors.get(name)!;
  return {
    patch: matrix(names.patch), patchBias: vector(names.patchBias),
    positions: memory.upload(names.positions, positionRows(file)),
    layers: names.layers.map((layer: VisionLayerNames): GpuVisionLayer => ({
      norm1: vector(layer.norm1), norm1Bias: vector(layer.norm1Bias),
      q: matrix(layer.q), qBias: vector(layer.qBias), k: matrix(layer.k), kBias: vector(layer.kBias), v: matrix(layer.v), vBias: vector(layer.vBias),
      output: matrix(layer.output), outputBias: vector(layer.outputBias),
      norm2: vector(layer.norm2), norm2Bias: vector(layer.norm2Bias),
      up: matrix(layer.up), upBias: vector(layer.upBias), down: matrix(layer.down), downBias: vector(layer.downBias),
    })),
    postNorm: vector(names.postNorm), postNormBias: vector(names.postNormBias),
    softEmbeddingNorm: vector(names.softEmbeddingNorm),
    projection: uploadWeight({ name: names.projection, type: GgmlType.F32, layout: "as-stored", shape: [d, outputSize], bytes: new Uint8Array(projection.buffer) }, upload, partBytes, path),
  };
}
