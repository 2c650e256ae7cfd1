// Runs the transformer forward pass on the WebAssembly kernels: one config-driven definition for the Llama,
// Qwen2 (q/k/v bias) and Qwen3 (q/k norm) families, over a paged KV cache, for a batch of sequence chunks.
import { type KvDtype, kvBlockBytes, kvBlocksForBudget } from "../../kv/budget.js";
import type { KvCopy } from "../../kv/kv-cache.js";
import type { ModelConfig } from "../../model/config.js";
import { GgmlType, ggmlTypeName } from "../../../kernels/formats/types.js";
import { f16ToF32 } from "../../../kernels/formats/f16.js";
import { ModelFileError } from "../../model/errors.js";
import { ropeThetaScale } from "../../../kernels/rope-frequencies.js";
import type { ModelSource } from "../../model/source.js";
import type { WasmRuntime } from "../../../kernels/wasm/runtime.js";
import { type LayerTensors, layerTensors } from "../layer-tensors.js";
import { type ModelRunner, type RunnerOptions, type SequenceChunk, checkBatch, checkKvCopies } from "../runner.js";
import { type ResidentTensor, loadWeights } from "./weight-loader.js";

interface LayerWeights extends LayerTensors<ResidentTensor, ResidentTensor> {
  /** This layer's KV block pools: [kvBlocks, blockSize, kvHeads, headDim] of the KV dtype. */
  kCache: number;
  vCache: number;
}

const MATMUL_KERNELS: Partial<Record<GgmlType, string>> = {
  [GgmlType.F32]: "matmul_f32", [GgmlType.F16]: "matmul_f16", [GgmlType.BF16]: "matmul_bf16",
  [GgmlType.Q8_0]: "matmul_q8_0", [GgmlType.Q4_0]: "matmul_q4_0",
  [GgmlType.Q4_K]: "matmul_q4_k", [GgmlType.Q5_K]: "matmul_q5_k", [GgmlType.Q6_K]: "matmul_q6_k",
};
const GET_ROWS_KERNELS: Partial<Record<GgmlType, string>> = {
  [GgmlType.F32]: "get_rows_f32", [GgmlType.F16]: "get_rows_f16", [GgmlType.BF16]: "get_rows_bf16",
  [GgmlType.Q8_0]: "get_rows_q8_0", [GgmlType.Q4_0]: "get_rows_q4_0",
  [GgmlType.Q4_K]: "get_rows_q4_k", [GgmlType.Q5_K]: "get_rows_q5_k", [GgmlType.Q6_K]: "get_rows_q6_k",
};
/** Matrix types kept as stored at load: every one has a matmul and a get_rows kernel. */
const WASM_KERNEL_TYPES: ReadonlySet<GgmlType> = new Set(Object.keys(MATMUL_KERNELS).map(Number));

/** The activation format each quantized weight type's kernel reads (as llama.cpp's CPU backend pairs them). */
type ActivationFormat = "q8_0" | "q8_k";
const ACTIVATION_FORMATS: Partial<Record<GgmlType, ActivationFormat>> = {
  [GgmlType.Q8_0]: "q8_0", [GgmlType.Q4_0]: "q8_0", [GgmlType.Q4_K]: "q8_k", [GgmlType.Q5_K]: "q8_k", [GgmlType.Q6_K]: "q8_k",
};
/** Bytes per value of each activation format: Q8_0 blocks of 32 in 34 bytes, Q8_K blocks of 256 in 292. */
const ACTIVATION_BYTES_PER_VALUE: Record<ActivationFormat, number> = { q8_0: 34 / 32, q8_k: 292 / 256 };

// Elementwise work below this many values runs on the calling thread: a dispatch would cost more.
const SERIAL_THRESHOLD = 16384;

/**
 * Activations feeding linear layers, quantized at most once per activation format (Q8_0 for Q8_0/Q4_0 weights, Q8_K
 * for K-quants) for all the layers that share them.
 */
class LinearInput {
  private readonly quantized = new Set<ActivationFormat>();
  constructor(readonly pointer: number, readonly rows: number, readonly width: number, private readonly quantizedPointers: Record<ActivationFormat, number>) {}

  forWeight(runner: WasmModelRunner, weight: ResidentTensor): number {
    const format = ACTIVATION_FORMATS[weight.type];
    if (format === undefined) return this.pointer;
    const pointer = this.quantizedPointers[format];
    if (!this.quantized.has(format)) {
      runner.runtime.parallel(`quantize_${format}`, [this.pointer, pointer, this.width], this.rows);
      this.quantized.add(format);
    }
    return pointer;
  }
}

/** The WebAssembly model runner: weights resident in wasm memory, a paged KV pool, fixed activation buffers. */
export class WasmModelRunner implements ModelRunner {
  private readonly layers: LayerWeights[];
  private readonly embedding: ResidentTensor;
  private readonly outputNorm: ResidentTensor;
  private readonly outputWeight: ResidentTensor;
  private readonly ropeFactors: number;
  private readonly thetaScale: number;
  private readonly buffers: Record<"x" | "h" | "xq" | "xk" | "q" | "k" | "v" | "attention" | "gate" | "up" | "logits" | "ids" | "positions" | "blockTables" | "descriptors" | "copyTables" | "scratch", number>;
  /** KV blocks in the cache, as the budget allowed. */
  readonly kvBlocks: number;
  readonly kvDtype: KvDtype;
  private readonly kernels: { store: string; attention: string; shift: string };

  /** Loads the model's weights into `runtime` and allocates every buffer a forward pass needs. */
  constructor(readonly source: ModelSource, readonly runtime: WasmRuntime, readonly options: RunnerOptions) {
    const config = source.config;
    const weights = loadWeights(source, runtime, WASM_KERNEL_TYPES, options.onProgress);
    const need = (name: string): ResidentTensor => {
      const tensor = weights.get(name);
      if (!tensor) throw new ModelFileError(source.path, `tensor '${name}' is missing`);
      return tensor;
    };
    const linear = (name: string, k: number, n: number): ResidentTensor => {
      const tensor = need(name);
      if (!MATMUL_KERNELS[tensor.type]) throw new ModelFileError(source.path, `tensor '${name}' has type ${ggmlTypeName(tensor.type)}, which has no matmul kernel`);
      if (tensor.shape[0] !== k || (tensor.shape[1] ?? 1) !== n) {
        throw new ModelFileError(source.path, `tensor '${name}' has shape [${tensor.shape}], expected [${k}, ${n}]`);
      }
      return tensor;
    };
    const vector = (name: string, n: number): ResidentTensor => {
      const tensor = need(name);
      if (tensor.shape.length !== 1 || tensor.shape[0] !== n) throw new ModelFileError(source.path, `tensor '${name}' has shape [${tensor.shape}], expected [${n}]`);
      return tensor;
    };
    const optionalVector = (name: string, n: number) => (weights.has(name) ? vector(name, n) : undefined);

    const d = config.hidden_size;
    const qDim = config.num_attention_heads * config.head_dim;
    const kvDim = config.num_key_value_heads * config.head_dim;
    const ffn = config.intermediate_size;
    this.embedding = need("token_embd.weight");
    if (!GET_ROWS_KERNELS[this.embedding.type]) throw new ModelFileError(source.path, `token_embd.weight type ${ggmlTypeName(this.embedding.type)} is not supported`);
    this.outputNorm = vector("output_norm.weight", d);
    this.outputWeight = weights.has("output.weight") ? linear("output.weight", d, config.vocab_size) : linear("token_embd.weight", d, config.vocab_size);
    const placer = { matrix: linear, vector, optionalVector };
    this.layers = Array.from({ length: config.num_hidden_layers }, (_, i) => ({ ...layerTensors(config, i, placer), kCache: 0, vCache: 0 }));
    this.thetaScale = ropeThetaScale(config.rope_theta, config.rotary_dim);
    this.ropeFactors = 0;
    if (source.ropeFreqFactors) {
      this.ropeFactors = runtime.alloc(source.ropeFreqFactors.byteLength);
      runtime.f32(this.ropeFactors, source.ropeFreqFactors.length).set(source.ropeFreqFactors);
    }
    const T = options.maxBatchTokens;
    const widest = Math.max(d, qDim, ffn);
    this.buffers = {
      x: runtime.alloc(T * d * 4),
      h: runtime.alloc(T * Math.max(d, qDim) * 4),
      xq: runtime.alloc(Math.ceil(T * widest * ACTIVATION_BYTES_PER_VALUE.q8_0) + 64),
      xk: runtime.alloc(Math.ceil(T * widest * ACTIVATION_BYTES_PER_VALUE.q8_k) + 64),
      q: runtime.alloc(T * qDim * 4),
      k: runtime.alloc(T * kvDim * 4),
      v: runtime.alloc(T * kvDim * 4),
      attention: runtime.alloc(T * qDim * 4),
      gate: runtime.alloc(T * ffn * 4),
      up: runtime.alloc(T * ffn * 4),
      logits: runtime.alloc(options.maxSequences * config.vocab_size * 4),
      ids: runtime.alloc(T * 4),
      positions: runtime.alloc(T * 4),
      blockTables: runtime.alloc(options.maxSequences * Math.ceil(options.maxContext / options.blockSize) * 4),
      descriptors: runtime.alloc(options.maxSequences * 4 * 4),
      copyTables: runtime.alloc(2 * Math.ceil(options.maxContext / options.blockSize) * 4),
      // One scores row per (sequence, head), so that every pair can run in parallel.
      scratch: runtime.alloc(options.maxSequences * config.num_attention_heads * options.maxContext * 4),
    };

    // The KV cache takes what the budget allows of the memory left.
    this.kvDtype = options.kvCache.dtype ?? "f32";
    if (this.kvDtype !== "f32" && this.kvDtype !== "f16") throw new RangeError(`kvCache.dtype must be "f32" or "f16", got ${JSON.stringify(this.kvDtype)}`);
    const blockBytes = kvBlockBytes(config.num_hidden_layers, kvDim, options.blockSize, this.kvDtype);
    const headroom = 16 * 1024 * 1024; // alignment and later scratch
    this.kvBlocks = kvBlocksForBudget(options.kvCache, blockBytes, Math.max(0, runtime.availableBytes - headroom), Math.ceil(options.maxContext / options.blockSize));
    const layerBytes = blockBytes / config.num_hidden_layers / 2 * this.kvBlocks;
    for (const layer of this.layers) {
      layer.kCache = runtime.alloc(layerBytes);
      layer.vCache = runtime.alloc(layerBytes);
    }
    const f16 = this.kvDtype === "f16";
    this.kernels = {
      store: f16 ? "kv_store_f16" : "kv_store",
      attention: f16 ? "attention_chunks_f16" : "attention_chunks",
      shift: f16 ? "rope_shift_f16" : "rope_shift",
    };
  }

  get config(): ModelConfig {
    return this.source.config;
  }

  /**
   * Runs one forward pass over every chunk, appending their K/V to the cache, and returns the logits of the chunks
   * that asked for them: [number of such chunks, vocab_size], in chunk order.
   * NOTE: the returned array views WebAssembly memory and is overwritten by the next call.
   */
  forward(chunks: readonly SequenceChunk[]): Float32Array {
    const config = this.config;
    const { runtime, buffers: b, options } = this;
    const T = checkBatch(chunks, options, config.vocab_size);
    const d = config.hidden_size;
    const heads = config.num_attention_heads;
    const kvHeads = config.num_key_value_heads;
    const headDim = config.head_dim;
    const qDim = heads * headDim;
    const kvDim = kvHeads * headDim;
    const ffn = config.intermediate_size;
    const blocksPerSequence = Math.ceil(options.maxContext / options.blockSize);

    const ids = runtime.i32(b.ids, T);
    const positions = runtime.i32(b.positions, T);
    let row = 0;
    chunks.forEach((chunk, s) => {
      for (let i = 0; i < chunk.tokens.length; i++, row++) {
        ids[row] = chunk.tokens[i];
        positions[row] = chunk.startPosition + i;
      }
      const table = runtime.i32(b.blockTables + s * blocksPerSequence * 4, blocksPerSequence);
      for (let i = 0; i < chunk.blockTable.length; i++) table[i] = chunk.blockTable[i];
    });

    // Attention descriptors: [first row, rows, block table pointer, positions pointer] per chunk.
    const descriptors = runtime.i32(b.descriptors, chunks.length * 4);
    let firstRow = 0;
    // Scores rows only as long as the longest sequence of this call: a short stride keeps scratch hot.
    const scoresStride = chunks.reduce((longest, chunk) => Math.max(longest, chunk.startPosition + chunk.tokens.length), 0);
    chunks.forEach((chunk, s) => {
      descriptors.set([firstRow, chunk.tokens.length, b.blockTables + s * blocksPerSequence * 4, b.positions + firstRow * 4], s * 4);
      firstRow += chunk.tokens.length;
    });

    const quantized = { q8_0: b.xq, q8_k: b.xk };
    runtime.parallel(GET_ROWS_KERNELS[this.embedding.type]!, [this.embedding.pointer, b.ids, b.x, d], T);
    for (const layer of this.layers) {
      // Attention block.
      this.rows("rmsnorm", [b.x, layer.attnNorm.pointer, b.h, d, config.rms_norm_eps], T, d);
      const normed = new LinearInput(b.h, T, d, quantized);
      this.linear(normed, layer.q, b.q, layer.qBias);
      this.linear(normed, layer.k, b.k, layer.kBias);
      this.linear(normed, layer.v, b.v, layer.vBias);
      if (layer.qNorm) this.rows("rmsnorm", [b.q, layer.qNorm.pointer, b.q, headDim, config.rms_norm_eps], T * heads, headDim);
      if (layer.kNorm) this.rows("rmsnorm", [b.k, layer.kNorm.pointer, b.k, headDim, config.rms_norm_eps], T * kvHeads, headDim);
      const rope = [b.positions, this.ropeFactors];
      this.rows("rope_neox", [b.q, rope[0], rope[1], T, heads, headDim, config.rotary_dim, this.thetaScale], T, qDim);
      this.rows("rope_neox", [b.k, rope[0], rope[1], T, kvHeads, headDim, config.rotary_dim, this.thetaScale], T, kvDim);
      let first = 0;
      chunks.forEach((chunk, s) => {
        const table = b.blockTables + s * blocksPerSequence * 4;
        runtime.call(this.kernels.store, b.k + first * kvDim * 4, b.v + first * kvDim * 4, layer.kCache, layer.vCache, table, b.positions + first * 4, chunk.tokens.length, kvDim, options.blockSize);
        first += chunk.tokens.length;
      });
      // Split over (chunk, head) pairs in whole kv-head groups, so that heads sharing K/V read it once.
      runtime.parallel(this.kernels.attention, [
        b.descriptors, b.q, layer.kCache, layer.vCache, b.attention, b.scratch,
        heads, kvHeads, headDim, options.blockSize, 1 / Math.sqrt(headDim), scoresStride,
      ], chunks.length * heads, heads / kvHeads);
      this.linear(new LinearInput(b.attention, T, qDim, quantized), layer.output, b.h);
      this.elementwise("add", [b.x, b.h, b.x], T * d);

      // Feed-forward block.
      this.rows("rmsnorm", [b.x, layer.ffnNorm.pointer, b.h, d, config.rms_norm_eps], T, d);
      const ffnInput = new LinearInput(b.h, T, d, quantized);
      this.linear(ffnInput, layer.gate, b.gate);
      this.linear(ffnInput, layer.up, b.up);
      this.elementwise("silu_mul", [b.gate, b.up, b.gate, T * ffn], T * ffn);
      this.linear(new LinearInput(b.gate, T, ffn, quantized), layer.down, b.h);
      this.elementwise("add", [b.x, b.h, b.x], T * d);
    }

    // Logits only for the last token of the chunks that want them.
    const x = runtime.f32(b.x, T * d);
    const gathered = runtime.f32(b.h, T * d);
    let outputs = 0;
    let end = 0;
    for (const chunk of chunks) {
      end += chunk.tokens.length;
      if (chunk.wantLogits) gathered.set(x.subarray((end - 1) * d, end * d), outputs++ * d);
    }
    if (outputs === 0) return new Float32Array(0);
    this.rows("rmsnorm", [b.h, this.outputNorm.pointer, b.h, d, config.rms_norm_eps], outputs, d);
    this.linear(new LinearInput(b.h, outputs, d, quantized), this.outputWeight, b.logits);
    return runtime.f32(b.logits, outputs * config.vocab_size);
  }

  /**
   * Copies KV out of cached chains into a sequence (table `targetBlocks`), re-rotating keys by each copy's position
   * delta: what prefix reuse of a partial block and section reuse need. NOTE: sources and targets never share a block.
   */
  copyKv(copies: readonly KvCopy[], targetBlocks: readonly number[]): void {
    if (copies.length === 0) return;
    const { runtime, options, config } = this;
    const blocksPerSequence = Math.ceil(options.maxContext / options.blockSize);
    const kvDim = config.num_key_value_heads * config.head_dim;
    const rowBytes = kvDim * (this.kvDtype === "f16" ? 2 : 4);
    const source = this.buffers.copyTables;
    const target = source + blocksPerSequence * 4;
    runtime.i32(target, targetBlocks.length).set(targetBlocks);
    checkKvCopies(copies, targetBlocks, options.blockSize);
    for (const copy of copies) {
      runtime.i32(source, copy.sourceBlocks.length).set(copy.sourceBlocks);
      const delta = copy.targetStart - copy.sourceStart;
      for (const layer of this.layers) {
        runtime.call("kv_copy", layer.kCache, layer.vCache, source, copy.sourceStart, target, copy.targetStart, rowBytes, options.blockSize, 0, copy.count);
        if (delta !== 0) {
          runtime.call(this.kernels.shift, layer.kCache, target, copy.targetStart, config.num_key_value_heads, config.head_dim, config.rotary_dim, options.blockSize, delta, this.ropeFactors, this.thetaScale, 0, copy.count);
        }
      }
    }
  }

  /**
   * Reads back the cached K and V of `count` positions from `start` of one layer through a block table, as f32
   * [count, kvHeads * headDim] (for tests and debugging: this copies out of the cache).
   */
  readKv(layer: number, blockTable: readonly number[], start: number, count: number): { k: Float32Array; v: Float32Array } {
    const { runtime, options, config } = this;
    const kvDim = config.num_key_value_heads * config.head_dim;
    const f16 = this.kvDtype === "f16";
    const read = (cache: number) => {
      const out = new Float32Array(count * kvDim);
      for (let r = 0; r < count; r++) {
        const position = start + r;
        const slot = blockTable[Math.floor(position / options.blockSize)] * options.blockSize + (position % options.blockSize);
        if (f16) {
          const halves = runtime.u16(cache + slot * kvDim * 2, kvDim);
          for (let i = 0; i < kvDim; i++) out[r * kvDim + i] = f16ToF32(halves[i]);
        } else {
          out.set(runtime.f32(cache + slot * kvDim * 4, kvDim), r * kvDim);
        }
      }
      return out;
    };
    const cacheLayer = this.layers[layer];
    return { k: read(cacheLayer.kCache), v: read(cacheLayer.vCache) };
  }

  /** y = x W^T (+ bias) for every row of the input. */
  private linear(input: LinearInput, weight: ResidentTensor, out: number, bias?: ResidentTensor): void {
    const k = weight.shape[0];
    const n = weight.shape[1];
    this.runtime.parallel(MATMUL_KERNELS[weight.type]!, [input.forWeight(this, weight), weight.pointer, out, input.rows, k, n], n);
    if (bias) {
      const y = this.runtime.f32(out, input.rows * n);
      const add = this.runtime.f32(bias.pointer, n);
      for (let r = 0; r < input.rows; r++) for (let j = 0; j < n; j++) y[r * n + j] += add[j];
    }
  }

  /** A row-wise kernel whose last two arguments are a row range. */
  private rows(kernel: string, args: number[], rows: number, width: number): void {
    if (rows * width < SERIAL_THRESHOLD) this.runtime.call(kernel, ...args, 0, rows);
    else this.runtime.parallel(kernel, args, rows);
  }

  /** An elementwise kernel whose last two arguments are an element range. */
  private elementwise(kernel: string, args: number[], count: number): void {
    if (count < SERIAL_THRESHOLD) this.runtime.call(kernel, ...args, 0, count);
    else this.runtime.parallel(kernel, args, count);
  }
}
