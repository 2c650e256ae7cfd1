// Gemma 3's vision projector on WebAssembly kernels, in its own memory and threads: patch embedding, the SigLIP
// encoder layers (layer norms, bidirectional attention, GELU MLPs), then average pooling to the image tokens, the
// soft-embedding RMS norm and the projection into the text model's embeddings (llama.cpp's clip_graph_siglip).
import { GgmlType } from "../../kernels/formats/types.js";
import { type SimdLevel, WasmRuntime } from "../../kernels/wasm/runtime.js";
import { type ResidentTensor, type WeightStorage, loadWeights } from "../backends/wasm/weight-loader.js";
import type { RgbImage } from "../chat/messages.js";
import type { VisionConfig } from "./clip-config.js";
import type { VisionEncoder } from "./encoder.js";
import { imagePatches } from "./preprocess.js";
import { VISION_MATRIX_TYPES, openVisionFile, positionRows, projectionRows } from "./vision-file.js";
import type { VisionLayerNames, VisionTensorNames } from "./vision-tensors.js";

const MATMUL_KERNELS: Partial<Record<GgmlType, string>> = {
  [GgmlType.F32]: "matmul_f32", [GgmlType.F16]: "matmul_f16", [GgmlType.BF16]: "matmul_bf16",
};
const STORAGE: WeightStorage = { kernelTypes: VISION_MATRIX_TYPES };
// Elementwise and row work below this many values runs on the calling thread: a dispatch would cost more.
const SERIAL_THRESHOLD = 16384;

/** Options of {@link WasmVisionEncoder.load}. */
export interface WasmVisionOptions {
  threads: number;
  simd?: SimdLevel | "auto";
}

type Buffer = "patches" | "x" | "h" | "q" | "k" | "v" | "attention" | "up" | "pooled" | "output" | "positions" | "projection";

/** Gemma 3's vision projector, loaded into WebAssembly memory. */
export class WasmVisionEncoder implements VisionEncoder {
  private constructor(
    readonly path: string,
    readonly config: VisionConfig,
    private readonly runtime: WasmRuntime,
    private readonly weights: ReadonlyMap<string, ResidentTensor>,
    private readonly names: VisionTensorNames,
    private readonly buffers: Record<Buffer, number>,
  ) {}

  /** Loads the mmproj file at `path`. @throws ModelFileError for a file loom cannot run, naming what is wrong. */
  static async load(path: string, options: WasmVisionOptions): Promise<WasmVisionEncoder> {
    const file = openVisionFile(path);
    const { config, names, tensors } = file;
    const runtime = await WasmRuntime.create({ threads: options.threads, simd: options.simd });
    try {
      const needed = new Map([...tensors].filter(([name]) => name !== names.positions && name !== names.projection));
      const weights = loadWeights({ tensors: needed, totalTensorBytes: 0 }, () => runtime, STORAGE);
      const { hiddenSize: d, feedForwardSize: ffn, patchSize: p, patchesPerSide: side, tokensPerImage, outputSize } = config;
      const n = side * side;
      const floats = (count: number) => count * 4;
      const buffers = Object.fromEntries(Object.entries({
        patches: floats(n * 3 * p * p), x: floats(n * d), h: floats(n * d), q: floats(n * d), k: floats(n * d), v: floats(n * d),
        attention: floats(n * d), up: floats(n * ffn), pooled: floats(tokensPerImage * d), output: floats(tokensPerImage * outputSize),
        positions: floats(n * d), projection: floats(outputSize * d),
      } satisfies Record<Buffer, number>).map(([name, bytes]) => [name, runtime.alloc(bytes)])) as Record<Buffer, number>;
      // The positions as f32 rows [patches, d]; the projection transposed to [outputSize, d] rows, as matmul reads them.
      runtime.f32(buffers.positions, n * d).set(positionRows(file));
      runtime.f32(buffers.projection, outputSize * d).set(projectionRows(file));
      return new WasmVisionEncoder(path, config, runtime, weights, names, buffers);
    } catch (error) {
      await runtime.dispose();
      throw error;
    }
  }

  encode(image: RgbImage): Float32Array {
    const { config, runtime, buffers: b, names } = this;
    const { hiddenSize: d, patchSize: p, patchesPerSide: side, tokensPerImage, outputSize, layerNormEps: eps } = config;
    const n = side * side;
    runtime.f32(b.patches, n * 3 * p * p).set(imagePatches(image, config));
    // Patch embedding (the convolution as a matmul over patch rows), its bias, the learned positions.
    this.linear(b.patches, n, 3 * p * p, names.patch, b.x, names.patchBias);
    this.elementwise("add", [b.x, b.positions, b.x], n * d);
    for (const layer of names.layers) this.layer(layer, n);
    this.layerNorm(b.x, names.postNorm, names.postNormBias, b.h, n);
    // Projector: average patches merge x merge, RMS norm times soft_emb_norm, map into the text model.
    runtime.parallel("pool_2d", [b.h, b.pooled, side, side, d, config.mergeFactor], tokensPerImage);
    this.rows("rmsnorm", [b.pooled, this.weight(names.softEmbeddingNorm).pointer, b.pooled, d, eps], tokensPerImage, d);
    runtime.parallel("matmul_f32", [b.pooled, b.projection, b.output, tokensPerImage, d, outputSize], outputSize);
    return runtime.f32(b.output, tokensPerImage * outputSize).slice();
  }

  async dispose(): Promise<void> {
    await this.runtime.dispose();
  }

  /** One encoder layer on x [n, d]: x += attn(ln1(x)); x += mlp(ln2(x)). */
  private layer(layer: VisionLayerNames, n: number): void {
    const { config, buffers: b } = this;
    const { hiddenSize: d, feedForwardSize: ffn, heads, headDim } = config;
    this.layerNorm(b.x, layer.norm1, layer.norm1Bias, b.h, n);
    this.linear(b.h, n, d, layer.q, b.q, layer.qBias);
    this.linear(b.h, n, d, layer.k, b.k, layer.kBias);
    this.linear(b.h, n, d, layer.v, b.v, layer.vBias);
    const scale = Math.fround(1 / Math.sqrt(headDim));
    this.runtime.parallel("attention_dense", [b.q, b.k, b.v, b.attention, n, heads, headDim, scale, ATTENTION_BLOCK_ROWS], heads * Math.ceil(n / ATTENTION_BLOCK_ROWS));
    this.linear(b.attention, n, d, layer.output, b.h, layer.outputBias);
    this.elementwise("add", [b.x, b.h, b.x], n * d);
    this.layerNorm(b.x, layer.norm2, layer.norm2Bias, b.h, n);
    this.linear(b.h, n, d, layer.up, b.up, layer.upBias);
    this.elementwise("gelu", [b.up, b.up, n * ffn], n * ffn);
    this.linear(b.up, n, ffn, layer.down, b.h, layer.downBias);
    this.elementwise("add", [b.x, b.h, b.x], n * d);
  }

  private weight(name: string): ResidentTensor {
    return this.weights.get(name)!;
  }

  /** out = x W^T + bias for `rows` rows of `k` values; W's rows are its outputs. */
  private linear(x: number, rows: number, k: number, weightName: string, out: number, biasName: string): void {
    const weight = this.weight(weightName);
    const n = weight.byteLength / (k * bytesPerElement(weight.type));
    this.runtime.parallel(MATMUL_KERNELS[weight.type]!, [x, weight.pointer, out, rows, k, n], n);
    this.rows("add_bias", [out, this.weight(biasName).pointer, n], rows, n);
  }

  private layerNorm(x: number, weightName: string, biasName: string, out: number, rows: number): void {
    const d = this.config.hiddenSize;
    this.rows("layer_norm", [x, this.weight(weightName).pointer, this.weight(biasName).pointer, out, d, this.config.layerNormEps], rows, d);
  }

  private rows(kernel: string, args: number[], rows: number, width: number): void {
    if (rows * width < SERIAL_THRESHOLD) this.runtime.call(kernel, ...args, 0, rows);
    else this.runtime.parallel(kernel, args, rows);
  }

  private elementwise(kernel: string, args: number[], count: number): void {
    if (count < SERIAL_THRESHOLD) this.runtime.call(kernel, ...args, 0, count);
    else this.runtime.parallel(kernel, args, count);
  }
}

/** Bytes per element of the float matrix types the encoder reads. */
function bytesPerElement(type: GgmlType): number {
  return type === GgmlType.F32 ? 4 : 2;
}

/** Query rows attention_dense takes per share (a multiple of 4: its kernel computes four rows per pass). */
const ATTENTION_BLOCK_ROWS = 64;
