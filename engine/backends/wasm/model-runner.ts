// Runs the transformer forward pass on the WebAssembly kernels: one config-driven definition for the Llama,
// Qwen2 (q/k/v bias), Qwen3 (q/k norm), Qwen3-MoE (routed experts), Gemma 3 (scaled embeddings, post-norms, GeGLU,
// sliding-window layers with their own RoPE base), gpt-oss (attention sinks and biases, YaRN, biased experts with
// swiglu_oai) and Mistral 3 (YaRN, attention temperature) families, over a paged KV cache, for a batch of sequence chunks. A model
// larger than one WebAssembly memory (4 GiB) is spread over several, each holding a run of layers (memory-plan.ts).
import { type KvDtype, kvBlockBytes, kvBlocksForBudget } from "../../kv/budget.js";
import type { KvCopy } from "../../kv/kv-cache.js";
import {
  type ModelConfig, attentionTemperature, attentionWindow, kvSourceLayer, layerAttention, layerKvWidth, layerRope, queryScale,
} from "../../model/config.js";
import { GgmlType, ggmlTypeName } from "../../../kernels/formats/types.js";
import { f16ToF32 } from "../../../kernels/formats/f16.js";
import { ModelFileError } from "../../model/errors.js";
import { type YarnConstants, ropeThetaScale } from "../../../kernels/rope-frequencies.js";
import type { ModelSource } from "../../model/source.js";
import { RESERVED_LOW_BYTES, type SimdLevel, WasmRuntime } from "../../../kernels/wasm/runtime.js";
import { layerTensors } from "../layer-tensors.js";
import { routeTokens } from "../moe-routing.js";
import { windowLayersOf } from "../window-layers.js";
import { type ModelRunner, type RunnerOptions, type SequenceChunk, checkBatch, checkKvCopies, mediaKeyEnds } from "../runner.js";
import { type LayerWeights, MemoryGroup } from "./memory-group.js";
import { type MemoryLimits, type MemoryPlan, availableMemoryBytes, planMemory } from "./memory-plan.js";
import { type ResidentTensor, type WeightStorage, loadWeights, residentBytes } from "./weight-loader.js";
import { PER_LAYER_TOKEN_EMBD, residentPart, stageRows, tensorsReadByRows } from "./rows-read-on-demand.js";
import { TensorRowReader } from "../../model/tensor-rows.js";
import { type MatmulSegment, SEGMENT_DESCRIPTOR_BYTES, encodeSegments } from "../../../kernels/matmul/segments.js";

const MATMUL_KERNELS: Partial<Record<GgmlType, string>> = {
  [GgmlType.F32]: "matmul_f32", [GgmlType.F16]: "matmul_f16", [GgmlType.BF16]: "matmul_bf16",
  [GgmlType.Q8_0]: "matmul_q8_0", [GgmlType.Q4_0]: "matmul_q4_0",
  [GgmlType.Q4_1]: "matmul_q4_1", [GgmlType.Q5_0]: "matmul_q5_0", [GgmlType.Q5_1]: "matmul_q5_1",
  [GgmlType.Q4_K]: "matmul_q4_k", [GgmlType.Q5_K]: "matmul_q5_k", [GgmlType.Q6_K]: "matmul_q6_k",
  [GgmlType.MXFP4]: "matmul_mxfp4",
};
const GET_ROWS_KERNELS: Partial<Record<GgmlType, string>> = {
  [GgmlType.F32]: "get_rows_f32", [GgmlType.F16]: "get_rows_f16", [GgmlType.BF16]: "get_rows_bf16",
  [GgmlType.Q8_0]: "get_rows_q8_0", [GgmlType.Q4_0]: "get_rows_q4_0",
  [GgmlType.Q4_1]: "get_rows_q4_1", [GgmlType.Q5_0]: "get_rows_q5_0", [GgmlType.Q5_1]: "get_rows_q5_1",
  [GgmlType.Q4_K]: "get_rows_q4_k", [GgmlType.Q5_K]: "get_rows_q5_k", [GgmlType.Q6_K]: "get_rows_q6_k",
};
/**
 * Matrix types kept in their own type at load (every one has a matmul kernel, all but MXFP4 a get_rows kernel: an
 * MXFP4 embedding is refused below, as llama.cpp never writes one), Q6_K widened to a byte
 * per quant: its kernels then read a group with one load instead of unpacking nibbles and bit pairs (1.4-1.9x
 * faster at one row, 1.7-1.9x batched, for 1.30x the bytes of those matrices).
 */
const WASM_WEIGHT_STORAGE: WeightStorage = { kernelTypes: new Set(Object.keys(MATMUL_KERNELS).map(Number)), widenQ6_K: true };

/** The kernel of `kernels` for a weight, by its type and layout. */
function kernelFor(kernels: Partial<Record<GgmlType, string>>, weight: Pick<ResidentTensor, "type" | "layout">): string | undefined {
  const kernel = kernels[weight.type];
  return kernel && weight.layout === "q6_k-bytes" ? `${kernel}_bytes` : kernel;
}

/** The activation format each quantized weight type's kernel reads (as llama.cpp's CPU backend pairs them). */
type ActivationFormat = "q8_0" | "q8_0_wide" | "q8_1" | "q8_k";
const ACTIVATION_FORMATS: Partial<Record<GgmlType, ActivationFormat>> = {
  [GgmlType.Q8_0]: "q8_0", [GgmlType.Q4_0]: "q8_0", [GgmlType.Q5_0]: "q8_0", [GgmlType.Q4_1]: "q8_1", [GgmlType.Q5_1]: "q8_1",
  [GgmlType.Q4_K]: "q8_k", [GgmlType.Q5_K]: "q8_k", [GgmlType.Q6_K]: "q8_k", [GgmlType.MXFP4]: "q8_0",
};

/**
 * The kernel and activation format of y = x W^T for `rows` rows of x. Q8_0 weights with several rows read the same
 * Q8_0 quants widened to int16, four rows interleaved (quantize_q8_0_wide, matmul_q8_0_wide: 1.2-1.5x faster from
 * four rows, the same bits); one row keeps the compact layout, which streams a little faster.
 */
function matmulPlan(weight: Pick<ResidentTensor, "type" | "layout">, rows: number): { kernel: string; format: ActivationFormat | undefined } {
  if (weight.type === GgmlType.Q8_0 && rows > 1) return { kernel: "matmul_q8_0_wide", format: "q8_0_wide" };
  return { kernel: kernelFor(MATMUL_KERNELS, weight)!, format: ACTIVATION_FORMATS[weight.type] };
}
/** The activation buffer of each format. */
const ACTIVATION_BUFFERS = { q8_0: "xq", q8_0_wide: "xw", q8_1: "x1", q8_k: "xk" } as const satisfies Record<ActivationFormat, string>;

/**
 * Bytes of `rows` activation rows of `width` values in a format: Q8_0 blocks of 32 in 34 bytes, wide Q8_0 units of
 * 4 rows x 32 in 272 bytes (rows rounded up to a whole group), Q8_1 blocks of 32 in 36, Q8_K blocks of 256 in 292.
 */
function activationBytes(format: ActivationFormat, rows: number, width: number): number {
  if (format === "q8_0_wide") return Math.ceil(rows / 4) * (width / 32) * 272;
  return Math.ceil(rows * width * (format === "q8_0" ? 34 / 32 : format === "q8_1" ? 36 / 32 : 292 / 256));
}

// Bytes each memory keeps free beyond what is planned: allocation alignment and later scratch.
const MEMORY_HEADROOM_BYTES = 16 * 1024 * 1024;
// Alignment slack counted per allocation when planning (the arena aligns to 64 bytes).
const ALIGNMENT_BYTES = 64;

/** Bytes of one chunk's attention_chunks descriptor: [firstRow, rows, blockTable, positions, keyEnds, 0, 0, 0] i32. */
const ATTENTION_DESCRIPTOR_BYTES = 32;

/** The activation buffers of a memory group, by name. */
type BufferName =
  | "x" | "h" | "xq" | "xw" | "x1" | "xk" | "q" | "k" | "v" | "attention" | "gate" | "up" | "logits" | "logitStats" | "ids" | "positions" | "keyEnds" | "blockTables" | "descriptors"
  | "localBlockTables" | "localDescriptors" | "copyTables" | "scratch" | "router" | "gathered" | "expertOut" | "slotRows" | "slotWeights" | "segments"
  | "ones" | "ffnOut" | "perLayerInputs" | "perLayerProjection" | "perLayerTokenRows" | "perLayerTokenIds";
type Group = MemoryGroup<BufferName>;

/** What one memory computes beside its layers, which decides the buffers it needs. */
interface GroupRole {
  /** Computes logits. */
  head: boolean;
  /** Computes Gemma 4's per-layer inputs of every layer (reading the token rows from the file). */
  perLayerInputs: boolean;
  /** Layers it holds. */
  layerCount: number;
}

/** The activation formats the model's quantized matrices need (no quantized-activation buffer for the others). */
function activationFormatsOf(source: ModelSource): ReadonlySet<ActivationFormat> {
  const formats = new Set<ActivationFormat>();
  for (const tensor of source.tensors.values()) {
    if (tensor.shape.length < 2) continue;
    // One row and several rows may read different formats (matmulPlan).
    for (const rows of [1, 2]) {
      const format = matmulPlan({ type: tensor.type, layout: "as-stored" }, rows).format;
      if (format !== undefined) formats.add(format);
    }
  }
  return formats;
}

/**
 * Bytes of each activation buffer one memory group allocates; the logits buffer only where logits are computed, a
 * quantized-activation buffer only for a format the model's matrices use, Gemma 4's per-layer inputs for the layers
 * held (all of them, with the projection's scratch and the staged token rows, where they are computed).
 * NOTE: planning counts these same sizes, so allocate nothing per group that is not listed here.
 */
function activationBufferBytes(source: ModelSource, options: RunnerOptions, role: GroupRole, windowed: boolean): Record<BufferName, number> {
  const config = source.config;
  const formats = activationFormatsOf(source);
  const d = config.hidden_size;
  const shapes = Array.from({ length: config.num_hidden_layers }, (_, i) => layerAttention(config, i));
  const qDim = Math.max(...shapes.map((shape) => shape.heads * shape.headDim));
  const kvDim = Math.max(...shapes.map((shape) => shape.kvHeads * shape.headDim));
  const heads = Math.max(...shapes.map((shape) => shape.heads));
  const headDim = Math.max(...shapes.map((shape) => shape.headDim));
  // A mixture of experts computes a batch of experts' rows (T at most) at a time in the feed-forward buffers, and keeps
  // every routed row's output for moe_sum (Gemma 4 also has a dense MLP beside its experts, and runs its per-layer
  // input gate there).
  const moe = config.num_experts !== undefined;
  const gemma4 = config.architecture === "gemma4";
  const perLayer = config.hidden_size_per_layer_input ?? 0;
  const ffn = Math.max(moe ? config.moe_intermediate_size! : 0, !moe || gemma4 ? config.intermediate_size : 0, perLayer);
  const T = options.maxBatchTokens;
  const k = config.num_experts_per_tok ?? 0;
  const widest = Math.max(d, qDim, ffn);
  // One layer's per-layer inputs of a batch; one token's row of per_layer_token_embd as the file stores it.
  const layerInputBytes = T * perLayer * 4;
  const tokenRows = source.tensors.get(PER_LAYER_TOKEN_EMBD);
  const tokenRowBytes = perLayer > 0 && tokenRows ? tokenRows.byteLength / tokenRows.shape[1]! : 0;
  return {
    x: T * d * 4,
    h: T * Math.max(d, qDim) * 4,
    xq: formats.has("q8_0") ? activationBytes("q8_0", T, widest) + 64 : 0,
    xw: formats.has("q8_0_wide") ? activationBytes("q8_0_wide", T, widest) + 64 : 0,
    x1: formats.has("q8_1") ? activationBytes("q8_1", T, widest) + 64 : 0,
    xk: formats.has("q8_k") ? activationBytes("q8_k", T, widest) + 64 : 0,
    q: T * qDim * 4,
    k: T * kvDim * 4,
    v: T * kvDim * 4,
    attention: T * qDim * 4,
    gate: T * ffn * 4,
    up: T * ffn * 4,
    logits: role.head ? options.maxSequences * config.vocab_size * 4 : 0,
    // Each logits row's max and sum of exp (log_sum_exp_rows), for prompt log-probabilities.
    logitStats: role.head ? options.maxSequences * 8 : 0,
    ids: T * 4,
    positions: T * 4,
    keyEnds: T * 4,
    blockTables: options.maxSequences * Math.ceil(options.maxContext / options.blockSize) * 4,
    descriptors: options.maxSequences * ATTENTION_DESCRIPTOR_BYTES,
    localBlockTables: windowed ? options.maxSequences * Math.ceil(options.maxContext / options.blockSize) * 4 : 0,
    localDescriptors: windowed ? options.maxSequences * ATTENTION_DESCRIPTOR_BYTES : 0,
    copyTables: 2 * Math.ceil(options.maxContext / options.blockSize) * 4,
    // One scores row per (sequence, head), so that every pair can run in parallel.
    scratch: options.maxSequences * heads * options.maxContext * 4,
    router: moe ? T * config.num_experts! * 4 : 0,
    gathered: moe ? T * d * 4 : 0,
    // Every routed row's output (T * k of them), each slot's row there and its routing weight, for moe_sum.
    expertOut: moe ? T * k * d * 4 : 0,
    slotRows: moe ? T * k * 4 : 0,
    slotWeights: moe ? T * k * 4 : 0,
    // matmul_segments' descriptors: a gate and an up projection per expert of a batch; q, k and v.
    segments: Math.max(3, moe ? 2 * config.num_experts! : 0) * SEGMENT_DESCRIPTOR_BYTES,
    // Gemma 4: a weight of ones for the unweighted RMS norms (values, the router's input), the dense MLP's output
    // beside the experts', and the per-layer embedding inputs ([layers, T, n]): every layer's, the projection's
    // scratch, the batch's token rows and their staged ids where they are computed; elsewhere the layers' own.
    ones: gemma4 ? Math.max(d, headDim) * 4 : 0,
    ffnOut: gemma4 && moe ? T * d * 4 : 0,
    perLayerInputs: (role.perLayerInputs ? config.num_hidden_layers : role.layerCount) * layerInputBytes,
    perLayerProjection: role.perLayerInputs ? config.num_hidden_layers * layerInputBytes : 0,
    perLayerTokenRows: role.perLayerInputs ? T * tokenRowBytes : 0,
    perLayerTokenIds: role.perLayerInputs && perLayer > 0 ? T * 4 : 0,
  };
}

/** One projection of linears(): its weight, output buffer and bias. */
interface LinearOutput {
  weight: ResidentTensor;
  out: number;
  bias?: ResidentTensor;
}

/**
 * Activations feeding linear layers, quantized at most once per activation format (wide Q8_0 for Q8_0 weights, Q8_0
 * for Q4_0, Q8_K for K-quants) for all the layers that share them, into the group's buffer of that format.
 */
class LinearInput {
  private readonly quantized = new Set<ActivationFormat>();
  constructor(readonly pointer: number, readonly rows: number, readonly width: number, private readonly buffers: Readonly<Record<BufferName, number>>) {}

  /** This input in `format` (from matmulPlan), quantized into it on first use; the f32 rows when undefined. */
  forWeight(group: Group, format: ActivationFormat | undefined): number {
    if (format === undefined) return this.pointer;
    const pointer = this.buffers[ACTIVATION_BUFFERS[format]];
    if (!this.quantized.has(format)) {
      // The wide layout interleaves four rows per unit: its kernel takes the row count to zero a partial last group.
      const args = format === "q8_0_wide" ? [this.pointer, pointer, this.width, this.rows] : [this.pointer, pointer, this.width];
      group.runtime.parallel(`quantize_${format}`, args, this.rows);
      this.quantized.add(format);
    }
    return pointer;
  }
}

/** Options of {@link WasmModelRunner.create}. */
export interface WasmRunnerOptions extends MemoryLimits {
  /** Compute threads, the calling thread included (every memory's runtime shares them). */
  threads: number;
  /** Which build of the kernels runs (see WasmRuntimeOptions.simd; default "auto"). */
  simd?: SimdLevel | "auto";
}

/**
 * The WebAssembly model runner: weights resident in one or more wasm memories (consecutive layers per memory, each
 * with its own kernel instances, on threads they share), a paged KV cache split across them by layer, fixed
 * activation buffers in each.
 */
export class WasmModelRunner implements ModelRunner {
  /** The memories, in layer order: the residual stream passes from one to the next. */
  private readonly groups: Group[];
  private readonly embeddingGroup: Group;
  private readonly headGroup: Group;
  private readonly embedding: ResidentTensor;
  private readonly outputNorm: ResidentTensor;
  private readonly outputWeight: ResidentTensor;
  /** Per layer, RoPE's f32 ratio between consecutive frequencies (Gemma 3's sliding-window layers have their own base). */
  private readonly thetaScales: readonly number[];
  /** Per layer, linear RoPE scaling's multiplier of every angle (Gemma 3's full layers: 1 / factor; YaRN's 1 / factor; else 1). */
  private readonly freqScales: readonly number[];
  /** Per layer, YaRN's constants for the rope kernels (NO_YARN without it). */
  private readonly yarns: readonly YarnConstants[];
  /** Gemma 4's per-layer embedding tensors, when the model has them. */
  private readonly perLayerEmbedding: PerLayerEmbedding | undefined;
  /**
   * Where the per-layer inputs are computed: the memory holding those tensors, which is the embedding's or the first
   * layers' (it then computes them from the embeddings it receives, before its first layer).
   */
  private readonly perLayerGroup: Group | undefined;
  /** Queries are multiplied by this before attention (Gemma), else attention scales scores by head_dim^-1/2. */
  private readonly queryScale: number | undefined;
  /** KV blocks in the cache, as the budget allowed. */
  readonly kvBlocks: number;
  /** Slots of the sliding-window layers' caches when their KV is freed behind the window. */
  readonly localKvBlocks: number | undefined;
  /** The layers whose KV lives in those slots (empty when none is freed). */
  private readonly windowLayers: ReadonlySet<number>;
  readonly kvDtype: KvDtype;
  /** The last pass's final-normed hidden states of the chunks with wantHidden (see ModelRunner.hiddenStates). */
  hiddenStates: Float32Array = new Float32Array(0);
  /** The last pass's log-sum-exp of every logits row when a chunk had allRowLogits (see ModelRunner.logitLogSumExps). */
  logitLogSumExps: Float64Array | undefined;
  private readonly kernels: { store: string; attention: string; shift: string };

  /**
   * Plans where the model goes (see planMemory: one memory unless it does not fit, or `limits` force a split),
   * starts one runtime per memory (all sharing one set of worker threads: one memory computes at a time) and loads
   * the weights.
   * @throws ModelMemoryError before any large allocation when a part cannot fit one memory or the machine's RAM.
   */
  static async create(source: ModelSource, options: RunnerOptions, runnerOptions: WasmRunnerOptions): Promise<WasmModelRunner> {
    const plan = WasmModelRunner.plan(source, options, runnerOptions);
    const runtimes = await WasmRuntime.createSharingThreads(plan.groups.length, { threads: runnerOptions.threads, simd: runnerOptions.simd, maximumBytes: plan.maxMemoryBytes });
    try {
      return new WasmModelRunner(source, options, plan, runtimes);
    } catch (error) {
      await Promise.all(runtimes.map((runtime) => runtime.dispose()));
      throw error;
    }
  }

  /** Where `source` would go under `options` and `limits`: sizes only, nothing is read or allocated. */
  static plan(source: ModelSource, options: RunnerOptions, limits: MemoryLimits = {}): MemoryPlan {
    const config = source.config;
    const kvDtype = options.kvCache.dtype ?? "f32";
    if (kvDtype !== "f32" && kvDtype !== "f16") throw new RangeError(`kvCache.dtype must be "f32" or "f16", got ${JSON.stringify(kvDtype)}`);
    const minimumKvBlocks = Math.ceil(options.maxContext / options.blockSize);
    // Each layer's KV per block, by its own width (Gemma 4's differ by layer; its shared-KV layers hold none).
    const layerBlockBytes = Array.from({ length: config.num_hidden_layers }, (_, i) => kvBlockBytes(1, layerKvWidth(config, i), options.blockSize, kvDtype));
    const sumBytes = (layers: readonly number[]) => layers.reduce((sum, layer) => sum + layerBlockBytes[layer]!, 0);
    const allLayers = layerBlockBytes.map((_, i) => i);
    // The budget alone (validated, and at least one full context); room is the plan's to decide. Freed sliding-window
    // layers take their fixed slots out of it; the blocks pay for the other layers only.
    const allLayersBlocks = kvBlocksForBudget(options.kvCache, sumBytes(allLayers), Infinity, minimumKvBlocks);
    const windowed = windowLayersOf(config, options, allLayersBlocks);
    const fullLayersBytes = sumBytes(allLayers.filter((layer) => !windowed?.layers.has(layer)));
    const windowBytes = windowed ? sumBytes([...windowed.layers]) * windowed.kvBlocks : 0;
    // With every layer windowed, blocks cost nothing but table entries: room for every sequence's full context.
    const budgetKvBlocks = fullLayersBytes === 0
      ? options.maxSequences * minimumKvBlocks
      : kvBlocksForBudget(options.kvCache, fullLayersBytes, Infinity, minimumKvBlocks, undefined, windowBytes);
    const bufferBytes = (role: GroupRole) => activationBufferBytes(source, options, role, windowed !== undefined);
    const buffers = Object.values<number>(bufferBytes({ head: false, perLayerInputs: false, layerCount: 0 }));
    // Gemma 4's per-layer inputs: each layer's rows in its memory, and where they are computed (the memory of the
    // tensors outside the layers) every layer's with their scratch, which counts its own layers' rows twice.
    const perLayerOf = (role: GroupRole) => {
      const bytes = bufferBytes(role);
      return bytes.perLayerInputs + bytes.perLayerProjection + bytes.perLayerTokenRows + bytes.perLayerTokenIds;
    };
    const ropeBytes = source.ropeFreqFactors ? source.ropeFreqFactors.byteLength + ALIGNMENT_BYTES : 0;
    // Tensors read by rows from the file take no WebAssembly memory, only their staged rows above.
    const readByRows = tensorsReadByRows(config);
    return planMemory({
      tensors: [...residentPart(source, readByRows).tensors.values()].map((tensor) => ({ name: tensor.name, bytes: residentBytes(tensor, WASM_WEIGHT_STORAGE) + ALIGNMENT_BYTES })),
      layerCount: config.num_hidden_layers,
      tiedEmbedding: !source.tensors.has("output.weight"),
      memoryOverheadBytes: RESERVED_LOW_BYTES + buffers.reduce((sum, bytes) => sum + bytes + ALIGNMENT_BYTES, 0) + ropeBytes + MEMORY_HEADROOM_BYTES,
      headBufferBytes: (({ logits, logitStats }) => logits + logitStats + 2 * ALIGNMENT_BYTES)(bufferBytes({ head: true, perLayerInputs: false, layerCount: 0 })),
      preludeBufferBytes: perLayerOf({ head: false, perLayerInputs: true, layerCount: 0 }),
      layerBufferBytes: perLayerOf({ head: false, perLayerInputs: false, layerCount: 1 }),
      // Every layer's own bytes are given below; this is only their widest.
      kvBlockBytesPerLayer: Math.max(...layerBlockBytes),
      kvBlockBytesOfLayer: layerBlockBytes,
      windowLayers: windowed,
      minimumKvBlocks,
      budgetKvBlocks,
      availableBytes: availableMemoryBytes(),
      limits,
    });
  }

  /** Loads the model's weights into the runtimes `plan` places them in and allocates every buffer a forward pass needs. */
  private constructor(readonly source: ModelSource, readonly options: RunnerOptions, readonly plan: MemoryPlan, runtimes: readonly WasmRuntime[]) {
    const config = source.config;
    const runtimeOfTensor = new Map(plan.groups.flatMap((group, g) => group.tensors.map((name) => [name, runtimes[g]] as const)));
    const resident = residentPart(source, tensorsReadByRows(config));
    const weights = loadWeights(resident, (tensor) => runtimeOfTensor.get(tensor.name)!, WASM_WEIGHT_STORAGE, options.onProgress);
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
    const vectors = (name: string, n: number, count: number): ResidentTensor => {
      const tensor = need(name);
      if (tensor.type !== GgmlType.F32 || tensor.shape.length !== 2 || tensor.shape[0] !== n || tensor.shape[1] !== count) {
        throw new ModelFileError(source.path, `tensor '${name}' has type ${ggmlTypeName(tensor.type)} and shape [${tensor.shape}], expected F32 [${n}, ${count}]`);
      }
      return tensor;
    };
    const matrices = (name: string, k: number, n: number, count: number): ResidentTensor => {
      const tensor = need(name);
      if (!MATMUL_KERNELS[tensor.type]) throw new ModelFileError(source.path, `tensor '${name}' has type ${ggmlTypeName(tensor.type)}, which has no matmul kernel`);
      if (tensor.shape.length !== 3 || tensor.shape[0] !== k || tensor.shape[1] !== n || tensor.shape[2] !== count) {
        throw new ModelFileError(source.path, `tensor '${name}' has shape [${tensor.shape}], expected [${k}, ${n}, ${count}]`);
      }
      return tensor;
    };

    const d = config.hidden_size;
    this.embedding = need("token_embd.weight");
    if (!GET_ROWS_KERNELS[this.embedding.type]) throw new ModelFileError(source.path, `token_embd.weight type ${ggmlTypeName(this.embedding.type)} is not supported`);
    this.outputNorm = vector("output_norm.weight", d);
    this.outputWeight = weights.has("output.weight") ? linear("output.weight", d, config.vocab_size) : linear("token_embd.weight", d, config.vocab_size);
    const placer = { matrix: linear, matrices, vector, optionalVector, vectors, has: (name: string) => weights.has(name), rowsOf: rowSlice, path: source.path };
    if (config.architecture === "gemma4") this.perLayerEmbedding = gemma4Checks(source, weights, linear, vector);
    const ropes = Array.from({ length: config.num_hidden_layers }, (_, index) => layerRope(config, index));
    this.thetaScales = ropes.map((rope, index) => ropeThetaScale(rope.base, layerAttention(config, index).rotaryDim));
    this.freqScales = ropes.map((rope) => rope.freqScale);
    this.yarns = ropes.map((rope) => rope.yarn);
    this.queryScale = queryScale(config);

    // The KV cache: as many blocks as the plan found room for in every layer, but the freed sliding-window layers' slots.
    this.kvDtype = options.kvCache.dtype ?? "f32";
    this.kvBlocks = plan.kvBlocks;
    const windowed = plan.windowLayers;
    this.localKvBlocks = windowed?.kvBlocks;
    this.windowLayers = windowed?.layers ?? new Set();
    const kvCacheBytes = (layer: number) => kvBlockBytes(1, layerKvWidth(config, layer), options.blockSize, this.kvDtype) / 2 * (this.windowLayers.has(layer) ? windowed!.kvBlocks : this.kvBlocks);
    // Gemma 4's per-layer inputs are computed where their projection is (with the other tensors outside the layers).
    const perLayerIndex = this.perLayerEmbedding ? plan.groups.findIndex((group) => group.tensors.includes("per_layer_model_proj.weight")) : -1;
    this.groups = plan.groups.map((group, g) => {
      const layers = Array.from({ length: group.layerCount }, (_, i) => ({ ...layerTensors(config, group.firstLayer + i, placer), kCache: 0, vCache: 0 }));
      const role = { head: group.head, perLayerInputs: g === perLayerIndex, layerCount: group.layerCount };
      const memory = new MemoryGroup(runtimes[g], group.firstLayer, layers, activationBufferBytes(source, options, role, windowed !== undefined), source.ropeFreqFactors, kvCacheBytes);
      if (memory.buffers.ones !== 0) runtimes[g]!.f32(memory.buffers.ones, Math.max(d, config.head_dim)).fill(1);
      return memory;
    });
    // Gemma 4's shared-KV layers attend over an earlier layer's cache, which must be in their memory.
    for (const group of this.groups) {
      group.layers.forEach((layer, i) => {
        const index = group.firstLayer + i;
        const sourceLayer = kvSourceLayer(config, index);
        if (sourceLayer === index) return;
        if (!group.holdsLayer(sourceLayer)) {
          throw new ModelFileError(source.path, `layer ${index} shares layer ${sourceLayer}'s KV, which the memory plan put in another WebAssembly memory (not supported yet)`);
        }
        layer.kCache = group.layers[sourceLayer - group.firstLayer]!.kCache;
        layer.vCache = group.layers[sourceLayer - group.firstLayer]!.vCache;
      });
    }
    this.embeddingGroup = this.groups[plan.groups.findIndex((group) => group.embedding)];
    this.headGroup = this.groups[plan.groups.findIndex((group) => group.head)];
    if (this.perLayerEmbedding) {
      const group = this.groups[perLayerIndex];
      if (!group || !plan.groups[perLayerIndex]!.tensors.includes("per_layer_proj_norm.weight") || (group !== this.embeddingGroup && !(group.firstLayer === 0 && group.layers.length > 0))) {
        throw new ModelFileError(source.path, `the per-layer embedding tensors were planned apart from each other or from the embeddings' first use (not supported yet)`);
      }
      this.perLayerGroup = group;
    }
    const f16 = this.kvDtype === "f16";
    this.kernels = {
      store: f16 ? "kv_store_f16" : "kv_store",
      attention: f16 ? "attention_chunks_f16" : "attention_chunks",
      shift: f16 ? "rope_shift_f16" : "rope_shift",
    };
  }

  /** WebAssembly memories the model spans. */
  get memoryCount(): number {
    return this.groups.length;
  }

  /** Which build of the kernels runs: "relaxed" or "plain" SIMD. */
  get simd(): SimdLevel {
    return this.groups[0].runtime.simd;
  }

  /** Stops every memory's compute threads; the runner cannot be used afterwards. */
  async dispose(): Promise<void> {
    this.perLayerEmbedding?.tokens.close();
    await Promise.all(this.groups.map((group) => group.runtime.dispose()));
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
    const options = this.options;
    const T = checkBatch(chunks, options, config.vocab_size, config.hidden_size);
    const d = config.hidden_size;
    // Scores rows only as long as the longest sequence of this call: a short stride keeps scratch hot.
    const scoresStride = chunks.reduce((longest, chunk) => Math.max(longest, chunk.startPosition + chunk.tokens.length), 0);
    for (const group of this.groups) if (group === this.embeddingGroup || group.layers.length > 0) this.writeBatch(group, chunks);

    // The residual stream x [T, d] starts where the embedding is and moves with the layers from memory to memory.
    const embedding = this.embeddingGroup;
    embedding.runtime.parallel(kernelFor(GET_ROWS_KERNELS, this.embedding)!, [this.embedding.pointer, embedding.buffers.ids, embedding.buffers.x, d], T);
    if (config.embedding_scale !== undefined) embedding.elementwise("scale", [embedding.buffers.x, config.embedding_scale, embedding.buffers.x], T * d);
    this.placeImageRows(embedding, chunks);
    const perLayer = this.perLayerEmbedding;
    const perLayerGroup = this.perLayerGroup;
    if (perLayer && perLayerGroup === embedding) this.perLayerInputs(embedding, perLayer, T);
    let current = embedding;
    for (const group of this.groups) {
      if (group.layers.length === 0) continue;
      group.receive(current, "x", T * d);
      if (perLayer && group === perLayerGroup && group !== embedding) this.perLayerInputs(group, perLayer, T);
      else if (perLayer) this.receivePerLayerInputs(group, perLayerGroup!, T);
      current = group;
      group.layers.forEach((layer, i) => this.layer(group, layer, group.firstLayer + i, chunks, T, scoresStride));
    }

    this.hiddenStates = this.finalHiddenRows(current, chunks, T);

    // Logits only for the last token of the chunks that want them (every row with allRowLogits), gathered into the
    // head's memory.
    const head = this.headGroup;
    const b = head.buffers;
    const x = current.runtime.f32(current.buffers.x, T * d);
    const gathered = head.runtime.f32(b.h, T * d);
    let outputs = 0;
    let end = 0;
    for (const chunk of chunks) {
      const start = end;
      end += chunk.tokens.length;
      if (!chunk.wantLogits) continue;
      const from = chunk.allRowLogits ? start : end - 1;
      gathered.set(x.subarray(from * d, end * d), outputs * d);
      outputs += end - from;
    }
    this.logitLogSumExps = undefined;
    if (outputs === 0) return new Float32Array(0);
    head.rows("rmsnorm", [b.h, this.outputNorm.pointer, b.h, d, config.rms_norm_eps], outputs, d);
    return this.headLogits(outputs, chunks.some((chunk) => chunk.allRowLogits));
  }

  /**
   * The LM head over the `rows` normed rows in the head's h: [rows, vocab_size]. The logits buffer holds maxSequences
   * rows; more (allRowLogits) run through it a page at a time into an array of their own. With `logSumExps`, each
   * page's rows are reduced to their log-sum-exp (logitLogSumExps) on the kernel threads while they are in memory.
   */
  private headLogits(rows: number, logSumExps: boolean): Float32Array {
    const config = this.config;
    const head = this.headGroup;
    const b = head.buffers;
    const vocab = config.vocab_size;
    const page = this.options.maxSequences;
    const logits = rows > page ? new Float32Array(rows * vocab) : undefined;
    const normalizers = logSumExps ? new Float64Array(rows) : undefined;
    this.logitLogSumExps = normalizers;
    for (let first = 0; first < rows; first += page) {
      const count = Math.min(page, rows - first);
      this.linear(head, new LinearInput(b.h + first * config.hidden_size * 4, count, config.hidden_size, b), this.outputWeight, b.logits);
      const pageLogits = head.runtime.f32(b.logits, count * vocab);
      if (config.final_logit_softcapping !== undefined) softcap(pageLogits, config.final_logit_softcapping);
      if (normalizers) {
        head.runtime.parallel("log_sum_exp_rows", [b.logits, b.logitStats, vocab], count);
        logSumExpsOf(head.runtime.f32(b.logitStats, count * 2), normalizers.subarray(first, first + count));
      }
      if (!logits) return pageLogits;
      logits.set(pageLogits, first * vocab);
    }
    return logits!;
  }

  /**
   * The rows of the chunks with wantHidden, final-normed (output_norm, as before the LM head): [rows, d], copied out of
   * the head's memory (its `h` holds them while they are normed, before the logits reuse it).
   */
  private finalHiddenRows(current: Group, chunks: readonly SequenceChunk[], T: number): Float32Array {
    const rows = chunks.reduce((sum, chunk) => sum + (chunk.wantHidden ? chunk.tokens.length : 0), 0);
    if (rows === 0) return new Float32Array(0);
    const d = this.config.hidden_size;
    const head = this.headGroup;
    const x = current.runtime.f32(current.buffers.x, T * d);
    const normed = head.runtime.f32(head.buffers.h, rows * d);
    let row = 0;
    let first = 0;
    for (const chunk of chunks) {
      const count = chunk.tokens.length;
      if (chunk.wantHidden) {
        normed.set(x.subarray(first * d, (first + count) * d), row * d);
        row += count;
      }
      first += count;
    }
    head.rows("rmsnorm", [head.buffers.h, this.outputNorm.pointer, head.buffers.h, d, this.config.rms_norm_eps], rows, d);
    return head.runtime.f32(head.buffers.h, rows * d).slice();
  }

  /**
   * Gemma 4's per-layer inputs of the batch into perLayerInputs, [layers, T, n] (each layer's rows together), as
   * llama.cpp's build_inp_per_layer and project_per_layer_inputs compute them: (rms_norm(proj(x) / sqrt(d)) +
   * per_layer_token_embd[token] * sqrt(n)) / sqrt(2), x being the scaled embeddings.
   */
  private perLayerInputs(group: Group, tensors: PerLayerEmbedding, T: number): void {
    const { runtime, buffers: b } = group;
    const { hidden_size: d, num_hidden_layers: layers, rms_norm_eps: eps } = this.config;
    const n = this.config.hidden_size_per_layer_input!;
    const width = layers * n;
    // The batch's token rows read from the file, then dequantized as from the whole tensor.
    stageRows(runtime, tensors.tokens, b.ids, T, b.perLayerTokenRows, b.perLayerTokenIds);
    runtime.parallel(tensors.getRows, [b.perLayerTokenRows, b.perLayerTokenIds, b.perLayerInputs, width], T);
    group.elementwise("scale", [b.perLayerInputs, Math.fround(Math.sqrt(n)), b.perLayerInputs], T * width);
    this.linear(group, new LinearInput(b.x, T, d, b), tensors.projection, b.perLayerProjection);
    group.elementwise("scale", [b.perLayerProjection, Math.fround(1 / Math.fround(Math.sqrt(d))), b.perLayerProjection], T * width);
    group.rows("rmsnorm", [b.perLayerProjection, tensors.norm.pointer, b.perLayerProjection, n, eps], T * layers, n);
    group.elementwise("add", [b.perLayerProjection, b.perLayerInputs, b.perLayerProjection], T * width);
    group.elementwise("scale", [b.perLayerProjection, Math.fround(1 / Math.fround(Math.SQRT2)), b.perLayerProjection], T * width);
    // [T, layers, n] -> [layers, T, n].
    const from = runtime.f32(b.perLayerProjection, T * width);
    const to = runtime.f32(b.perLayerInputs, T * width);
    for (let t = 0; t < T; t++) {
      for (let layer = 0; layer < layers; layer++) to.set(from.subarray((t * layers + layer) * n, (t * layers + layer + 1) * n), (layer * T + t) * n);
    }
  }

  /** Copies the per-layer inputs of `group`'s layers, [layers held, T, n], from where every layer's were computed. */
  private receivePerLayerInputs(group: Group, from: Group, T: number): void {
    const rows = T * this.config.hidden_size_per_layer_input!;
    const values = group.layers.length * rows;
    group.runtime.f32(group.buffers.perLayerInputs, values).set(from.runtime.f32(from.buffers.perLayerInputs + group.firstLayer * rows * 4, values));
  }

  /** Overwrites the embedding rows of image tokens with the images' own (unscaled) embeddings. */
  private placeImageRows(group: Group, chunks: readonly SequenceChunk[]): void {
    const d = this.config.hidden_size;
    let firstRow = 0;
    for (const chunk of chunks) {
      for (const media of chunk.media ?? []) group.runtime.f32(group.buffers.x + (firstRow + media.offset) * d * 4, media.embeddings.length).set(media.embeddings);
      firstRow += chunk.tokens.length;
    }
  }

  /** Writes the batch's token ids, positions, key ends, block tables and attention descriptors into `group`'s buffers. */
  private writeBatch(group: Group, chunks: readonly SequenceChunk[]): void {
    const { runtime, buffers: b } = group;
    const T = chunks.reduce((sum, chunk) => sum + chunk.tokens.length, 0);
    const blocksPerSequence = Math.ceil(this.options.maxContext / this.options.blockSize);
    const ids = runtime.i32(b.ids, T);
    const positions = runtime.i32(b.positions, T);
    const keyEnds = runtime.i32(b.keyEnds, T);
    let row = 0;
    chunks.forEach((chunk, s) => {
      // An image's rows read row 0 of the embedding table (then overwritten) and see the whole image.
      const imageEnds = mediaKeyEnds(chunk, this.config.hidden_size);
      for (let i = 0; i < chunk.tokens.length; i++, row++) {
        const imageEnd = imageEnds.get(i);
        ids[row] = imageEnd === undefined ? chunk.tokens[i] : 0;
        positions[row] = chunk.startPosition + i;
        keyEnds[row] = imageEnd ?? chunk.startPosition + i + 1;
      }
      const table = runtime.i32(b.blockTables + s * blocksPerSequence * 4, blocksPerSequence);
      for (let i = 0; i < chunk.blockTable.length; i++) table[i] = chunk.blockTable[i];
      if (this.localKvBlocks === undefined) return;
      if (!chunk.localBlockTable) throw new RangeError("this runner frees sliding-window KV: every chunk needs its localBlockTable");
      const local = runtime.i32(b.localBlockTables + s * blocksPerSequence * 4, blocksPerSequence);
      for (let i = 0; i < chunk.localBlockTable.length; i++) local[i] = chunk.localBlockTable[i];
    });

    // Attention descriptors: [first row, rows, block table pointer, positions pointer, key ends pointer (0: causal),
    // 0, 0, 0] per chunk.
    const ints = ATTENTION_DESCRIPTOR_BYTES / 4;
    const descriptors = runtime.i32(b.descriptors, chunks.length * ints);
    const localDescriptors = this.localKvBlocks === undefined ? undefined : runtime.i32(b.localDescriptors, chunks.length * ints);
    let firstRow = 0;
    chunks.forEach((chunk, s) => {
      const ends = chunk.media?.length ? b.keyEnds + firstRow * 4 : 0;
      descriptors.set([firstRow, chunk.tokens.length, b.blockTables + s * blocksPerSequence * 4, b.positions + firstRow * 4, ends, 0, 0, 0], s * ints);
      localDescriptors?.set([firstRow, chunk.tokens.length, b.localBlockTables + s * blocksPerSequence * 4, b.positions + firstRow * 4, ends, 0, 0, 0], s * ints);
      firstRow += chunk.tokens.length;
    });
  }

  /** Transformer layer `index` over the batch, on x [T, d] in `group`'s memory (updated in place). */
  private layer(group: Group, layer: LayerWeights, index: number, chunks: readonly SequenceChunk[], T: number, scoresStride: number): void {
    const { config } = this;
    const { buffers: b } = group;
    const d = config.hidden_size;
    this.attention(group, layer, index, chunks, T, scoresStride);

    // Feed-forward block.
    const moe = layer.gemma4?.moe;
    group.rows("rmsnorm", [b.x, layer.ffnNorm.pointer, b.h, d, config.rms_norm_eps], T, d);
    if (layer.experts && !moe) {
      this.mixtureOfExperts(group, layer.experts, T, b.h);
    } else {
      this.denseFeedForward(group, layer, T);
    }
    if (layer.experts && moe) {
      // Gemma 4: the dense MLP is a shared expert beside the routed ones, each normed, then summed.
      group.rows("rmsnorm", [b.h, moe.postNorm1.pointer, b.ffnOut, d, config.rms_norm_eps], T, d);
      this.gemma4RouterInput(group, moe.routerScale, T);
      group.rows("rmsnorm", [b.x, moe.preNorm2.pointer, b.h, d, config.rms_norm_eps], T, d);
      this.mixtureOfExperts(group, layer.experts, T, b.gathered);
      group.rows("rmsnorm", [b.h, moe.postNorm2.pointer, b.h, d, config.rms_norm_eps], T, d);
      group.elementwise("add", [b.ffnOut, b.h, b.h], T * d);
    }
    if (layer.ffnPostNorm) group.rows("rmsnorm", [b.h, layer.ffnPostNorm.pointer, b.h, d, config.rms_norm_eps], T, d);
    group.elementwise("add", [b.x, b.h, b.x], T * d);
    if (layer.gemma4?.perLayer) this.perLayerInput(group, layer.gemma4.perLayer, index, T);
    const outScale = layer.gemma4?.outScale;
    if (outScale) group.elementwise("scale", [b.x, group.runtime.f32(outScale.pointer, 1)[0]!, b.x], T * d);
  }

  /** The attention block of layer `index`: x += post-norm(attention(norm(x))). */
  private attention(group: Group, layer: LayerWeights, index: number, chunks: readonly SequenceChunk[], T: number, scoresStride: number): void {
    const { config, options } = this;
    const { runtime, buffers: b } = group;
    const d = config.hidden_size;
    const { heads, kvHeads, headDim, rotaryDim } = layerAttention(config, index);
    const qDim = heads * headDim;
    const kvDim = kvHeads * headDim;
    const blocksPerSequence = Math.ceil(options.maxContext / options.blockSize);
    const ownKv = layer.k !== undefined;

    group.rows("rmsnorm", [b.x, layer.attnNorm.pointer, b.h, d, config.rms_norm_eps], T, d);
    const normed = new LinearInput(b.h, T, d, b);
    const projections: LinearOutput[] = [{ weight: layer.q, out: b.q, bias: layer.qBias }];
    if (ownKv) projections.push({ weight: layer.k!, out: b.k, bias: layer.kBias });
    if (ownKv && layer.v) projections.push({ weight: layer.v, out: b.v, bias: layer.vBias });
    this.linears(group, normed, projections);
    // Gemma 4 without attn_v: the values are the keys' projection, before the keys' norm.
    if (ownKv && !layer.v) runtime.f32(b.v, T * kvDim).set(runtime.f32(b.k, T * kvDim));
    if (layer.qNorm) group.rows("rmsnorm", [b.q, layer.qNorm.pointer, b.q, headDim, config.rms_norm_eps], T * heads, headDim);
    if (ownKv && layer.kNorm) group.rows("rmsnorm", [b.k, layer.kNorm.pointer, b.k, headDim, config.rms_norm_eps], T * kvHeads, headDim);
    if (ownKv && config.value_norm) group.rows("rmsnorm", [b.v, b.ones, b.v, headDim, config.rms_norm_eps], T * kvHeads, headDim);
    const factors = this.ropeFactorsOf(group, index);
    const thetaScale = this.thetaScales[index], freqScale = this.freqScales[index];
    const yarn = this.yarns[index];
    const ropeScaling = [thetaScale, freqScale, yarn.extFactor, yarn.corrLow, yarn.corrHigh, yarn.mscale];
    group.rows("rope_neox", [b.q, b.positions, factors, T, heads, headDim, rotaryDim, ...ropeScaling], T, qDim);
    if (ownKv) group.rows("rope_neox", [b.k, b.positions, factors, T, kvHeads, headDim, rotaryDim, ...ropeScaling], T, kvDim);
    if (this.queryScale !== undefined) group.elementwise("scale", [b.q, this.queryScale, b.q], T * qDim);
    if (config.attention_temperature) this.temperQueries(group, T, qDim);
    // A freed sliding-window layer reads and writes its own slots, through the chunks' local tables; a shared-KV
    // layer reads its source layer's cache the way that layer keeps it.
    const local = this.windowLayers.has(kvSourceLayer(config, index));
    if (ownKv) {
      let first = 0;
      chunks.forEach((chunk, s) => {
        const table = (local ? b.localBlockTables : b.blockTables) + s * blocksPerSequence * 4;
        runtime.call(this.kernels.store, b.k + first * kvDim * 4, b.v + first * kvDim * 4, layer.kCache, layer.vCache, table, b.positions + first * 4, chunk.tokens.length, kvDim, options.blockSize);
        first += chunk.tokens.length;
      });
    }
    // Split over (chunk, head) pairs in whole kv-head groups, so that heads sharing K/V read it once.
    runtime.parallel(this.kernels.attention, [
      local ? b.localDescriptors : b.descriptors, b.q, layer.kCache, layer.vCache, b.attention, b.scratch,
      heads, kvHeads, headDim, options.blockSize, this.scoreScale(headDim), scoresStride, attentionWindow(config, index), layer.sinks?.pointer ?? 0,
    ], chunks.length * heads, heads / kvHeads);
    this.linear(group, new LinearInput(b.attention, T, qDim, b), layer.output, b.h, layer.outputBias);
    if (layer.attnPostNorm) group.rows("rmsnorm", [b.h, layer.attnPostNorm.pointer, b.h, d, config.rms_norm_eps], T, d);
    group.elementwise("add", [b.x, b.h, b.x], T * d);
  }

  /** The dense feed-forward on the normed rows h [T, d], result into h: down(act(gate) * up). */
  private denseFeedForward(group: Group, layer: LayerWeights, T: number): void {
    const { buffers: b } = group;
    const d = this.config.hidden_size;
    const ffn = layer.gate!.shape[1]!;
    this.linears(group, new LinearInput(b.h, T, d, b), [{ weight: layer.gate!, out: b.gate }, { weight: layer.up!, out: b.up }]);
    const gating = this.config.hidden_activation === "gelu_pytorch_tanh" ? "gelu_mul" : "silu_mul";
    group.elementwise(gating, [b.gate, b.up, b.gate, T * ffn], T * ffn);
    this.linear(group, new LinearInput(b.gate, T, ffn, b), layer.down!, b.h);
  }

  /** The RoPE frequency divisors layer `index` uses: rope_freqs (Gemma 4: its full layers only), or none (0). */
  private ropeFactorsOf(group: Group, index: number): number {
    return this.config.rope_freqs_full_only && attentionWindow(this.config, index) > 0 ? 0 : group.ropeFactors;
  }

  /**
   * Gemma 4's router input into `gathered`: rms_norm(x) (no weight) * 1/sqrt(d) * ffn_gate_inp.scale, rounded to f32
   * at each step as llama.cpp's graph does.
   */
  private gemma4RouterInput(group: Group, routerScale: ResidentTensor, T: number): void {
    const { runtime, buffers: b } = group;
    const d = this.config.hidden_size;
    group.rows("rmsnorm", [b.x, b.ones, b.gathered, d, this.config.rms_norm_eps], T, d);
    const scale = Math.fround(1 / Math.fround(Math.sqrt(d)));
    const weights = runtime.f32(routerScale.pointer, d);
    const rows = runtime.f32(b.gathered, T * d);
    for (let t = 0; t < T; t++) {
      for (let j = 0; j < d; j++) rows[t * d + j] = Math.fround(rows[t * d + j]! * scale) * weights[j]!;
    }
  }

  /**
   * Gemma 4's per-layer embedding block on x [T, d]: x += post_norm(proj(gelu(inp_gate(x)) * this layer's per-layer
   * input)).
   */
  private perLayerInput(group: Group, perLayer: NonNullable<NonNullable<LayerWeights["gemma4"]>["perLayer"]>, index: number, T: number): void {
    const { buffers: b } = group;
    const d = this.config.hidden_size;
    const n = this.config.hidden_size_per_layer_input!;
    this.linear(group, new LinearInput(b.x, T, d, b), perLayer.inputGate, b.gate);
    // The memory that computed them holds every layer's inputs; the others their own layers'.
    const held = group === this.perLayerGroup ? index : index - group.firstLayer;
    // gelu(a) * b as ggml's gelu then mul: both round GELU through the same half table.
    group.elementwise("gelu_mul", [b.gate, b.perLayerInputs + held * T * n * 4, b.gate, T * n], T * n);
    this.linear(group, new LinearInput(b.gate, T, n, b), perLayer.projection, b.h);
    group.rows("rmsnorm", [b.h, perLayer.postNorm.pointer, b.h, d, this.config.rms_norm_eps], T, d);
    group.elementwise("add", [b.x, b.h, b.x], T * d);
  }

  /** The attention's score scale for heads of `headDim`: the file's, 1 where queries were scaled (Gemma), else headDim^-1/2. */
  private scoreScale(headDim: number): number {
    return this.config.attention_scale ?? (this.queryScale === undefined ? 1 / Math.sqrt(headDim) : 1);
  }

  /** Mistral 3's attention temperature: each query row of q [T, qDim] times its position's multiplier (1 below the floor scale). */
  private temperQueries(group: Group, T: number, qDim: number): void {
    const positions = group.runtime.i32(group.buffers.positions, T);
    const q = group.runtime.f32(group.buffers.q, T * qDim);
    for (let t = 0; t < T; t++) {
      const factor = attentionTemperature(this.config, positions[t]!);
      if (factor === 1) continue;
      const row = q.subarray(t * qDim, (t + 1) * qDim);
      for (let i = 0; i < qDim; i++) row[i] = row[i]! * factor;
    }
  }

  /**
   * Copies KV out of cached chains into a sequence (table `targetBlocks`), re-rotating keys by each copy's position
   * delta: what prefix reuse of a partial block and section reuse need. NOTE: sources and targets never share a block.
   * Block ids are the same in every memory: each group copies its own layers' share.
   */
  copyKv(copies: readonly KvCopy[], targetBlocks: readonly number[], localSlot?: (block: number) => number): void {
    if (copies.length === 0) return;
    const { options, config } = this;
    const blocksPerSequence = Math.ceil(options.maxContext / options.blockSize);
    // Each layer copies rows of its own width; a shared-KV layer (width 0) has nothing of its own to copy.
    const rowBytes = (layer: number) => layerKvWidth(config, layer) * (this.kvDtype === "f16" ? 2 : 4);
    checkKvCopies(copies, targetBlocks, options.blockSize);
    if (this.localKvBlocks !== undefined && !localSlot) throw new RangeError("this runner frees sliding-window KV: copyKv needs localSlot");
    // The full layers copy through the block tables, the freed sliding-window layers through their slots.
    for (const local of [false, true]) {
      if (local && this.windowLayers.size === 0) continue;
      const slots = (blocks: readonly number[]) => (local ? blocks.map((block) => localSlot!(block)) : blocks);
      this.copyLayersKv(copies, slots, targetBlocks, (index) => this.windowLayers.has(index) === local && rowBytes(index) > 0, rowBytes, blocksPerSequence);
    }
  }

  /** copyKv for the layers `selected` picks, reading tables through `tableOf`. */
  private copyLayersKv(copies: readonly KvCopy[], tableOf: (blocks: readonly number[]) => readonly number[], targetBlocks: readonly number[], selected: (layer: number) => boolean, rowBytes: (layer: number) => number, blocksPerSequence: number): void {
    const { options, config } = this;
    for (const group of this.groups) {
      if (!group.layers.some((_, i) => selected(group.firstLayer + i))) continue;
      const runtime = group.runtime;
      const source = group.buffers.copyTables;
      const target = source + blocksPerSequence * 4;
      runtime.i32(target, targetBlocks.length).set(tableOf(targetBlocks));
      for (const copy of copies) {
        runtime.i32(source, copy.sourceBlocks.length).set(tableOf(copy.sourceBlocks));
        const delta = copy.targetStart - copy.sourceStart;
        group.layers.forEach((layer, i) => {
          const index = group.firstLayer + i;
          if (!selected(index)) return;
          runtime.call("kv_copy", layer.kCache, layer.vCache, source, copy.sourceStart, target, copy.targetStart, rowBytes(index), options.blockSize, 0, copy.count);
          if (delta !== 0) {
            const yarn = this.yarns[index];
            const { kvHeads, headDim, rotaryDim } = layerAttention(config, index);
            runtime.call(
              this.kernels.shift, layer.kCache, target, copy.targetStart, kvHeads, headDim, rotaryDim, options.blockSize, delta,
              this.ropeFactorsOf(group, index), this.thetaScales[index], this.freqScales[index], yarn.extFactor, yarn.corrLow, yarn.corrHigh, 0, copy.count,
            );
          }
        });
      }
    }
  }

  /**
   * Reads back the cached K and V of `count` positions from `start` of one layer through a block table, as f32
   * [count, kvHeads * headDim] (for tests and debugging: this copies out of the cache). A freed sliding-window layer
   * (see localKvBlocks) reads through the local table the chunks carry.
   */
  readKv(layer: number, blockTable: readonly number[], start: number, count: number): { k: Float32Array; v: Float32Array } {
    const { options, config } = this;
    const group = this.groups.find((candidate) => candidate.holdsLayer(layer));
    if (!group) throw new RangeError(`layer ${layer} is outside the model's ${config.num_hidden_layers} layers`);
    const runtime = group.runtime;
    // A shared-KV layer reads its source layer's cache.
    const kvDim = layerKvWidth(config, kvSourceLayer(config, layer));
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
    const cacheLayer = group.layers[layer - group.firstLayer];
    return { k: read(cacheLayer.kCache), v: read(cacheLayer.vCache) };
  }

  /**
   * The mixture-of-experts feed-forward on the normed rows h [T, d], result into h: the router's logits, each token's
   * top-k experts (moe-routing.ts), the experts in use in batches (expertBatch) into expertOut, then moe_sum adds each
   * token's slots in order, weighted, in f32 (slot 0 first), as llama.cpp adds them. Each expert in use is read once
   * per step, whatever the number of sequences; experts no token chose are not touched. The router reads
   * `routerInput` [T, d] (h itself but for Gemma 4, whose router has its own input).
   */
  private mixtureOfExperts(group: Group, experts: NonNullable<LayerWeights["experts"]>, T: number, routerInput: number): void {
    const config = this.config;
    const { runtime, buffers: b } = group;
    const d = config.hidden_size;
    const count = config.num_experts!;
    const k = config.num_experts_per_tok!;
    this.linear(group, new LinearInput(routerInput, T, d, b), experts.router, b.router, experts.routerBias);
    const routing = routeTokens(runtime.f32(b.router, T * count), T, count, k, config.norm_topk_prob === true, config.expert_gating);
    runtime.f32(b.slotWeights, T * k).set(routing.weights);
    // The feed-forward buffers hold maxBatchTokens rows (a step's T * k routed rows may not fit): experts are taken in
    // batches whose rows fit, all of a decode step's in one; expertOut holds every routed row.
    const capacity = this.options.maxBatchTokens;
    let batch: Array<[number, number[]]> = [];
    let batchRows = 0;
    let done = 0;
    for (const entry of routing.groups) {
      if (batchRows + entry[1].length > capacity) {
        this.expertBatch(group, experts, batch, T, done);
        done += batchRows;
        batch = [];
        batchRows = 0;
      }
      batch.push(entry);
      batchRows += entry[1].length;
    }
    if (batch.length > 0) this.expertBatch(group, experts, batch, T, done);
    group.rows("moe_sum", [b.expertOut, b.slotRows, b.slotWeights, b.h, k, d], T, d);
  }

  /**
   * Experts `batch` (each with the routing rows, token * k + slot, routed to it) through their feed-forward, into
   * expertOut's rows from `firstRow`, each slot's row there noted in slotRows. The rows of every expert of the batch
   * are gathered one expert after another; the gate and up projections of all of them (biases included) run as one
   * dispatch (matmul_segments), the activation as one, the down projections as one: a decode step's experts take three
   * dispatches, where one per expert and projection made the threads wait for each other at every one.
   */
  private expertBatch(group: Group, experts: NonNullable<LayerWeights["experts"]>, batch: ReadonlyArray<readonly [number, readonly number[]]>, T: number, firstRow: number): void {
    const config = this.config;
    const { runtime, buffers: b } = group;
    const d = config.hidden_size;
    const ffn = config.moe_intermediate_size!;
    const count = config.num_experts!;
    const k = config.num_experts_per_tok!;
    const firstRows: number[] = [];
    const m = batch.reduce((rows, [, routed]) => (firstRows.push(rows), rows + routed.length), 0);
    const normed = runtime.f32(b.h, T * d);
    const gathered = runtime.f32(b.gathered, m * d);
    const slotRows = runtime.i32(b.slotRows, T * k);
    batch.forEach(([, routed], i) => routed.forEach((row, r) => {
      const token = Math.floor(row / k);
      gathered.set(normed.subarray(token * d, (token + 1) * d), (firstRows[i]! + r) * d);
      slotRows[row] = firstRow + firstRows[i]! + r;
    }));
    const input = new LinearInput(b.gathered, m, d, b);
    this.segments(group, batch.flatMap(([expert, routed], i) => {
      // Fused gate_up (Gemma 4): each expert's gate rows, then its up rows.
      const gateUp = experts.gateUp && expertSlice(experts.gateUp, expert, count);
      const gate = gateUp ? rowSlice(gateUp, 0, ffn) : expertSlice(experts.gate!, expert, count);
      const up = gateUp ? rowSlice(gateUp, ffn, ffn) : expertSlice(experts.up!, expert, count);
      return [
        this.segment(group, input, firstRows[i]!, routed.length, gate, b.gate + firstRows[i]! * ffn * 4, experts.gateBias && biasSlice(experts.gateBias, expert, ffn)),
        this.segment(group, input, firstRows[i]!, routed.length, up, b.up + firstRows[i]! * ffn * 4, experts.upBias && biasSlice(experts.upBias, expert, ffn)),
      ];
    }));
    if (config.hidden_activation === "swiglu_oai") group.elementwise("swiglu_oai", [b.gate, b.up, b.gate, m * ffn, SWIGLU_OAI_ALPHA, SWIGLU_OAI_LIMIT], m * ffn);
    else if (config.hidden_activation === "gelu_pytorch_tanh") group.elementwise("gelu_mul", [b.gate, b.up, b.gate, m * ffn], m * ffn);
    else group.elementwise("silu_mul", [b.gate, b.up, b.gate, m * ffn], m * ffn);
    const hidden = new LinearInput(b.gate, m, ffn, b);
    const out = (i: number) => b.expertOut + (firstRow + firstRows[i]!) * d * 4;
    this.segments(group, batch.map(([expert, routed], i) => {
      const bias = experts.downBias && biasSlice(experts.downBias, expert, d);
      return this.segment(group, hidden, firstRows[i]!, routed.length, expertSlice(experts.down, expert, count), out(i), bias);
    }));
    // Gemma 4's per-expert output scale multiplies the down projection before the routing weight, as llama.cpp does.
    if (experts.downScale) {
      const scales = runtime.f32(experts.downScale.pointer, count);
      batch.forEach(([expert, routed], i) => group.elementwise("scale", [out(i), scales[expert]!, out(i)], routed.length * d));
    }
  }

  /**
   * A matmul_segments segment: rows [first, first + rows) of `input` times `weight`, into y. Rows are quantized in
   * their compact format (never the wide Q8_0 one, whose groups of four rows would straddle experts; its results are
   * the same bits).
   */
  private segment(group: Group, input: LinearInput, first: number, rows: number, weight: ResidentTensor, y: number, bias?: ResidentTensor): MatmulSegment {
    const format = ACTIVATION_FORMATS[weight.type];
    const rowBytes = format === undefined ? input.width * 4 : activationBytes(format, 1, input.width);
    const x = input.forWeight(group, format) + first * rowBytes;
    return { kernel: kernelFor(MATMUL_KERNELS, weight)!, x, w: weight.pointer, y, rows, k: weight.shape[0]!, n: weight.shape[1]!, bias: bias?.pointer };
  }

  /** Runs `segments` as one dispatch of matmul_segments. */
  private segments(group: Group, segments: readonly MatmulSegment[]): void {
    const { runtime, buffers: b } = group;
    const total = encodeSegments(segments, runtime.i32(b.segments, (segments.length * SEGMENT_DESCRIPTOR_BYTES) / 4));
    runtime.parallel("matmul_segments", [b.segments, segments.length], total);
  }

  /**
   * Several projections of one input (attention's q, k and v; a feed-forward's gate and up) as one dispatch of
   * matmul_segments where each runs its compact kernel anyway (one row, or weights with no wide kernel); else one
   * dispatch each. The same bits either way.
   */
  private linears(group: Group, input: LinearInput, outputs: readonly LinearOutput[]): void {
    const compact = outputs.every(({ weight }) => matmulPlan(weight, input.rows).kernel === kernelFor(MATMUL_KERNELS, weight));
    if (outputs.length > 1 && compact) {
      this.segments(group, outputs.map(({ weight, out, bias }) => this.segment(group, input, 0, input.rows, weight, out, bias)));
      return;
    }
    for (const { weight, out, bias } of outputs) this.linear(group, input, weight, out, bias);
  }

  /** y = x W^T (+ bias) for every row of the input, in `group`'s memory. */
  private linear(group: Group, input: LinearInput, weight: ResidentTensor, out: number, bias?: ResidentTensor): void {
    const k = weight.shape[0];
    const n = weight.shape[1];
    const runtime = group.runtime;
    const { kernel, format } = matmulPlan(weight, input.rows);
    runtime.parallel(kernel, [input.forWeight(group, format), weight.pointer, out, input.rows, k, n], n);
    if (bias) group.rows("add_bias", [out, bias.pointer, n], input.rows, n);
  }
}

/** Gemma 4's per-layer embedding tensors. */
interface PerLayerEmbedding {
  /** per_layer_token_embd.weight: [layers * n, vocab], read by rows from the file (rows-read-on-demand.ts). */
  tokens: TensorRowReader;
  /** The get_rows kernel of its type, reading the staged rows. */
  getRows: string;
  /** per_layer_model_proj.weight: [d, layers * n]. */
  projection: ResidentTensor;
  /** per_layer_proj_norm.weight: [n]. */
  norm: ResidentTensor;
}

/**
 * Gemma 4's checks at load: tensors with a `.scale` suffix other than the router's input scale and the experts' down
 * scale are refused by name (loom does not apply them); the per-layer embedding tensors when the model has them
 * (the token rows' block scales read through once, as the loader checks a resident tensor's).
 */
function gemma4Checks(
  source: ModelSource, weights: ReadonlyMap<string, ResidentTensor>,
  linear: (name: string, k: number, n: number) => ResidentTensor, vector: (name: string, n: number) => ResidentTensor,
): PerLayerEmbedding | undefined {
  const config = source.config;
  for (const name of weights.keys()) {
    if (name.endsWith(".scale") && !/\.(ffn_gate_inp|ffn_down_exps)\.scale$/.test(name)) throw new ModelFileError(source.path, `tensor '${name}' is not supported`);
  }
  const n = config.hidden_size_per_layer_input;
  if (n === undefined) return undefined;
  const width = config.num_hidden_layers * n;
  const tokens = source.tensors.get(PER_LAYER_TOKEN_EMBD);
  if (!tokens) throw new ModelFileError(source.path, `tensor '${PER_LAYER_TOKEN_EMBD}' is missing`);
  const getRows = GET_ROWS_KERNELS[tokens.type];
  if (!getRows) throw new ModelFileError(source.path, `${PER_LAYER_TOKEN_EMBD} type ${ggmlTypeName(tokens.type)} is not supported`);
  if (tokens.shape.length !== 2 || tokens.shape[0] !== width || tokens.shape[1] !== config.vocab_size) {
    throw new ModelFileError(source.path, `tensor '${PER_LAYER_TOKEN_EMBD}' has shape [${tokens.shape}], expected [${width}, ${config.vocab_size}]`);
  }
  const projection = linear("per_layer_model_proj.weight", config.hidden_size, width);
  const norm = vector("per_layer_proj_norm.weight", n);
  const reader = new TensorRowReader(tokens);
  reader.checkScales();
  return { tokens: reader, getRows, projection, norm };
}

/** Logit soft-capping in place: cap * tanh(logit / cap), each step rounded to f32 as ggml's scale, tanh, scale. */
/**
 * Each row's log-sum-exp from log_sum_exp_rows' (max, sum of exp(x - max)) pairs, into `out`, as logprobs.ts's
 * logSumExp answers: -Infinity for a row with no finite logit, +Infinity for one with a +Infinity logit.
 */
function logSumExpsOf(stats: Float32Array, out: Float64Array): void {
  for (let r = 0; r < out.length; r++) {
    const max = stats[2 * r]!;
    out[r] = Number.isFinite(max) ? max + Math.log(stats[2 * r + 1]!) : max;
  }
}

function softcap(logits: Float32Array, cap: number): void {
  const inverse = Math.fround(1 / cap);
  const capF = Math.fround(cap);
  for (let i = 0; i < logits.length; i++) logits[i] = Math.fround(Math.tanh(Math.fround(logits[i]! * inverse))) * capF;
}

/** gpt-oss's expert activation constants (llama.cpp's LLM_FFN_SWIGLU_OAI_MOE). */
const SWIGLU_OAI_ALPHA = Math.fround(1.702);
const SWIGLU_OAI_LIMIT = 7;

/** Expert `expert`'s [n] bias of an F32 tensor holding one per expert ([n, count]). */
function biasSlice(tensor: ResidentTensor, expert: number, n: number): ResidentTensor {
  return { ...tensor, shape: [n], pointer: tensor.pointer + expert * n * 4, byteLength: n * 4 };
}

/** Rows [first, first + rows) of a [k, n] matrix, as a [k, rows] matrix (rows are stored one after another). */
function rowSlice(matrix: ResidentTensor, first: number, rows: number): ResidentTensor {
  const rowBytes = matrix.byteLength / matrix.shape[1]!;
  return { ...matrix, shape: [matrix.shape[0]!, rows], pointer: matrix.pointer + first * rowBytes, byteLength: rows * rowBytes };
}

/** Expert `expert`'s [k, n] matrix of a tensor holding `count` of them one after another. */
function expertSlice(tensor: ResidentTensor, expert: number, count: number): ResidentTensor {
  const bytes = tensor.byteLength / count;
  return { ...tensor, shape: tensor.shape.slice(0, 2), pointer: tensor.pointer + expert * bytes, byteLength: bytes };
}
