// Gemma 3's vision projector on WebAssembly kernels, in its own memory and threads: patch embedding, the SigLIP
// encoder layers (layer norms, bidirectional attention, GELU MLPs), then average pooling to the image tokens, the
// soft-embedding RMS norm and the projection into the text model's embeddings (llama.cpp's clip_graph_siglip).
import { f16ToF32 } from "../../kernels/formats/f16.js";
import { GgmlType, ggmlTypeName } from "../../kernels/formats/types.js";
import { type SimdLevel, WasmRuntime } from "../../kernels/wasm/runtime.js";
import { type ResidentTensor, type WeightStorage, loadWeights } from "../backends/wasm/weight-loader.js";
import type { RgbImage } from "../chat/messages.js";
import { ModelFileError } from "../model/errors.js";
import { readFileRange } from "../model/file-io.js";
import { readGgufHeader } from "../model/gguf/reader.js";
import type { TensorLocation } from "../model/source.js";
import { type VisionConfig, visionConfigFromGguf } from "./clip-config.js";
import type { VisionEncoder } from "./encoder.js";
import { imagePatches } from "./preprocess.js";
import { type VisionLayerNames, type VisionTensorNames, checkVisionTensors, visionTensorNames } from "./vision-tensors.js";

const MATMUL_KERNELS: Partial<Record<GgmlType, string>> = {
  [GgmlType.F32]: "matmul_f32", [GgmlType.F16]: "matmul_f16", [GgmlType.BF16]: "matmul_bf16",
};
const STORAGE: WeightStorage = { kernelTypes: new Set(Object.keys(MATMUL_KERNELS).map(Number)) };
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
    const header = readGgufHeader(path);
    const config = visionConfigFromGguf(path, header.metadata, header.tensors);
    const tensors = new Map<string, TensorLocation>(header.tensors.map((tensor) => [tensor.name, { ...tensor, path }]));
    checkVisionTensors(path, config, (name) => tensors.get(name)?.shape);
    const names = visionTensorNames(config);
    for (const name of [names.patch, ...names.layers.flatMap((layer) => [layer.q, layer.k, layer.v, layer.output, layer.up, layer.down])]) {
      const type = tensors.get(name)!.type;
      if (!MATMUL_KERNELS[type]) throw new ModelFileError(path, `tensor '${name}' has type ${ggmlTypeName(type)}; loom's vision encoder reads F32, F16 and BF16 matrices`);
    }
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
      runtime.f32(buffers.positions, n * d).set(readFloats(tensors.get(names.positions)!));
      runtime.f32(buffers.projection, outputSize * d).set(transpose(readFloats(tensors.get(names.projection)!), d, outputSize));
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

/** A 1-D or 2-D F32, F16 or BF16 tensor of the file as f32 values. */
function readFloats(tensor: TensorLocation): Float32Array {
  const bytes = readFileRange(tensor.path, tensor.fileOffset, tensor.byteLength);
  const count = tensor.shape.reduce((a, b) => a * b, 1);
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (tensor.type === GgmlType.F32) return new Float32Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + count * 4));
  if (tensor.type === GgmlType.F16) return Float32Array.from({ length: count }, (_, i) => f16ToF32(view.getUint16(i * 2, true)));
  if (tensor.type === GgmlType.BF16) return Float32Array.from({ length: count }, (_, i) => new Float32Array(new Uint32Array([view.getUint16(i * 2, true) << 16]).buffer)[0]!);
  throw new ModelFileError(tensor.path, `tensor '${tensor.name}' has type ${ggmlTypeName(tensor.type)}; F32, F16 or BF16 expected`);
}

/** values [rows, columns] row-major -> [columns, rows]. */
function transpose(values: Float32Array, rows: number, columns: number): Float32Array {
  const out = new Float32Array(values.length);
  for (let r = 0; r < rows; r++) for (let c = 0; c < columns; c++) out[c * rows + r] = values[r * columns + c]!;
  return out;
}
