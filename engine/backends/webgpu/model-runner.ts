// Runs the transformer forward pass on WGSL kernels through WebGPU: the same config-driven definition as the
// WebAssembly runner (Llama, Qwen2 q/k/v bias, Qwen3 q/k norm, Llama 3 RoPE factors, Gemma 3, Mistral 3's YaRN and
// attention temperature, Qwen3-MoE and gpt-oss experts, gpt-oss's attention sinks and biases, Gemma 4's per-layer
// shapes, shared KV, experts beside a dense MLP and per-layer embeddings) over the same paged KV cache, for a batch
// of sequence chunks. Weights are uploaded once; a step is one command buffer of dispatches whose
// parameters go up in one write, with pipelines and bind groups cached; only the logits that were asked for come back.
// A mixture-of-experts layer splits the step: its router logits are read back and routed on the host (as the
// WebAssembly runner routes them), then each expert in use runs over its gathered rows.
import { GgmlType, ggmlTypeName } from "../../../kernels/formats/types.js";
import { ModelFileError } from "../../model/errors.js";
import { webGpuUnsupported } from "./architectures.js";
import type { KvCopy } from "../../kv/kv-cache.js";
import { type KvDtype, kvBlockBytes, kvBlocksForBudget } from "../../kv/budget.js";
import {
  type ModelConfig, attentionTemperature, attentionWindow, kvSourceLayer, layerAttention, layerKvWidth, layerRope, queryScale,
} from "../../model/config.js";
import { type YarnConstants, ropeThetaScale } from "../../../kernels/rope-frequencies.js";
import type { ModelSource } from "../../model/source.js";
import { type LayerTensors, layerTensors } from "../layer-tensors.js";
import { routeTokens } from "../moe-routing.js";
import { windowLayersOf } from "../window-layers.js";
import { type ModelRunner, type RunnerOptions, type SampledForward, type SequenceChunk, checkBatch, checkKvCopies, mediaKeyEnds } from "../runner.js";
import { type PlacedTensor, readTensors } from "../wasm/weight-loader.js";
import { PER_LAYER_TOKEN_EMBD, residentPart, tensorsReadByRows } from "../wasm/rows-read-on-demand.js";
import { TensorRowReader } from "../../model/tensor-rows.js";
import { dequantize } from "../../../kernels/formats/quantize.js";
import type { GpuContext } from "../../../kernels/webgpu/gpu.js";
import { ropeRotations } from "../../../kernels/webgpu/layouts.js";
import { type ShaderRef, grid } from "../../../kernels/webgpu/shaders.js";
import { type Step, StepEncoder } from "../../../kernels/webgpu/step-encoder.js";
import { gpuWait } from "../../../kernels/webgpu/wait.js";
import { CompiledPipelines } from "./compiled-pipelines.js";
import { DeviceBuffers } from "./device-buffers.js";
import { matmulPlan, matmulShader, tiledShader } from "./gpu-matmul.js";
import { FLOAT_WEIGHT_TYPES, type GpuWeight, QUANT_WEIGHT_TYPES, WEBGPU_KERNEL_TYPES, uploadWeight } from "./gpu-weights.js";

/** The expert weights of a mixture-of-experts layer. */
type GpuExperts = NonNullable<GpuLayer["experts"]>;

interface GpuLayer extends LayerTensors<GpuWeight, GPUBuffer> {
  /**
   * NOTE: with attention sinks, the layer's sink logits (f32, one per head) follow the slots (attention.wgsl). A
   * Gemma 4 shared-KV layer holds its source layer's caches.
   */
  kCache: GPUBuffer;
  vCache: GPUBuffer;
  /** Gemma 4: layer_output_scale's value, read at load (the scale kernel takes it as a parameter). */
  outScale?: number;
  /** Gemma 4: ffn_down_exps.scale's values (one per expert), read at load to scale each expert's output rows. */
  expertDownScale?: Float32Array;
}

/** Gemma 4's per-layer embedding tensors. */
interface GpuPerLayerEmbedding {
  /**
   * per_layer_token_embd.weight: [layers * n, vocab], never uploaded (4.70 GB in F16 for E2B): each pass reads its
   * tokens' rows from the file and uploads them as f32, as the WebAssembly backend stages them (rows-read-on-demand.ts).
   */
  tokens: TensorRowReader;
  /** per_layer_model_proj.weight: [d, layers * n]. */
  projection: GpuWeight;
  /** per_layer_proj_norm.weight: [n]. */
  norm: GPUBuffer;
}

type Activation = "x" | "h" | "q" | "k" | "v" | "qNormed" | "kNormed" | "attention" | "gate" | "up" | "gathered" | "logits" | "postNormed"
  | "xQuants" | "xScales" | "ids" | "positions" | "rowTables" | "blockTables" | "localBlockTables" | "gatherIds" | "copySource" | "copyTarget"
  | "sampling" | "sampledTokens" | "attentionPartials" | "queryFactors" | "router" | "expertInput" | "expertOutput" | "slotRows" | "slotWeights"
  | "vNormed" | "ones" | "ffnOut" | "routerInput" | "expertFactors" | "perLayerInputs" | "perLayerProjection" | "perLayerNormed" | "perLayerIds";

/** Bytes of one row's settings for sample.wgsl (its RowSampling struct). */
const ROW_SAMPLING_BYTES = 24;

const SHADERS = {
  add: { op: "add" },
  siluMul: { op: "silu_mul" },
  geluMul: { op: "gelu_mul" },
  scale: { op: "add", file: "scale" },
  scaleRows: { op: "add", file: "scale_rows" },
  rmsnorm: { op: "rmsnorm" },
  rope: { op: "rope_neox" },
  quantize: { op: "quantize_q8_0" },
  getRowsQ8_0: { op: "get_rows", file: "get_rows_quant", constants: { WEIGHT_TYPE: 0 } },
  getRowsQ4_0: { op: "get_rows", file: "get_rows_quant", constants: { WEIGHT_TYPE: 1 } },
  sample: { op: "sample" },
  attentionCombine: { op: "attention", file: "attention_combine" },
  swigluOai: { op: "swiglu_oai" },
  moeSum: { op: "moe_sum" },
  softcap: { op: "add", file: "softcap" },
} satisfies Record<string, ShaderRef>;

/**
 * Split-K decode attention (attention.wgsl with splits > 1, then attention_combine.wgsl): used when a step has fewer
 * than SPLIT_BELOW_WORKGROUPS (head, row) pairs, with a split per SPLIT_KEYS keys of its longest row, at most
 * MAX_SPLITS. Prefill and large batches already give the GPU enough workgroups.
 */
const SPLIT_BELOW_WORKGROUPS = 1024;
const SPLIT_KEYS = 256;
const MAX_SPLITS = 16;

/** The KV cache kernels for a cache element type (KV_TYPE 0: f32, 1: IEEE half, two per word). */
function kvShaders(dtype: KvDtype) {
  const constants = { KV_TYPE: dtype === "f16" ? 1 : 0 };
  return {
    kvStore: { op: "attention", file: "kv_store", constants },
    attention: { op: "attention", constants },
    kvCopy: { op: "attention", file: "kv_copy", constants },
  } satisfies Record<string, ShaderRef>;
}

const getRowsShader = (type: number): ShaderRef => ({ op: "get_rows", constants: { WEIGHT_TYPE: type } });

/** Settings of the WebGPU runner that tests and benchmarks change; the defaults are what the device allows. */
export interface WebGpuTuning {
  /**
   * The largest weight part in bytes, when lower than the adapter's maxStorageBufferBindingSize; larger weights are
   * split by rows. Lets a small model exercise the splitting that large ones need.
   */
  weightPartBytes?: number;
  /** false: the workgroup-memory matmul kernels even where subgroups are usable (default: use them there). */
  subgroups?: boolean;
}

/** The WebGPU model runner: weights and a paged KV pool on the device, fixed activation buffers. */
export class WebGpuModelRunner implements ModelRunner {
  readonly kvDtype: KvDtype;
  /** The KV cache kernels for kvDtype. */
  private readonly kv: ReturnType<typeof kvShaders>;
  /** KV values per 32-bit word: 1 (f32) or 2 (f16). */
  private readonly kvPerWord: number;
  private readonly device: GPUDevice;
  private readonly buffers = {} as Record<Activation, GPUBuffer>;
  private pipelines!: CompiledPipelines;
  /** Every device buffer the runner created. */
  private readonly memory: DeviceBuffers;
  private layers: GpuLayer[] = [];
  private embedding!: GpuWeight;
  private outputNorm!: GPUBuffer;
  private outputWeight!: GpuWeight;
  /** Gemma 4's per-layer embedding tensors, when the model has them. */
  private perLayerEmbedding?: GpuPerLayerEmbedding;
  /** Per layer, its RoPE (cos, sin) table: Gemma 3's sliding-window and global layers differ; the others share one. */
  private rotations: GPUBuffer[] = [];
  /**
   * Per layer, the table that re-rotates cached keys (kv_copy.wgsl): the RoPE table itself, except where YaRN's mscale
   * scales cos and sin (a shift must only turn keys that were scaled once already), then the same angles with mscale 1.
   */
  private shiftRotations: GPUBuffer[] = [];
  private readback!: GPUBuffer;
  /** Mixture of experts: the router logits read back, and per expert the token rows routed to it in a step. */
  private routerReadback?: GPUBuffer;
  private expertRows: GPUBuffer[] = [];
  private tokenReadback!: GPUBuffer;
  /** [maxBatchTokens, d] final-normed rows and their readback, made on the first pass whose chunks want hidden states. */
  private hiddenBuffers: { normed: GPUBuffer; readback: GPUBuffer } | undefined;
  /** Rows of hidden states the pass in flight copies to hiddenBuffers.readback. */
  private hiddenRowsPending = 0;
  /** The last pass's final-normed hidden states of the chunks with wantHidden (see ModelRunner.hiddenStates). */
  hiddenStates: Float32Array = new Float32Array(0);
  /** Staging for the sampled rows' settings, written with one queue write per step. */
  private samplingStaging!: DataView;
  private encoder!: StepEncoder;
  /** KV blocks in the cache, as the budget allowed. */
  kvBlocks = 0;
  /**
   * Slots of the sliding-window layers' smaller caches where their KV is freed behind the window (the chunks then carry
   * localBlockTable); undefined when they keep KV for every block.
   */
  localKvBlocks: number | undefined;
  /** The layers whose KV lives in those slots. */
  private windowLayers: ReadonlySet<number> = new Set();
  /** A KV budget in bytes that gives a runner of these options this runner's blocks and slots (a rebuild's budget). */
  kvBudgetBytes = 0;

  /** The largest weight part in bytes: the adapter's binding limit, or less when asked. */
  private readonly weightPartBytes: number;
  /** The matmuls run the subgroup kernels. */
  readonly subgroups: boolean;

  private constructor(readonly source: ModelSource, readonly gpu: GpuContext, readonly options: RunnerOptions, tuning: WebGpuTuning) {
    this.device = gpu.device;
    // Weights are split into parts that fit (uploadWeight); other buffers are sized by the batch limits.
    this.memory = new DeviceBuffers(gpu.device, gpu.limits.maxStorageBufferBindingSize, "lower maxSequences or batchSize, or use --backend wasm");
    this.weightPartBytes = Math.min(gpu.limits.maxStorageBufferBindingSize, tuning.weightPartBytes ?? Infinity);
    this.subgroups = gpu.subgroups && tuning.subgroups !== false;
    this.kvDtype = options.kvCache.dtype ?? "f32";
    if (this.kvDtype !== "f32" && this.kvDtype !== "f16") throw new RangeError(`kvCache.dtype must be "f32" or "f16", got ${JSON.stringify(this.kvDtype)}`);
    this.kv = kvShaders(this.kvDtype);
    this.kvPerWord = this.kvDtype === "f16" ? 2 : 1;
  }

  /**
   * Uploads the model's weights, allocates every buffer a forward pass needs and compiles the pipelines. Weights
   * larger than the adapter's maxStorageBufferBindingSize (or `tuning.weightPartBytes`) are split by rows.
   */
  static async create(source: ModelSource, gpu: GpuContext, options: RunnerOptions, tuning: WebGpuTuning = {}): Promise<WebGpuModelRunner> {
    const unsupported = webGpuUnsupported(source.config);
    if (unsupported) throw new ModelFileError(source.path, `${unsupported}: use --backend wasm`);
    const runner = new WebGpuModelRunner(source, gpu, options, tuning);
    try {
      runner.upload();
      runner.allocate();
      await runner.compile();
    } catch (error) {
      runner.dispose();
      throw error;
    }
    return runner;
  }

  get config(): ModelConfig {
    return this.source.config;
  }

  /** Frees every device buffer (the device itself belongs to the caller). */
  dispose(): void {
    this.memory.destroyAll();
    this.perLayerEmbedding?.tokens.close();
  }

  /** Image tokens' embeddings of a pass, uploaded then copied over their rows of x (created on first use). */
  private imageRowsBuffer: GPUBuffer | undefined;

  /**
   * Overwrites the embedding rows of image tokens in x with the images' own (unscaled) embeddings. A step's copies run
   * after all of its dispatches: the step that embedded the tokens is submitted with the copies, and the pass goes on
   * in the step returned.
   */
  private placeImageRows(step: Step, chunks: readonly SequenceChunk[], T: number): Step {
    const d = this.config.hidden_size;
    const rowBytes = d * 4;
    this.imageRowsBuffer ??= this.buffer("image rows", this.options.maxBatchTokens * rowBytes);
    const staged = new Float32Array(T * d);
    const runs: Array<[row: number, rows: number]> = [];
    let firstRow = 0;
    for (const chunk of chunks) {
      for (const media of chunk.media ?? []) {
        staged.set(media.embeddings, (firstRow + media.offset) * d);
        runs.push([firstRow + media.offset, media.embeddings.length / d]);
      }
      firstRow += chunk.tokens.length;
    }
    this.device.queue.writeBuffer(this.imageRowsBuffer, 0, staged);
    for (const [row, rows] of runs) step.copy(this.imageRowsBuffer, this.buffers.x, rows * rowBytes, row * rowBytes, row * rowBytes);
    step.submit();
    return this.encoder.begin();
  }

  private buffer(label: string, bytes: number, usage?: number): GPUBuffer {
    return this.memory.create(label, bytes, usage);
  }

  private uploadBytes(label: string, bytes: ArrayBufferView): GPUBuffer {
    return this.memory.upload(label, bytes);
  }

  /** Reads every tensor and puts it on the device in the kernels' layout. */
  private upload(): void {
    const config = this.config;
    const tensors = new Map<string, PlacedTensor>();
    // Tensors read by rows from the file each pass (Gemma 4's per-layer token embeddings) are not read here.
    const resident = residentPart(this.source, tensorsReadByRows(config));
    readTensors(resident, { kernelTypes: WEBGPU_KERNEL_TYPES }, { allocate: (bytes) => new Uint8Array(bytes) }, (tensor) => tensors.set(tensor.name, tensor), this.options.onProgress);
    const need = (name: string): PlacedTensor => {
      const tensor = tensors.get(name);
      if (!tensor) throw new ModelFileError(this.source.path, `tensor '${name}' is missing`);
      return tensor;
    };
    // The tensor behind each uploaded weight, for Gemma 4's row slices (fused attn_qkv, fused expert gate_up).
    const uploaded = new Map<GpuWeight, PlacedTensor>();
    const upload = (tensor: PlacedTensor): GpuWeight => {
      const gpuWeight = this.uploadWeight(tensor);
      uploaded.set(gpuWeight, tensor);
      return gpuWeight;
    };
    const weight = (name: string, k: number, n: number): GpuWeight => {
      const tensor = need(name);
      if (tensor.shape[0] !== k || (tensor.shape[1] ?? 1) !== n) throw new ModelFileError(this.source.path, `tensor '${name}' has shape [${tensor.shape}], expected [${k}, ${n}]`);
      return upload(tensor);
    };
    /** Rows [first, first + rows) of an uploaded [k, n] weight, as its own [k, rows] weight (rows are stored one after another). */
    const rowsOf = (matrix: GpuWeight, first: number, rows: number): GpuWeight => {
      const tensor = uploaded.get(matrix)!;
      const rowBytes = tensor.bytes.byteLength / (tensor.shape[1] ?? 1);
      return upload({ ...tensor, name: `${tensor.name} rows ${first}-${first + rows}`, shape: [tensor.shape[0]!, rows], bytes: tensor.bytes.subarray(first * rowBytes, (first + rows) * rowBytes) });
    };
    /** A small F32 vector's values on the host (Gemma 4's layer_output_scale, ffn_down_exps.scale). */
    const hostValues = (name: string, n: number): Float32Array => {
      const tensor = need(name);
      if (tensor.type !== GgmlType.F32 || tensor.shape.length !== 1 || tensor.shape[0] !== n) {
        throw new ModelFileError(this.source.path, `tensor '${name}' has type ${ggmlTypeName(tensor.type)} and shape [${tensor.shape}], expected F32 [${n}]`);
      }
      const view = new DataView(tensor.bytes.buffer, tensor.bytes.byteOffset, tensor.bytes.byteLength);
      return Float32Array.from({ length: n }, (_, i) => view.getFloat32(i * 4, true));
    };
    const vector = (name: string, n: number): GPUBuffer => {
      const tensor = need(name);
      if (tensor.shape.length !== 1 || tensor.shape[0] !== n) throw new ModelFileError(this.source.path, `tensor '${name}' has shape [${tensor.shape}], expected [${n}]`);
      return this.uploadBytes(name, tensor.bytes);
    };
    const optionalVector = (name: string, n: number) => (tensors.has(name) ? vector(name, n) : undefined);
    const d = config.hidden_size;
    this.embedding = weight("token_embd.weight", d, config.vocab_size);
    this.outputNorm = vector("output_norm.weight", d);
    this.outputWeight = tensors.has("output.weight") ? weight("output.weight", d, config.vocab_size) : this.embedding;
    // Experts: each expert's matrix its own weight (no storage-binding offsets into a block-quantized tensor), and the
    // biases of every expert in one buffer (the add kernel takes an offset).
    const matrices = (name: string, k: number, n: number, count: number): GpuWeight => {
      const tensor = need(name);
      if (tensor.shape[0] !== k || tensor.shape[1] !== n || tensor.shape[2] !== count) throw new ModelFileError(this.source.path, `tensor '${name}' has shape [${tensor.shape}], expected [${k}, ${n}, ${count}]`);
      const bytes = tensor.bytes.byteLength / count;
      const experts = Array.from({ length: count }, (_, e) => upload({ ...tensor, name: `${name} expert ${e}`, shape: [k, n], bytes: tensor.bytes.subarray(e * bytes, (e + 1) * bytes) }));
      return { name, type: experts[0]!.type, shape: tensor.shape, parts: [], experts };
    };
    const vectors = (name: string, n: number, count: number): GPUBuffer => {
      const tensor = need(name);
      if (tensor.shape[0] !== n || tensor.shape[1] !== count) throw new ModelFileError(this.source.path, `tensor '${name}' has shape [${tensor.shape}], expected [${n}, ${count}]`);
      return this.uploadBytes(name, tensor.bytes);
    };
    const placer = { matrix: weight, matrices, vectors, vector, optionalVector, has: (name: string) => tensors.has(name), rowsOf };
    const gemma4 = config.architecture === "gemma4";
    if (gemma4) {
      // As the WebAssembly backend: a .scale tensor this runner would not apply is refused by name.
      for (const name of tensors.keys()) {
        if (name.endsWith(".scale") && !/\.(ffn_gate_inp|ffn_down_exps)\.scale$/.test(name)) throw new ModelFileError(this.source.path, `tensor '${name}' is not supported`);
      }
    }
    // The KV caches are allocated once the weights are in (allocate()).
    this.layers = Array.from({ length: config.num_hidden_layers }, (_, i) => {
      const layer: GpuLayer = { ...layerTensors(config, i, placer), kCache: undefined as never, vCache: undefined as never };
      if (gemma4) this.gemma4Layer(layer, i, rowsOf, hostValues);
      return layer;
    });
    // The fused weights were uploaded whole, then as slices: the whole ones go.
    const used = new Set(this.weights());
    for (const gpuWeight of uploaded.keys()) if (!used.has(gpuWeight)) this.release(gpuWeight);
    if (gemma4 && config.hidden_size_per_layer_input !== undefined) {
      const width = config.num_hidden_layers * config.hidden_size_per_layer_input;
      const location = this.source.tensors.get(PER_LAYER_TOKEN_EMBD);
      if (!location) throw new ModelFileError(this.source.path, `tensor '${PER_LAYER_TOKEN_EMBD}' is missing`);
      if (location.shape.length !== 2 || location.shape[0] !== width || location.shape[1] !== config.vocab_size) {
        throw new ModelFileError(this.source.path, `tensor '${PER_LAYER_TOKEN_EMBD}' has shape [${location.shape}], expected [${width}, ${config.vocab_size}]`);
      }
      const tokens = new TensorRowReader(location);
      tokens.checkScales();
      this.perLayerEmbedding = {
        tokens,
        projection: weight("per_layer_model_proj.weight", d, width),
        norm: vector("per_layer_proj_norm.weight", config.hidden_size_per_layer_input),
      };
    }
    // Sliding-window layers (Gemma 3, Gemma 4) have their own base and no linear scaling, Gemma 4's their own rotary
    // dimensions and no rope_freqs; one table per distinct setting.
    const tables = new Map<string, GPUBuffer>();
    const table = (base: number, freqScale: number, yarn: YarnConstants, rotaryDim: number, factors: Float32Array | undefined): GPUBuffer => {
      const key = JSON.stringify([base, freqScale, yarn, rotaryDim, factors !== undefined]);
      let buffer = tables.get(key);
      if (!buffer) {
        const rotations = ropeRotations(this.options.maxContext, rotaryDim, ropeThetaScale(base, rotaryDim), factors, freqScale, yarn);
        tables.set(key, (buffer = this.uploadBytes(`rope rotations (base ${base}, scale ${freqScale}${yarn.extFactor ? `, yarn mscale ${yarn.mscale}` : ""}, ${rotaryDim} dims${factors ? ", rope_freqs" : ""})`, rotations)));
      }
      return buffer;
    };
    const ropes = this.layers.map((_, index) => ({
      ...layerRope(config, index),
      rotaryDim: layerAttention(config, index).rotaryDim,
      factors: config.rope_freqs_full_only && attentionWindow(config, index) > 0 ? undefined : this.source.ropeFreqFactors ?? undefined,
    }));
    this.rotations = ropes.map(({ base, freqScale, yarn, rotaryDim, factors }) => table(base, freqScale, yarn, rotaryDim, factors));
    this.shiftRotations = ropes.map(({ base, freqScale, yarn, rotaryDim, factors }) => table(base, freqScale, { ...yarn, mscale: 1 }, rotaryDim, factors));
  }

  /**
   * A Gemma 4 layer's forms the kernels take as they are: fused expert gate_up split into each expert's gate and up
   * rows, and the scalars the scale kernels take as parameters (layer_output_scale, each expert's down scale).
   */
  private gemma4Layer(layer: GpuLayer, index: number, rowsOf: (matrix: GpuWeight, first: number, rows: number) => GpuWeight, hostValues: (name: string, n: number) => Float32Array): void {
    const config = this.config;
    const p = `blk.${index}.`;
    if (layer.gemma4?.outScale) layer.outScale = hostValues(`${p}layer_output_scale.weight`, 1)[0];
    const experts = layer.experts;
    if (!experts) return;
    const width = config.moe_intermediate_size!;
    if (experts.gateUp) {
      const fused = experts.gateUp;
      const half = (first: number, label: string): GpuWeight => ({
        name: `${fused.name} ${label}`, type: fused.type, shape: [fused.shape[0]!, width, fused.shape[2]!], parts: [],
        experts: fused.experts!.map((expert) => rowsOf(expert, first, width)),
      });
      experts.gate = half(0, "gate");
      experts.up = half(width, "up");
      experts.gateUp = undefined;
    }
    if (experts.downScale) layer.expertDownScale = hostValues(`${p}ffn_down_exps.scale`, config.num_experts!);
  }

  /** Frees a weight's device buffers (a fused weight once its slices are up). */
  private release(gpuWeight: GpuWeight): void {
    for (const part of gpuWeight.parts) {
      for (const buffer of [part.data, part.quants, part.scales]) {
        if (buffer) this.memory.release(buffer);
      }
    }
  }

  private uploadWeight(tensor: PlacedTensor): GpuWeight {
    return uploadWeight(tensor, (label, bytes) => this.uploadBytes(label, bytes), this.weightPartBytes, this.source.path);
  }

  /** Activation buffers, the KV pool and the step encoder. */
  private allocate(): void {
    const config = this.config;
    const { maxBatchTokens: T, maxSequences, maxContext, blockSize } = this.options;
    const d = config.hidden_size;
    const qDim = config.num_attention_heads * config.head_dim;
    const kvDim = config.num_key_value_heads * config.head_dim;
    const gemma4 = config.architecture === "gemma4";
    // Gemma 4's per-layer input gate [T, n] runs in the feed-forward buffers too.
    const perLayer = config.hidden_size_per_layer_input ?? 0;
    const ffn = Math.max(config.intermediate_size, config.moe_intermediate_size ?? 0, perLayer);
    const widest = Math.max(d, qDim, ffn);
    const blocksPerSequence = Math.ceil(maxContext / blockSize);
    const f32 = (label: Activation, floats: number) => { this.buffers[label] = this.buffer(label, floats * 4); };
    f32("x", T * d);
    f32("h", T * Math.max(d, qDim));
    f32("q", T * qDim);
    f32("k", T * kvDim);
    f32("v", T * kvDim);
    f32("qNormed", T * qDim);
    f32("kNormed", T * kvDim);
    f32("attention", T * qDim);
    f32("gate", T * ffn);
    f32("up", T * ffn);
    f32("gathered", maxSequences * d);
    f32("logits", maxSequences * config.vocab_size);
    // Gemma 3's post-norms write beside their input (a dispatch cannot read and write one buffer).
    f32("postNormed", config.architecture === "gemma3" || gemma4 ? T * d : 1);
    // Gemma 4: the normed values, a weight of ones for the unweighted norms (values), the dense MLP's output beside
    // the experts', the router's own input, and the per-layer inputs ([T, layers, n] while computed, then [layers, T, n]).
    f32("vNormed", gemma4 ? T * kvDim : 1);
    f32("ones", gemma4 ? Math.max(d, config.head_dim) : 1);
    f32("ffnOut", gemma4 ? T * d : 1);
    f32("routerInput", gemma4 ? T * d : 1);
    const perLayerValues = Math.max(1, T * config.num_hidden_layers * perLayer);
    f32("perLayerInputs", perLayerValues);
    f32("perLayerProjection", perLayerValues);
    f32("perLayerNormed", perLayerValues);
    f32("perLayerIds", perLayerValues / Math.max(1, perLayer));
    if (gemma4) this.device.queue.writeBuffer(this.buffers.ones, 0, new Float32Array(Math.max(d, config.head_dim)).fill(1));
    f32("xQuants", (T * widest) / 4);
    f32("xScales", (T * widest) / 32);
    f32("ids", T);
    f32("positions", 2 * T); // positions, then each row's key end (images)
    f32("rowTables", T);
    f32("blockTables", maxSequences * blocksPerSequence);
    f32("localBlockTables", maxSequences * blocksPerSequence);
    f32("gatherIds", maxSequences);
    f32("copySource", blocksPerSequence);
    f32("copyTarget", blocksPerSequence);
    f32("sampling", (maxSequences * ROW_SAMPLING_BYTES) / 4);
    f32("attentionPartials", Math.ceil(SPLIT_BELOW_WORKGROUPS / config.num_attention_heads) * config.num_attention_heads * MAX_SPLITS * (config.head_dim + 2));
    f32("sampledTokens", maxSequences);
    f32("queryFactors", config.attention_temperature ? T : 1);
    const experts = config.num_experts ?? 0;
    const slots = experts > 0 ? T * config.num_experts_per_tok! : 1;
    f32("router", Math.max(1, T * experts));
    f32("expertInput", experts > 0 ? T * d : 1);
    f32("expertOutput", slots * d);
    f32("slotRows", slots);
    f32("slotWeights", slots);
    f32("expertFactors", slots);
    if (experts > 0) {
      this.routerReadback = this.buffer("router logits readback", T * experts * 4, GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST);
      this.expertRows = Array.from({ length: experts }, (_, e) => this.buffer(`expert ${e} rows`, T * 4));
    }
    this.readback = this.buffer("logits readback", maxSequences * config.vocab_size * 4, GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST);
    this.tokenReadback = this.buffer("sampled tokens readback", maxSequences * 4, GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST);
    this.samplingStaging = new DataView(new ArrayBuffer(maxSequences * ROW_SAMPLING_BYTES));

    // The KV pool: the budget, capped so that one layer's K (or V) fits a storage binding. Each layer's cache has its
    // own width (Gemma 4's differ by layer; its shared-KV layers hold none and read their source layer's).
    const valueBytes = 4 / this.kvPerWord;
    const widths = this.layers.map((_, i) => layerKvWidth(config, i));
    const blockBytes = widths.reduce((sum, width) => sum + kvBlockBytes(1, width, blockSize, this.kvDtype), 0);
    const sinkBytes = config.num_attention_heads * 4;
    const bindingBlocks = Math.floor((this.gpu.limits.maxStorageBufferBindingSize - sinkBytes - 16) / (blockSize * Math.max(...widths) * valueBytes));
    const allLayersBlocks = kvBlocksForBudget(this.options.kvCache, blockBytes, bindingBlocks * blockBytes, blocksPerSequence);
    // Sliding-window layers freed behind their window take their fixed slots out of the budget; the blocks pay for the
    // other layers only (as the WebAssembly runner plans them).
    const windowed = windowLayersOf(config, this.options, allLayersBlocks);
    this.localKvBlocks = windowed?.kvBlocks;
    this.windowLayers = windowed?.layers ?? new Set();
    if (windowed) {
      const fullBytes = widths.reduce((sum, width, i) => (windowed.layers.has(i) ? sum : sum + kvBlockBytes(1, width, blockSize, this.kvDtype)), 0);
      const windowBytes = (blockBytes - fullBytes) * windowed.kvBlocks;
      this.kvBlocks = fullBytes === 0
        ? Math.min(bindingBlocks, maxSequences * blocksPerSequence)
        : kvBlocksForBudget(this.options.kvCache, fullBytes, bindingBlocks * fullBytes, blocksPerSequence, undefined, windowBytes);
      this.kvBudgetBytes = fullBytes === 0 ? allLayersBlocks * blockBytes : this.kvBlocks * fullBytes + windowBytes;
    } else {
      this.kvBlocks = allLayersBlocks;
      this.kvBudgetBytes = allLayersBlocks * blockBytes;
    }
    const copies = this.device.createCommandEncoder();
    for (const [i, layer] of this.layers.entries()) {
      const source = kvSourceLayer(config, i);
      if (source !== i) {
        layer.kCache = this.layers[source]!.kCache;
        layer.vCache = this.layers[source]!.vCache;
        continue;
      }
      const slotBytes = this.kvBlocksOf(i) * blockSize * widths[i]! * valueBytes;
      layer.kCache = this.buffer(`layer ${i} K cache`, slotBytes + (layer.sinks ? sinkBytes : 0));
      layer.vCache = this.buffer(`layer ${i} V cache`, slotBytes);
      if (layer.sinks) copies.copyBufferToBuffer(layer.sinks, 0, layer.kCache, slotBytes, sinkBytes);
    }
    this.device.queue.submit([copies.finish()]);
    // Dispatches per step: at most 27 per layer (Gemma 4: 45) and the embedding and logits around them (Gemma 4's
    // per-layer inputs: 12 more), plus one per extra part of a split weight, plus a mixture of experts' 12 per expert
    // (a step is split at each expert layer's routing).
    const extraParts = this.weights().reduce((sum, weight) => sum + Math.max(0, weight.parts.length - 1), 0);
    this.encoder = new StepEncoder(this.device, (gemma4 ? 45 : 27) * config.num_hidden_layers + 28 + extraParts + 12 * experts);
    this.memory.adopt(this.encoder.params);
  }

  /** Compiles every pipeline a step can use, so that steps never wait on the compiler. */
  private async compile(): Promise<void> {
    const matrices = this.weights().filter((weight) => weight.parts.length > 0);
    const shaders: ShaderRef[] = [...Object.values(SHADERS), ...Object.values(this.kv), ...matrices.flatMap((weight) => [matmulShader(weight, this.subgroups), tiledShader(weight)]), ...[0, 1, 2].map(getRowsShader)];
    this.pipelines = await CompiledPipelines.compile(this.device, shaders);
  }

  /** How many parts the weight matrix `name` is split into on the device (undefined for an unknown name). */
  weightParts(name: string): number | undefined {
    return this.weights().find((weight) => weight.name === name)?.parts.length;
  }

  /** Every weight matrix (the embedding once, even when the output layer shares it), experts one by one. */
  private weights(): GpuWeight[] {
    const layers = this.layers.flatMap((layer) => {
      const experts = layer.experts ? [layer.experts.router, ...[layer.experts.gate!, layer.experts.up!, layer.experts.down].flatMap((tensor) => tensor.experts!)] : [];
      const perLayer = layer.gemma4?.perLayer;
      return [layer.q, layer.k, layer.v, layer.output, layer.gate, layer.up, layer.down, ...experts, perLayer?.inputGate, perLayer?.projection];
    });
    return [...new Set([this.embedding, this.outputWeight, this.perLayerEmbedding?.projection, ...layers])].filter((weight): weight is GpuWeight => weight !== undefined);
  }

  private pipeline(shader: ShaderRef): GPUComputePipeline {
    return this.pipelines.get(shader);
  }

  /** The attention's score scale: the file's, 1 where queries were scaled (Gemma), else head_dim^-1/2. */
  private get scoreScale(): number {
    const config = this.config;
    return config.attention_scale ?? (queryScale(config) === undefined ? 1 / Math.sqrt(config.head_dim) : 1);
  }

  /** Every chunk that wants logits gets them (deviceSampling is ignored). */
  forward(chunks: readonly SequenceChunk[]): Promise<Float32Array> {
    return this.runReadingHidden(chunks, false).then((output) => output.logits);
  }

  /** Chunks with deviceSampling are sampled on the GPU (sample.wgsl): only their token ids are read back. */
  forwardSampled(chunks: readonly SequenceChunk[]): Promise<SampledForward> {
    return this.runReadingHidden(chunks, true);
  }

  /** run(), then the hidden states its chunks asked for, read back (run has submitted every command by then). */
  private async runReadingHidden(chunks: readonly SequenceChunk[], sampleOnDevice: boolean): Promise<SampledForward> {
    this.hiddenRowsPending = 0;
    this.hiddenStates = new Float32Array(0);
    const output = await this.run(chunks, sampleOnDevice);
    const rows = this.hiddenRowsPending;
    if (rows > 0) {
      const bytes = rows * this.config.hidden_size * 4;
      const readback = this.hiddenBuffers!.readback;
      await gpuWait(readback.mapAsync(GPUMapMode.READ, 0, bytes));
      this.hiddenStates = new Float32Array(readback.getMappedRange(0, bytes).slice(0));
      readback.unmap();
    }
    return output;
  }

  /**
   * Norms every row of the residual stream with output_norm (as before the LM head) and copies the rows of the chunks
   * with wantHidden to the hidden readback, in chunk order; sets hiddenRowsPending.
   */
  private encodeHiddenRows(step: ReturnType<StepEncoder["begin"]>, chunks: readonly SequenceChunk[], T: number): void {
    if (!chunks.some((chunk) => chunk.wantHidden)) return;
    const d = this.config.hidden_size;
    const rowBytes = d * 4;
    this.hiddenBuffers ??= {
      normed: this.buffer("final-normed rows", this.options.maxBatchTokens * rowBytes),
      readback: this.buffer("final-normed rows readback", this.options.maxBatchTokens * rowBytes, GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST),
    };
    this.rmsnorm(step, this.buffers.x, this.outputNorm, this.hiddenBuffers.normed, T, d, this.config.rms_norm_eps);
    let first = 0;
    let rows = 0;
    for (const chunk of chunks) {
      const count = chunk.tokens.length;
      if (chunk.wantHidden) {
        step.copy(this.hiddenBuffers.normed, this.hiddenBuffers.readback, count * rowBytes, first * rowBytes, rows * rowBytes);
        rows += count;
      }
      first += count;
    }
    this.hiddenRowsPending = rows;
  }

  private async run(chunks: readonly SequenceChunk[], sampleOnDevice: boolean): Promise<SampledForward> {
    const config = this.config;
    const { options, buffers: b } = this;
    const T = checkBatch(chunks, options, config.vocab_size, config.hidden_size);
    const d = config.hidden_size;
    const blocksPerSequence = Math.ceil(options.maxContext / options.blockSize);

    const ids = new Int32Array(T);
    // Positions, then (with images) each row's exclusive key end, which attention.wgsl reads past them.
    const imageRows = chunks.some((chunk) => chunk.media?.length);
    const positionsAndEnds = new Int32Array(imageRows ? 2 * T : T);
    const positions = positionsAndEnds.subarray(0, T);
    const rowTables = new Uint32Array(T);
    const tables = new Int32Array(chunks.length * blocksPerSequence);
    const localTables = this.localKvBlocks === undefined ? undefined : new Int32Array(chunks.length * blocksPerSequence);
    const gather: number[] = [];
    let row = 0;
    /** Keys the longest row attends to (sizes the split-K attention). */
    let longest = 0;
    chunks.forEach((chunk, s) => {
      for (let i = 0; i < chunk.blockTable.length; i++) tables[s * blocksPerSequence + i] = chunk.blockTable[i];
      if (localTables) {
        if (!chunk.localBlockTable) throw new RangeError("this runner frees sliding-window KV: every chunk needs its localBlockTable");
        for (let i = 0; i < chunk.localBlockTable.length; i++) localTables[s * blocksPerSequence + i] = chunk.localBlockTable[i];
      }
      // An image's rows read row 0 of the embedding table (then overwritten) and see the whole image.
      const imageEnds = mediaKeyEnds(chunk, d);
      for (let i = 0; i < chunk.tokens.length; i++, row++) {
        const imageEnd = imageEnds.get(i);
        ids[row] = imageEnd === undefined ? chunk.tokens[i] : 0;
        positions[row] = chunk.startPosition + i;
        if (imageRows) positionsAndEnds[T + row] = imageEnd ?? positions[row] + 1;
        longest = Math.max(longest, imageEnd ?? positions[row] + 1);
        rowTables[row] = s * blocksPerSequence;
      }
      if (chunk.wantLogits) {
        // Every row of an allRowLogits chunk, else its last; a chunk's last row carries its sampling.
        if (chunk.allRowLogits) for (let r = row - chunk.tokens.length; r < row - 1; r++) gather.push(r);
        gather.push(row - 1);
      }
    });
    const queue = this.device.queue;
    queue.writeBuffer(b.ids, 0, ids);
    queue.writeBuffer(b.positions, 0, positionsAndEnds);
    queue.writeBuffer(b.rowTables, 0, rowTables);
    queue.writeBuffer(b.blockTables, 0, tables);
    if (localTables) queue.writeBuffer(b.localBlockTables, 0, localTables);
    // The head runs maxSequences rows at a time (allRowLogits can ask for more): the first page's rows now.
    if (gather.length > 0) queue.writeBuffer(b.gatherIds, 0, Int32Array.from(gather.slice(0, options.maxSequences)));
    if (config.attention_temperature) queue.writeBuffer(b.queryFactors, 0, Float32Array.from(positions, (position) => attentionTemperature(config, position)));

    let step = this.encoder.begin();
    const eps = config.rms_norm_eps;
    const splits = T * config.num_attention_heads >= SPLIT_BELOW_WORKGROUPS ? 1 : Math.min(MAX_SPLITS, Math.ceil(longest / SPLIT_KEYS));
    const splitKeys = Math.ceil(Math.ceil(longest / splits) / 64) * 64;
    this.embed(step, this.embedding, b.x, T, d);
    if (config.embedding_scale !== undefined) this.scale(step, b.x, T * d, config.embedding_scale);
    if (imageRows) step = this.placeImageRows(step, chunks, T);
    if (this.perLayerEmbedding) this.perLayerInputs(step, this.perLayerEmbedding, ids);
    const queries = queryScale(config);
    const gelu = config.hidden_activation === "gelu_pytorch_tanh";
    for (const [index, layer] of this.layers.entries()) {
      const { heads, kvHeads, headDim, rotaryDim } = layerAttention(config, index);
      const qDim = heads * headDim;
      const kvDim = kvHeads * headDim;
      // Gemma 4's shared-KV layers compute no K/V: they attend over their source layer's cache.
      const ownKv = layer.k !== undefined;
      this.rmsnorm(step, b.x, layer.attnNorm, b.h, T, d, eps);
      const normed = this.linearInput(step, b.h, T, d);
      this.linear(step, normed, layer.q, b.q, layer.qBias);
      let q = b.q;
      let k = b.k;
      let v = b.v;
      if (ownKv) {
        this.linear(step, normed, layer.k!, b.k, layer.kBias);
        // Gemma 4 without attn_v: the values are the keys' projection, before the keys' norm.
        if (layer.v) this.linear(step, normed, layer.v, b.v, layer.vBias);
        else v = b.k;
      }
      if (layer.qNorm) {
        this.rmsnorm(step, b.q, layer.qNorm, b.qNormed, T * heads, headDim, eps);
        q = b.qNormed;
      }
      if (ownKv && layer.kNorm) {
        this.rmsnorm(step, b.k, layer.kNorm, b.kNormed, T * kvHeads, headDim, eps);
        k = b.kNormed;
      }
      // Gemma 4: values RMS-normed without a weight (a weight of ones).
      if (ownKv && config.value_norm) {
        this.rmsnorm(step, v, b.ones, b.vNormed, T * kvHeads, headDim, eps);
        v = b.vNormed;
      }
      for (const [target, count] of (ownKv ? [[q, heads], [k, kvHeads]] : [[q, heads]]) as Array<[GPUBuffer, number]>) {
        step.dispatch(this.pipeline(SHADERS.rope), [target, b.positions, this.rotations[index]!],
          [["u32", T], ["u32", count], ["u32", headDim], ["u32", rotaryDim]], grid(T * count * (rotaryDim / 2), 256));
      }
      if (queries !== undefined) this.scale(step, q, T * qDim, queries);
      // Mistral 3: each query row times its position's temperature (1 below the floor scale).
      if (config.attention_temperature) step.dispatch(this.pipeline(SHADERS.scaleRows), [q, b.queryFactors], [["u32", T], ["u32", qDim]], grid(T * qDim, 256));
      // A freed sliding-window layer's cache (or its KV source's) is addressed through the slots' tables.
      const cacheLayer = kvSourceLayer(config, index);
      const blockTables = this.windowLayers.has(cacheLayer) ? b.localBlockTables : b.blockTables;
      if (ownKv) {
        step.dispatch(this.pipeline(this.kv.kvStore), [k, v, layer.kCache, layer.vCache, b.rowTables, blockTables, b.positions],
          [["u32", T], ["u32", kvDim], ["u32", options.blockSize]], grid((T * kvDim) / this.kvPerWord, 256));
      }
      step.dispatch(this.pipeline(this.kv.attention), [q, layer.kCache, layer.vCache, b.rowTables, blockTables, b.positions, b.attention, b.attentionPartials],
        [["u32", heads], ["u32", kvHeads], ["u32", headDim], ["u32", options.blockSize], ["f32", this.scoreScale],
          ["u32", splits], ["u32", splitKeys], ["u32", attentionWindow(config, index)],
          ["u32", layer.sinks ? 1 : 0], ["u32", (this.kvBlocksOf(cacheLayer) * options.blockSize * kvDim) / this.kvPerWord], ["u32", imageRows ? T : 0]],
        [heads * splits, T]);
      if (splits > 1) {
        step.dispatch(this.pipeline(SHADERS.attentionCombine), [b.attentionPartials, b.attention], [["u32", heads], ["u32", headDim], ["u32", splits]], [heads, T]);
      }
      this.linear(step, this.linearInput(step, b.attention, T, qDim), layer.output, b.h, layer.outputBias);
      this.addNormed(step, b.h, layer.attnPostNorm, T);

      this.rmsnorm(step, b.x, layer.ffnNorm, b.h, T, d, eps);
      const moe = layer.gemma4?.moe;
      if (layer.experts && !moe) {
        step = await this.mixtureOfExperts(step, layer, T, b.h);
      } else {
        const ffn = layer.gate!.shape[1]!;
        const ffnInput = this.linearInput(step, b.h, T, d);
        this.linear(step, ffnInput, layer.gate!, b.gate);
        this.linear(step, ffnInput, layer.up!, b.up);
        step.dispatch(this.pipeline(gelu ? SHADERS.geluMul : SHADERS.siluMul), [b.gate, b.up], gelu ? [["u32", T * ffn], ["u32", 0]] : [["u32", T * ffn]], grid(T * ffn, 256));
        this.linear(step, this.linearInput(step, b.gate, T, ffn), layer.down!, b.h);
      }
      if (layer.experts && moe) {
        // Gemma 4: the dense MLP is a shared expert beside the routed ones, each normed, then summed. The router reads
        // rms_norm(x) (no weight) * ffn_gate_inp.scale / sqrt(d).
        this.rmsnorm(step, b.h, moe.postNorm1, b.ffnOut, T, d, eps);
        this.rmsnorm(step, b.x, moe.routerScale, b.routerInput, T, d, eps);
        this.scale(step, b.routerInput, T * d, Math.fround(1 / Math.fround(Math.sqrt(d))));
        this.rmsnorm(step, b.x, moe.preNorm2, b.h, T, d, eps);
        step = await this.mixtureOfExperts(step, layer, T, b.routerInput);
        this.rmsnorm(step, b.h, moe.postNorm2, b.postNormed, T, d, eps);
        this.add(step, b.ffnOut, b.postNormed, T * d, T * d);
        this.addNormed(step, b.ffnOut, layer.ffnPostNorm, T);
      } else {
        this.addNormed(step, b.h, layer.ffnPostNorm, T);
      }
      const perLayer = layer.gemma4?.perLayer;
      if (perLayer) this.perLayerInput(step, perLayer, index, T);
      if (layer.outScale !== undefined) this.scale(step, b.x, T * d, layer.outScale);
    }
    this.encodeHiddenRows(step, chunks, T);
    const outputs = gather.length;
    if (outputs === 0) {
      step.submit();
      await gpuWait(this.device.queue.onSubmittedWorkDone());
      return { tokens: new Int32Array(0), logits: new Float32Array(0) };
    }
    // Logits only for the last row of the chunks that want them (every row with allRowLogits), each row with its
    // chunk's device sampling when it is the chunk's last.
    const settings: SequenceChunk["deviceSampling"][] = [];
    /** The output row of each chunk that wants logits: its last. */
    const chunkRows: number[] = [];
    for (const chunk of chunks) {
      if (!chunk.wantLogits) continue;
      if (chunk.allRowLogits) for (let r = 1; r < chunk.tokens.length; r++) settings.push(undefined);
      chunkRows.push(settings.length);
      settings.push(sampleOnDevice ? chunk.deviceSampling : undefined);
    }
    if (outputs <= options.maxSequences) {
      this.head(step, outputs, T);
      const output = await this.readOutputs(step, settings);
      return outputs === chunkRows.length ? output : { tokens: Int32Array.from(chunkRows, (r) => output.tokens[r]), logits: output.logits };
    }
    // More rows than the logits buffer holds: a page at a time, each read back before the next overwrites it.
    const tokens = new Int32Array(outputs);
    const pages: Float32Array[] = [];
    for (let first = 0; first < outputs; first += options.maxSequences) {
      const count = Math.min(options.maxSequences, outputs - first);
      if (first > 0) {
        step = this.encoder.begin();
        queue.writeBuffer(b.gatherIds, 0, Int32Array.from(gather.slice(first, first + count)));
      }
      this.head(step, count, T);
      const page = await this.readOutputs(step, settings.slice(first, first + count));
      tokens.set(page.tokens, first);
      pages.push(page.logits);
    }
    const logits = new Float32Array(pages.reduce((sum, page) => sum + page.length, 0));
    pages.reduce((offset, page) => (logits.set(page, offset), offset + page.length), 0);
    return { tokens: Int32Array.from(chunkRows, (r) => tokens[r]), logits };
  }

  /**
   * The final norm and LM head over the `rows` rows of x [T, d] that gatherIds names, into logits (softcapped where the
   * model is).
   */
  private head(step: Step, rows: number, T: number): void {
    const { config, buffers: b } = this;
    const d = config.hidden_size;
    step.dispatch(this.pipeline(getRowsShader(0)), [b.x, b.gatherIds, b.h], [["u32", rows], ["u32", d], ["u32", 0], ["u32", T]], grid(rows * d, 256));
    this.rmsnorm(step, b.h, this.outputNorm, b.gathered, rows, d, config.rms_norm_eps);
    this.linear(step, this.linearInput(step, b.gathered, rows, d), this.outputWeight, b.logits);
    const cap = config.final_logit_softcapping;
    if (cap !== undefined) {
      const count = rows * config.vocab_size;
      step.dispatch(this.pipeline(SHADERS.softcap), [b.logits], [["u32", count], ["f32", Math.fround(1 / cap)], ["f32", cap]], grid(count, 256));
    }
  }

  /**
   * Samples the output rows that have settings on the GPU and reads back their tokens; copies the other rows' logits
   * next to each other and reads them back.
   */
  private async readOutputs(step: ReturnType<StepEncoder["begin"]>, settings: ReadonlyArray<SequenceChunk["deviceSampling"]>): Promise<SampledForward> {
    const { buffers: b } = this;
    const vocab = this.config.vocab_size;
    const rowBytes = vocab * 4;
    const staging = this.samplingStaging;
    let sampled = 0;
    let hostRows = 0;
    settings.forEach((s, row) => {
      if (!s) {
        step.copy(b.logits, this.readback, rowBytes, row * rowBytes, hostRows++ * rowBytes);
        return;
      }
      const offset = sampled++ * ROW_SAMPLING_BYTES;
      staging.setFloat32(offset, s.temperature, true);
      staging.setUint32(offset + 4, s.topK, true);
      staging.setFloat32(offset + 8, s.topP, true);
      staging.setFloat32(offset + 12, s.minP, true);
      staging.setFloat32(offset + 16, s.random, true);
      staging.setUint32(offset + 20, row, true);
    });
    if (sampled > 0) {
      this.device.queue.writeBuffer(b.sampling, 0, staging.buffer, 0, sampled * ROW_SAMPLING_BYTES);
      step.dispatch(this.pipeline(SHADERS.sample), [b.logits, b.sampling, b.sampledTokens], [["u32", vocab]], [sampled, 1]);
      step.copy(b.sampledTokens, this.tokenReadback, sampled * 4);
    }
    step.submit();
    const logitBytes = hostRows * rowBytes;
    await gpuWait(Promise.all([
      sampled > 0 ? this.tokenReadback.mapAsync(GPUMapMode.READ, 0, sampled * 4) : undefined,
      hostRows > 0 ? this.readback.mapAsync(GPUMapMode.READ, 0, logitBytes) : this.device.queue.onSubmittedWorkDone(),
    ]));
    const tokens = new Int32Array(settings.length);
    if (sampled > 0) {
      const deviceTokens = new Int32Array(this.tokenReadback.getMappedRange(0, sampled * 4));
      let next = 0;
      settings.forEach((s, row) => { if (s) tokens[row] = deviceTokens[next++]; });
      this.tokenReadback.unmap();
    }
    const logits = hostRows > 0 ? new Float32Array(this.readback.getMappedRange(0, logitBytes).slice(0)) : new Float32Array(0);
    if (hostRows > 0) this.readback.unmap();
    return { tokens, logits };
  }

  copyKv(copies: readonly KvCopy[], targetBlocks: readonly number[], localSlot?: (block: number) => number): void {
    if (copies.length === 0) return;
    const config = this.config;
    const { options, buffers: b } = this;
    checkKvCopies(copies, targetBlocks, options.blockSize);
    if (this.localKvBlocks !== undefined && !localSlot) throw new RangeError("this runner frees sliding-window KV: copyKv needs localSlot");
    // The full layers copy through the block tables, the freed sliding-window layers through their slots. A shared-KV
    // layer (Gemma 4) has no cache of its own: its source layer's copy moves what it reads.
    for (const local of [false, true]) {
      const layers = [...this.layers.entries()].filter(([index]) => kvSourceLayer(config, index) === index && this.windowLayers.has(index) === local);
      if (layers.length === 0) continue;
      const table = (blocks: readonly number[]) => Int32Array.from(local ? blocks.map((block) => localSlot!(block)) : blocks);
      this.device.queue.writeBuffer(b.copyTarget, 0, table(targetBlocks));
      for (const copy of copies) {
        // Each copy is its own submission: the source table buffer is rewritten for the next one.
        this.device.queue.writeBuffer(b.copySource, 0, table(copy.sourceBlocks));
        const step = this.encoder.begin();
        for (const [index, layer] of layers) {
          const { kvHeads, headDim, rotaryDim } = layerAttention(config, index);
          step.dispatch(this.pipeline(this.kv.kvCopy), [layer.kCache, layer.vCache, b.copySource, b.copyTarget, this.shiftRotations[index]!], [
            ["u32", copy.count], ["u32", kvHeads], ["u32", headDim], ["u32", rotaryDim], ["u32", options.blockSize],
            ["u32", copy.sourceStart], ["u32", copy.targetStart], ["i32", copy.targetStart - copy.sourceStart],
          ], grid((copy.count * kvHeads * headDim) / this.kvPerWord, 256));
        }
        step.submit();
      }
    }
  }

  /** Blocks (or, for a freed sliding-window layer, slots) in layer `index`'s cache. */
  private kvBlocksOf(index: number): number {
    return this.windowLayers.has(index) ? this.localKvBlocks! : this.kvBlocks;
  }

  /**
   * A mixture-of-experts feed-forward of the normed rows h [T, d] into h, as the WebAssembly runner computes it: the
   * router's logits (plus its bias) are read back and routed on the host (routeTokens); each expert in use gathers its
   * rows, runs gate, up (with biases), the activation (SiLU, or gpt-oss's swiglu_oai) and down (with bias) into its
   * rows of the grouped outputs; moe_sum adds each token's slots in order, weighted. The router reads `routerInput`
   * [T, d] (h itself but for Gemma 4, whose router has its own input); Gemma 4's per-expert down scale multiplies
   * each expert's output rows before the routing weight. Submits `step` and returns the step that continues the pass.
   */
  private async mixtureOfExperts(step: ReturnType<StepEncoder["begin"]>, layer: GpuLayer, T: number, routerInput: GPUBuffer): Promise<ReturnType<StepEncoder["begin"]>> {
    const { config, buffers: b } = this;
    const experts: GpuExperts = layer.experts!;
    const d = config.hidden_size;
    const ffn = config.moe_intermediate_size!;
    const count = config.num_experts!;
    const k = config.num_experts_per_tok!;
    this.linear(step, this.linearInput(step, routerInput, T, d), experts.router, b.router, experts.routerBias);
    const bytes = T * count * 4;
    step.copy(b.router, this.routerReadback!, bytes);
    step.submit();
    await gpuWait(this.routerReadback!.mapAsync(GPUMapMode.READ, 0, bytes));
    const logits = new Float32Array(this.routerReadback!.getMappedRange(0, bytes).slice(0));
    this.routerReadback!.unmap();
    const routing = routeTokens(logits, T, count, k, config.norm_topk_prob === true, config.expert_gating);
    // Expert outputs are grouped by expert (in ascending order), each expert's rows in token order.
    const slotRows = new Int32Array(T * k);
    const downScale = layer.expertDownScale;
    const factors = downScale ? new Float32Array(T * k) : undefined;
    let grouped = 0;
    for (const [expert, rows] of routing.groups) {
      this.device.queue.writeBuffer(this.expertRows[expert]!, 0, Int32Array.from(rows, (row) => Math.floor(row / k)));
      for (const row of rows) {
        if (factors) factors[grouped] = downScale![expert]!;
        slotRows[row] = grouped++;
      }
    }
    if (factors) this.device.queue.writeBuffer(b.expertFactors, 0, factors);
    this.device.queue.writeBuffer(b.slotRows, 0, slotRows);
    this.device.queue.writeBuffer(b.slotWeights, 0, routing.weights);
    const next = this.encoder.begin();
    let first = 0;
    for (const [expert, rows] of routing.groups) {
      const m = rows.length;
      next.dispatch(this.pipeline(getRowsShader(0)), [b.h, this.expertRows[expert]!, b.expertInput], [["u32", m], ["u32", d], ["u32", 0], ["u32", T]], grid(m * d, 256));
      const input = this.linearInput(next, b.expertInput, m, d);
      this.linear(next, input, experts.gate!.experts![expert]!, b.gate, experts.gateBias, expert * ffn);
      this.linear(next, input, experts.up!.experts![expert]!, b.up, experts.upBias, expert * ffn);
      if (config.hidden_activation === "swiglu_oai") {
        next.dispatch(this.pipeline(SHADERS.swigluOai), [b.gate, b.up], [["u32", m * ffn], ["f32", SWIGLU_OAI_ALPHA], ["f32", SWIGLU_OAI_LIMIT]], grid(m * ffn, 256));
      } else if (config.hidden_activation === "gelu_pytorch_tanh") {
        next.dispatch(this.pipeline(SHADERS.geluMul), [b.gate, b.up], [["u32", m * ffn], ["u32", 0]], grid(m * ffn, 256));
      } else {
        next.dispatch(this.pipeline(SHADERS.siluMul), [b.gate, b.up], [["u32", m * ffn]], grid(m * ffn, 256));
      }
      this.linear(next, this.linearInput(next, b.gate, m, ffn), experts.down.experts![expert]!, b.expertOutput, experts.downBias, expert * d, first);
      first += m;
    }
    // Each grouped row times its expert's down scale, rounded, then weighted in the sum (as the WebAssembly backend).
    if (factors) next.dispatch(this.pipeline(SHADERS.scaleRows), [b.expertOutput, b.expertFactors], [["u32", first], ["u32", d]], grid(first * d, 256));
    next.dispatch(this.pipeline(SHADERS.moeSum), [b.expertOutput, b.slotRows, b.slotWeights, b.h], [["u32", T], ["u32", k], ["u32", d]], grid(T * d, 256));
    return next;
  }

  /** Rows ids[0..T) of a [vocab, width] lookup table (the token embedding, Gemma 4's per-layer one) into `out`. */
  private embed(step: ReturnType<StepEncoder["begin"]>, table: GpuWeight, out: GPUBuffer, T: number, width: number): void {
    const { buffers: b } = this;
    const quant = QUANT_WEIGHT_TYPES[table.type];
    for (const part of table.parts) {
      const params: Array<["u32", number]> = [["u32", T], ["u32", width], ["u32", part.firstRow], ["u32", part.rows]];
      if (quant) step.dispatch(this.pipeline(quant === "q8_0" ? SHADERS.getRowsQ8_0 : SHADERS.getRowsQ4_0), [part.quants!, part.scales!, b.ids, out], params, grid(T * width, 256));
      else step.dispatch(this.pipeline(getRowsShader(FLOAT_WEIGHT_TYPES[table.type]!)), [part.data!, b.ids, out], params, grid(T * width, 256));
    }
  }

  /**
   * Gemma 4's per-layer inputs of the batch into perLayerInputs, [layers, T, n] (each layer's rows together), as
   * the WebAssembly backend computes them: (rms_norm(proj(x) / sqrt(d)) + per_layer_token_embd[token] * sqrt(n)) /
   * sqrt(2), x being the scaled embeddings; the last lookup reorders [T, layers, n] by layer.
   */
  private perLayerInputs(step: ReturnType<StepEncoder["begin"]>, tensors: GpuPerLayerEmbedding, ids: Int32Array): void {
    const { buffers: b } = this;
    const { hidden_size: d, num_hidden_layers: layers, rms_norm_eps: eps } = this.config;
    const n = this.config.hidden_size_per_layer_input!;
    const width = layers * n;
    const T = ids.length;
    this.device.queue.writeBuffer(b.perLayerInputs, 0, tokenRows(tensors.tokens, ids, width));
    this.scale(step, b.perLayerInputs, T * width, Math.fround(Math.sqrt(n)));
    this.linear(step, this.linearInput(step, b.x, T, d), tensors.projection, b.perLayerProjection);
    this.scale(step, b.perLayerProjection, T * width, Math.fround(1 / Math.fround(Math.sqrt(d))));
    this.rmsnorm(step, b.perLayerProjection, tensors.norm, b.perLayerNormed, T * layers, n, eps);
    this.add(step, b.perLayerNormed, b.perLayerInputs, T * width, T * width);
    this.scale(step, b.perLayerNormed, T * width, Math.fround(1 / Math.fround(Math.SQRT2)));
    // [T, layers, n] -> [layers, T, n]: row (layer, t) is row t * layers + layer of a [T * layers, n] f32 table.
    this.device.queue.writeBuffer(b.perLayerIds, 0, Int32Array.from({ length: layers * T }, (_, i) => (i % T) * layers + Math.floor(i / T)));
    step.dispatch(this.pipeline(getRowsShader(0)), [b.perLayerNormed, b.perLayerIds, b.perLayerInputs], [["u32", layers * T], ["u32", n], ["u32", 0], ["u32", layers * T]], grid(layers * T * n, 256));
  }

  /**
   * Gemma 4's per-layer embedding block on x [T, d]: x += post_norm(proj(gelu(inp_gate(x)) * this layer's per-layer
   * input)).
   */
  private perLayerInput(step: ReturnType<StepEncoder["begin"]>, perLayer: NonNullable<NonNullable<GpuLayer["gemma4"]>["perLayer"]>, index: number, T: number): void {
    const { buffers: b } = this;
    const d = this.config.hidden_size;
    const n = this.config.hidden_size_per_layer_input!;
    this.linear(step, this.linearInput(step, b.x, T, d), perLayer.inputGate, b.gate);
    step.dispatch(this.pipeline(SHADERS.geluMul), [b.gate, b.perLayerInputs], [["u32", T * n], ["u32", index * T * n]], grid(T * n, 256));
    this.linear(step, this.linearInput(step, b.gate, T, n), perLayer.projection, b.h);
    this.addNormed(step, b.h, perLayer.postNorm, T);
  }

  /** x[i] *= s for `count` values. */
  private scale(step: ReturnType<StepEncoder["begin"]>, x: GPUBuffer, count: number, s: number): void {
    step.dispatch(this.pipeline(SHADERS.scale), [x], [["u32", count], ["f32", s]], grid(count, 256));
  }

  /** The residual add of a block's output y [T, d], RMS-normed first when the layer has a post-norm (Gemma 3). */
  private addNormed(step: ReturnType<StepEncoder["begin"]>, y: GPUBuffer, postNorm: GPUBuffer | undefined, T: number): void {
    const { buffers: b, config } = this;
    const d = config.hidden_size;
    if (postNorm) this.rmsnorm(step, y, postNorm, b.postNormed, T, d, config.rms_norm_eps);
    this.add(step, b.x, postNorm ? b.postNormed : y, T * d, T * d);
  }

  private rmsnorm(step: ReturnType<StepEncoder["begin"]>, x: GPUBuffer, weight: GPUBuffer, y: GPUBuffer, rows: number, width: number, eps: number): void {
    step.dispatch(this.pipeline(SHADERS.rmsnorm), [x, weight, y], [["u32", width], ["f32", eps]], grid(rows, 1));
  }

  /** x[xOffset + i] += y[yOffset + i % period] for i < count. */
  private add(step: ReturnType<StepEncoder["begin"]>, x: GPUBuffer, y: GPUBuffer, count: number, period: number, xOffset = 0, yOffset = 0): void {
    step.dispatch(this.pipeline(SHADERS.add), [x, y], [["u32", count], ["u32", period], ["u32", xOffset], ["u32", yOffset]], grid(count, 256));
  }

  /** Activations feeding linear layers; quantized to Q8_0 at most once for all the Q8_0 weights that read them. */
  private linearInput(step: ReturnType<StepEncoder["begin"]>, buffer: GPUBuffer, rows: number, width: number) {
    let quantized = false;
    return {
      buffer, rows, width,
      quantized: () => {
        if (!quantized) {
          const blocks = (rows * width) / 32;
          step.dispatch(this.pipeline(SHADERS.quantize), [buffer, this.buffers.xQuants, this.buffers.xScales], [["u32", blocks]], grid(blocks, 64));
          quantized = true;
        }
      },
    };
  }

  /**
   * y = x W^T (+ bias) for every row of the input, into `out` from row `outRow`; the bias from value `biasOffset` of
   * its buffer (an expert's, in a tensor of every expert's).
   */
  private linear(step: ReturnType<StepEncoder["begin"]>, input: ReturnType<WebGpuModelRunner["linearInput"]>, weight: GpuWeight, out: GPUBuffer, bias?: GPUBuffer, biasOffset = 0, outRow = 0): void {
    const n = weight.shape[1]!;
    const plan = matmulPlan(weight, input.rows, this.subgroups, outRow);
    if (plan.quantized) input.quantized();
    const pipeline = this.pipeline(plan.shader);
    for (const { part, params, workgroups } of plan.parts) {
      const bindings = plan.quantized ? [this.buffers.xQuants, this.buffers.xScales, part.quants!, part.scales!, out] : [input.buffer, part.data!, out];
      step.dispatch(pipeline, bindings, params, workgroups);
    }
    if (bias) this.add(step, out, bias, input.rows * n, n, outRow * n, biasOffset);
  }
}

/** gpt-oss's expert activation constants (llama.cpp's LLM_FFN_SWIGLU_OAI_MOE), as the WebAssembly runner's. */
const SWIGLU_OAI_ALPHA = Math.fround(1.702);
const SWIGLU_OAI_LIMIT = 7;

/**
 * The rows of `ids` (each distinct token read once from the file) of a [width, vocab] tensor read by rows, as f32
 * [ids.length, width]: the values its get_rows kernel would give.
 */
function tokenRows(reader: TensorRowReader, ids: Int32Array, width: number): Float32Array {
  const rows = new Float32Array(ids.length * width);
  const raw = new Uint8Array(reader.rowBytes);
  const first = new Map<number, number>();
  ids.forEach((token, t) => {
    const seen = first.get(token);
    if (seen !== undefined) {
      rows.copyWithin(t * width, seen * width, (seen + 1) * width);
      return;
    }
    first.set(token, t);
    reader.readRow(token, raw);
    dequantize(reader.tensor.type, raw, width, rows.subarray(t * width, (t + 1) * width));
  });
  return rows;
}
