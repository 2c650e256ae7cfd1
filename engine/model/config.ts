// The model configuration, with Hugging Face config.json field names, built from either a config.json or GGUF metadata.
import type { GgufValue } from "./gguf/format.js";
import { ModelFileError } from "./errors.js";
import { positiveInteger, positiveNumber } from "./config-values.js";
import { NO_YARN, type YarnConstants, type YarnScaling, yarnConstants } from "../../kernels/rope-frequencies.js";
import { gemma4Config } from "./gemma4-config.js";

/** The architectures loom implements (one definition, small variants), by their GGUF names. */
export type Architecture = "llama" | "qwen2" | "qwen3" | "qwen3moe" | "gemma3" | "gemma4" | "gpt-oss" | "mistral3";

/** A layer's attention span, with config.json's names: the whole sequence, or a sliding window. */
export type LayerType = "full_attention" | "sliding_attention";

/** Llama 3 style RoPE frequency scaling, as in config.json `rope_scaling`. */
export interface Llama3RopeScaling {
  rope_type: "llama3";
  factor: number;
  low_freq_factor: number;
  high_freq_factor: number;
  original_max_position_embeddings: number;
}

/** One layer's attention shape (Gemma 4's differ by layer). */
export interface LayerAttentionShape {
  heads: number;
  kvHeads: number;
  headDim: number;
  /** Dimensions of each head that RoPE rotates. */
  rotaryDim: number;
}

/** A decoder-only transformer's shape and constants. Field names are config.json's. */
export interface ModelConfig {
  architecture: Architecture;
  hidden_size: number;
  intermediate_size: number;
  num_hidden_layers: number;
  num_attention_heads: number;
  num_key_value_heads: number;
  head_dim: number;
  vocab_size: number;
  max_position_embeddings: number;
  rms_norm_eps: number;
  rope_theta: number;
  /** Dimensions of each head that RoPE rotates (all of them for these architectures). */
  rotary_dim: number;
  rope_scaling: Llama3RopeScaling | null;
  tie_word_embeddings: boolean;
  /** Human-readable model name when the file has one. */
  name?: string;
  /** Gemma 3: the positions a sliding-window layer sees (its own included). */
  sliding_window?: number;
  /** Per layer, whether it attends over the sliding window; absent: every layer is full. */
  layer_types?: readonly LayerType[];
  /** Gemma 3: the RoPE base of the sliding-window layers (rope_theta is the full layers'). */
  rope_local_base_freq?: number;
  /** Gemma 3: linear RoPE scaling of the full-attention layers (their angles divided by this factor). */
  rope_linear_factor?: number;
  /** Gemma: queries are scaled by query_pre_attn_scalar^-1/2 (default: head_dim^-1/2, as every other model). */
  query_pre_attn_scalar?: number;
  /**
   * The feed-forward's gate activation (default "silu"); Gemma's is GELU with the tanh approximation; gpt-oss's
   * experts clamp gate and up and compute gate * sigmoid(1.702 gate) * (up + 1) (ggml's swiglu_oai).
   */
  hidden_activation?: "silu" | "gelu_pytorch_tanh" | "swiglu_oai";
  /** Gemma: the token embeddings are multiplied by this (an f32 sqrt(hidden_size)); default 1. */
  embedding_scale?: number;
  /** Mixture of experts (Qwen3-MoE): experts per layer; absent for dense models. */
  num_experts?: number;
  /** Experts each token is routed to (top-k of the router's softmax). */
  num_experts_per_tok?: number;
  /** Each expert's feed-forward width. */
  moe_intermediate_size?: number;
  /** Whether the top-k routing weights are renormalised to sum to 1 (Qwen3-MoE: yes). */
  norm_topk_prob?: boolean;
  /**
   * How routing weights are made (default "softmax": a softmax over every expert, then the top k; gpt-oss's
   * "softmax_weight": the top k logits, then a softmax over those k).
   */
  expert_gating?: "softmax" | "softmax_weight";
  /** YaRN RoPE scaling (rope.scaling.type yarn), applied to every layer as llama.cpp does. */
  rope_yarn?: YarnScaling;
  /**
   * Llama 4-style attention temperature (Mistral 3): queries at position p are multiplied by
   * 1 + scale * ln(floor(p / floorScale) + 1).
   */
  attention_temperature?: { scale: number; floorScale: number };
  /** The attention's score scale when the file sets one (`attention.scale`); default head_dim^-1/2. */
  attention_scale?: number;
  /**
   * Gemma 4: each layer's attention shape (sliding and full layers differ); absent: every layer has the global
   * fields' (which are then the widest, for buffers). Read through {@link layerAttention}.
   */
  layer_attention?: readonly LayerAttentionShape[];
  /** Gemma 4: each layer's dense feed-forward width (the double-wide MLP of E2B's shared-KV layers). */
  layer_intermediate_sizes?: readonly number[];
  /**
   * Gemma 4: the layer whose KV each layer attends over: itself, or for the shared-KV tail an earlier layer of the
   * same kind (such a layer computes no K/V and has no cache of its own). Read through {@link kvSourceLayer}.
   */
  kv_source_layers?: readonly number[];
  /** Gemma 4: rope_freqs.weight (proportional RoPE) applies to the full-attention layers only. */
  rope_freqs_full_only?: boolean;
  /** Gemma 4: values are RMS-normed (without a weight) before they are cached. */
  value_norm?: boolean;
  /** Gemma 4 (E2B/E4B): the width of each layer's per-layer embedding input; absent: none. */
  hidden_size_per_layer_input?: number;
  /** Gemma 4: logits become cap * tanh(logits / cap). */
  final_logit_softcapping?: number;
}

/** Layer `index`'s attention shape: its own (Gemma 4), else the model's. */
export function layerAttention(config: ModelConfig, index: number): LayerAttentionShape {
  return config.layer_attention?.[index]
    ?? { heads: config.num_attention_heads, kvHeads: config.num_key_value_heads, headDim: config.head_dim, rotaryDim: config.rotary_dim };
}

/** The layer whose KV layer `index` attends over (itself but for Gemma 4's shared-KV layers). */
export function kvSourceLayer(config: ModelConfig, index: number): number {
  return config.kv_source_layers?.[index] ?? index;
}

/** Values per position in layer `index`'s K (and V) cache: 0 for a layer that reads another layer's. */
export function layerKvWidth(config: ModelConfig, index: number): number {
  if (kvSourceLayer(config, index) !== index) return 0;
  const shape = layerAttention(config, index);
  return shape.kvHeads * shape.headDim;
}

/** Whether layer `index` attends over a sliding window (and how wide), or over the whole sequence (0). */
export function attentionWindow(config: ModelConfig, index: number): number {
  return config.layer_types?.[index] === "sliding_attention" ? config.sliding_window! : 0;
}

/**
 * Layer `index`'s RoPE as llama.cpp sets it: its base (Gemma 3's sliding-window layers have their own) and the
 * multiplier of every angle (linear scaling's f32 1 / factor on the full layers; 1 elsewhere).
 */
export function layerRope(config: ModelConfig, index: number): { base: number; freqScale: number; yarn: YarnConstants } {
  const local = attentionWindow(config, index) > 0;
  const base = local && config.rope_local_base_freq !== undefined ? config.rope_local_base_freq : config.rope_theta;
  if (config.rope_yarn) return { base, freqScale: Math.fround(1 / config.rope_yarn.factor), yarn: yarnConstants(config.rope_yarn, base, layerAttention(config, index).rotaryDim) };
  return { base, freqScale: !local && config.rope_linear_factor !== undefined ? Math.fround(1 / config.rope_linear_factor) : 1, yarn: NO_YARN };
}

/**
 * The multiplier of the queries at `position` under Mistral 3's attention temperature (1 without it), as llama.cpp's
 * llm_graph_input_attn_temp computes it (in double, stored as f32).
 */
export function attentionTemperature(config: ModelConfig, position: number): number {
  const temperature = config.attention_temperature;
  if (!temperature) return 1;
  return Math.fround(Math.log(Math.floor(Math.fround(Math.fround(position) / temperature.floorScale)) + 1) * temperature.scale + 1);
}

/**
 * Gemma's query multiplier, as llama.cpp computes it (1.0f / sqrtf(query_pre_attn_scalar), applied to the roped
 * queries, with a score scale of 1); undefined for models that scale scores by head_dim^-1/2.
 */
export function queryScale(config: ModelConfig): number | undefined {
  return config.query_pre_attn_scalar === undefined ? undefined : Math.fround(1 / Math.fround(Math.sqrt(config.query_pre_attn_scalar)));
}

const ARCHITECTURES: Record<string, Architecture> = {
  llama: "llama", LlamaForCausalLM: "llama",
  qwen2: "qwen2", Qwen2ForCausalLM: "qwen2",
  qwen3: "qwen3", Qwen3ForCausalLM: "qwen3",
};
/** Architectures loom reads from GGUF only (their Hugging Face checkpoints differ from the GGUF form, e.g. Gemma's norms). */
const GGUF_ARCHITECTURES: Record<string, Architecture> = {
  ...ARCHITECTURES, gemma3: "gemma3", gemma4: "gemma4", qwen3moe: "qwen3moe", "gpt-oss": "gpt-oss", mistral3: "mistral3",
};

/** Checks the relations between fields that the runtime relies on. */
function validate(path: string, config: ModelConfig): ModelConfig {
  if (config.num_attention_heads % config.num_key_value_heads !== 0) {
    throw new ModelFileError(path, `num_attention_heads ${config.num_attention_heads} is not a multiple of num_key_value_heads ${config.num_key_value_heads}`);
  }
  if (config.rotary_dim > config.head_dim || config.rotary_dim % 2 !== 0) {
    throw new ModelFileError(path, `rotary dimension ${config.rotary_dim} must be even and at most head_dim ${config.head_dim}`);
  }
  if (config.sliding_window !== undefined && config.sliding_window > config.max_position_embeddings) {
    throw new ModelFileError(path, `sliding window ${config.sliding_window} is larger than the context length ${config.max_position_embeddings}`);
  }
  return config;
}

function parseRopeScaling(path: string, value: unknown): Llama3RopeScaling | null {
  if (value === null || value === undefined) return null;
  const scaling = value as Record<string, unknown>;
  const type = scaling.rope_type ?? scaling.type;
  if (type === "default") return null;
  if (type !== "llama3") throw new ModelFileError(path, `rope_scaling type '${String(type)}' is not supported (only llama3)`);
  return {
    rope_type: "llama3",
    factor: positiveNumber(path, "rope_scaling.factor", scaling.factor),
    low_freq_factor: positiveNumber(path, "rope_scaling.low_freq_factor", scaling.low_freq_factor),
    high_freq_factor: positiveNumber(path, "rope_scaling.high_freq_factor", scaling.high_freq_factor),
    original_max_position_embeddings: positiveInteger(path, "rope_scaling.original_max_position_embeddings", scaling.original_max_position_embeddings),
  };
}

/** Builds the config from a parsed Hugging Face config.json. */
export function configFromHuggingFace(path: string, json: Record<string, unknown>): ModelConfig {
  const declared = (Array.isArray(json.architectures) ? json.architectures[0] : undefined) ?? json.model_type;
  const architecture = ARCHITECTURES[String(declared)] ?? ARCHITECTURES[String(json.model_type)];
  if (!architecture) {
    throw new ModelFileError(path, `architecture '${String(declared)}' is not supported (Llama, Qwen2 and Qwen3 families are)`);
  }
  const hidden = positiveInteger(path, "hidden_size", json.hidden_size);
  const heads = positiveInteger(path, "num_attention_heads", json.num_attention_heads);
  const headDim = json.head_dim === undefined || json.head_dim === null ? hidden / heads : positiveInteger(path, "head_dim", json.head_dim);
  if (!Number.isInteger(headDim)) throw new ModelFileError(path, `hidden_size ${hidden} is not divisible by num_attention_heads ${heads}`);
  const partialRotary = typeof json.partial_rotary_factor === "number" ? json.partial_rotary_factor : 1;
  return validate(path, {
    architecture,
    hidden_size: hidden,
    intermediate_size: positiveInteger(path, "intermediate_size", json.intermediate_size),
    num_hidden_layers: positiveInteger(path, "num_hidden_layers", json.num_hidden_layers),
    num_attention_heads: heads,
    num_key_value_heads: json.num_key_value_heads === undefined ? heads : positiveInteger(path, "num_key_value_heads", json.num_key_value_heads),
    head_dim: headDim,
    vocab_size: positiveInteger(path, "vocab_size", json.vocab_size),
    max_position_embeddings: positiveInteger(path, "max_position_embeddings", json.max_position_embeddings ?? 2048),
    rms_norm_eps: positiveNumber(path, "rms_norm_eps", json.rms_norm_eps ?? 1e-6),
    rope_theta: positiveNumber(path, "rope_theta", json.rope_theta ?? 10000),
    rotary_dim: Math.round(headDim * partialRotary),
    rope_scaling: parseRopeScaling(path, json.rope_scaling),
    tie_word_embeddings: json.tie_word_embeddings === true,
    name: typeof json._name_or_path === "string" ? json._name_or_path : undefined,
  });
}

/** Builds the config from GGUF metadata (`{arch}.*` keys), as llama.cpp reads them. */
export function configFromGguf(path: string, metadata: ReadonlyMap<string, GgufValue>, hasOutputTensor: boolean): ModelConfig {
  const arch = metadata.get("general.architecture");
  const architecture = typeof arch === "string" ? GGUF_ARCHITECTURES[arch] : undefined;
  if (!architecture) throw new ModelFileError(path, `architecture '${String(arch)}' is not supported (llama, qwen2, qwen3, qwen3moe, gemma3, gemma4, gpt-oss and mistral3 are)`);
  const key = (name: string) => metadata.get(`${arch}.${name}`);
  const tokens = metadata.get("tokenizer.ggml.tokens");
  const vocab = key("vocab_size") ?? (Array.isArray(tokens) ? tokens.length : undefined);
  const name = metadata.get("general.name");
  if (architecture === "gemma4") return gemma4Config(path, String(arch), key, vocab, hasOutputTensor, typeof name === "string" ? name : undefined);
  const hidden = positiveInteger(path, `${arch}.embedding_length`, key("embedding_length"));
  const heads = positiveInteger(path, `${arch}.attention.head_count`, key("attention.head_count"));
  const headDim = key("attention.key_length") === undefined ? hidden / heads : positiveInteger(path, `${arch}.attention.key_length`, key("attention.key_length"));
  if (!Number.isInteger(headDim)) throw new ModelFileError(path, `embedding_length ${hidden} is not divisible by head_count ${heads}`);
  const scalingType = key("rope.scaling.type");
  if (scalingType !== undefined && scalingType !== "none" && scalingType !== "yarn" && !(architecture === "gemma3" && scalingType === "linear")) {
    throw new ModelFileError(path, `${arch}.rope.scaling.type '${String(scalingType)}' is not supported (yarn is, and linear for gemma3)`);
  }
  const kvHeads = key("attention.head_count_kv");
  const layers = positiveInteger(path, `${arch}.block_count`, key("block_count"));
  const gemma = architecture === "gemma3" ? gemma3Fields(path, String(arch), key, layers, hidden, heads, headDim) : {};
  const experts = architecture === "qwen3moe" ? expertFields(path, String(arch), key) : {};
  const gptOss = architecture === "gpt-oss" ? gptOssFields(path, String(arch), key, layers) : {};
  const mistral = architecture === "mistral3" ? mistral3Fields(path, String(arch), key) : {};
  const contextLength = positiveInteger(path, `${arch}.context_length`, key("context_length") ?? 2048);
  const yarn = scalingType === "yarn" ? yarnFields(path, String(arch), key, contextLength) : undefined;
  const attentionScale = key("attention.scale");
  return validate(path, {
    architecture,
    hidden_size: hidden,
    intermediate_size: positiveInteger(path, `${arch}.feed_forward_length`, key("feed_forward_length")),
    num_hidden_layers: layers,
    num_attention_heads: heads,
    num_key_value_heads: kvHeads === undefined ? heads : positiveInteger(path, `${arch}.attention.head_count_kv`, kvHeads),
    head_dim: headDim,
    vocab_size: positiveInteger(path, "vocabulary size", vocab),
    max_position_embeddings: contextLength,
    rms_norm_eps: positiveNumber(path, `${arch}.attention.layer_norm_rms_epsilon`, key("attention.layer_norm_rms_epsilon")),
    rope_theta: positiveNumber(path, `${arch}.rope.freq_base`, key("rope.freq_base") ?? 10000),
    rotary_dim: key("rope.dimension_count") === undefined ? headDim : positiveInteger(path, `${arch}.rope.dimension_count`, key("rope.dimension_count")),
    // GGUF carries llama3 scaling as the precomputed rope_freqs.weight tensor instead.
    rope_scaling: null,
    tie_word_embeddings: !hasOutputTensor,
    name: typeof name === "string" ? name : undefined,
    ...gemma,
    ...experts,
    ...gptOss,
    ...mistral,
    ...(yarn ? { rope_yarn: yarn } : {}),
    ...(attentionScale !== undefined && attentionScale !== 0 ? { attention_scale: positiveNumber(path, `${arch}.attention.scale`, attentionScale) } : {}),
  });
}

/**
 * YaRN's GGUF keys as llama.cpp reads them: rope.scaling.factor, original_context_length (default: the context
 * length), yarn_beta_fast / yarn_beta_slow (defaults 32 and 1), yarn_log_multiplier and attn_factor. An explicit
 * yarn_ext_factor other than 1 is refused (llama.cpp derives 1 from the type).
 */
function yarnFields(path: string, arch: string, key: (name: string) => GgufValue | undefined, contextLength: number): YarnScaling {
  const ext = key("rope.scaling.yarn_ext_factor");
  if (ext !== undefined && ext !== 1 && ext !== -1) throw new ModelFileError(path, `${arch}.rope.scaling.yarn_ext_factor ${String(ext)} is not supported (only 1)`);
  const factor = positiveNumber(path, `${arch}.rope.scaling.factor`, key("rope.scaling.factor"));
  if (factor <= 1) throw new ModelFileError(path, `${arch}.rope.scaling.factor must be above 1 for yarn, found ${factor}`);
  const logMultiplier = key("rope.scaling.yarn_log_multiplier") ?? 0;
  if (typeof logMultiplier !== "number" || !Number.isFinite(logMultiplier) || logMultiplier < 0) {
    throw new ModelFileError(path, `${arch}.rope.scaling.yarn_log_multiplier must be a non-negative number, found ${JSON.stringify(logMultiplier)}`);
  }
  return {
    factor,
    originalContext: positiveInteger(path, `${arch}.rope.scaling.original_context_length`, key("rope.scaling.original_context_length") ?? contextLength),
    betaFast: positiveNumber(path, `${arch}.rope.scaling.yarn_beta_fast`, key("rope.scaling.yarn_beta_fast") ?? 32),
    betaSlow: positiveNumber(path, `${arch}.rope.scaling.yarn_beta_slow`, key("rope.scaling.yarn_beta_slow") ?? 1),
    logMultiplier,
    attnFactor: positiveNumber(path, `${arch}.rope.scaling.attn_factor`, key("rope.scaling.attn_factor") ?? 1),
  };
}

/**
 * gpt-oss's fields, as llama.cpp's openai-moe loader reads them: its experts (routing weights a softmax over the
 * top-k logits, not renormalised; swiglu_oai), the sliding window on the layers of a period-2 pattern (even layers,
 * unless `attention.sliding_window_pattern` says otherwise), and the window layers' RoPE base (default: the same).
 */
function gptOssFields(path: string, arch: string, key: (name: string) => GgufValue | undefined, layers: number): Partial<ModelConfig> {
  const windowed = slidingLayers(path, arch, key, layers, 2);
  return {
    ...expertFields(path, arch, key),
    norm_topk_prob: false,
    expert_gating: "softmax_weight",
    hidden_activation: "swiglu_oai",
    sliding_window: positiveInteger(path, `${arch}.attention.sliding_window`, key("attention.sliding_window")),
    layer_types: windowed.map((flag) => (flag ? "sliding_attention" : "full_attention")),
    ...(key("rope.freq_base_swa") !== undefined ? { rope_local_base_freq: positiveNumber(path, `${arch}.rope.freq_base_swa`, key("rope.freq_base_swa")) } : {}),
  };
}

/**
 * Mistral 3's (Ministral 3's) fields, as llama.cpp's mistral3 loader reads them: the Llama 4-style attention
 * temperature (`attention.temperature_scale`, its floor scale the YaRN original context), when set.
 */
function mistral3Fields(path: string, arch: string, key: (name: string) => GgufValue | undefined): Partial<ModelConfig> {
  const scale = key("attention.temperature_scale");
  if (scale === undefined || scale === 0) return {};
  if (typeof scale !== "number" || !Number.isFinite(scale)) throw new ModelFileError(path, `${arch}.attention.temperature_scale must be a number, found ${JSON.stringify(scale)}`);
  const floorScale = key("rope.scaling.original_context_length") ?? key("context_length");
  return { attention_temperature: { scale, floorScale: positiveInteger(path, `${arch}.rope.scaling.original_context_length`, floorScale) } };
}

/**
 * Which layers use the sliding window, as llama.cpp's load_swa_pattern reads `attention.sliding_window_pattern`:
 * per-layer flags, or a period n (every n-th layer full, the others windowed; 0: all windowed), default `period`.
 */
function slidingLayers(path: string, arch: string, key: (name: string) => GgufValue | undefined, layers: number, defaultPeriod: number): boolean[] {
  const pattern = key("attention.sliding_window_pattern");
  if (Array.isArray(pattern)) {
    if (pattern.length !== layers || !pattern.every((flag) => typeof flag === "boolean")) {
      throw new ModelFileError(path, `${arch}.attention.sliding_window_pattern must hold one boolean per layer (${layers}), found ${JSON.stringify(pattern)}`);
    }
    return pattern as boolean[];
  }
  const period = pattern === undefined ? defaultPeriod : pattern;
  if (typeof period !== "number" || !Number.isSafeInteger(period) || period < 0) {
    throw new ModelFileError(path, `${arch}.attention.sliding_window_pattern must be a layer period or per-layer flags, found ${JSON.stringify(period)}`);
  }
  return Array.from({ length: layers }, (_, il) => period === 0 || il % period < period - 1);
}

/** A mixture of experts' fields from its GGUF keys, as llama.cpp's qwen3moe loader reads them (weights renormalised). */
function expertFields(path: string, arch: string, key: (name: string) => GgufValue | undefined): Partial<ModelConfig> {
  const count = positiveInteger(path, `${arch}.expert_count`, key("expert_count"));
  const used = positiveInteger(path, `${arch}.expert_used_count`, key("expert_used_count"));
  if (used > count) throw new ModelFileError(path, `${arch}.expert_used_count ${used} is more than ${arch}.expert_count ${count}`);
  const scale = key("expert_weights_scale");
  if (scale !== undefined && scale !== 0 && scale !== 1) throw new ModelFileError(path, `${arch}.expert_weights_scale ${String(scale)} is not supported`);
  return {
    num_experts: count,
    num_experts_per_tok: used,
    moe_intermediate_size: positiveInteger(path, `${arch}.expert_feed_forward_length`, key("expert_feed_forward_length")),
    norm_topk_prob: true,
  };
}

/**
 * Gemma 3's fields from its GGUF keys, as llama.cpp's gemma3 loader reads them: the sliding window, which layers use
 * it (`attention.sliding_window_pattern`: per-layer flags or a period n, where every n-th layer is full; default 6),
 * the local layers' RoPE base (default 10000), the full layers' linear RoPE scaling (`rope.scaling.factor`), and the
 * query scale (27B: hidden / heads, else head_dim).
 */
function gemma3Fields(path: string, arch: string, key: (name: string) => GgufValue | undefined, layers: number, hidden: number, heads: number, headDim: number): Partial<ModelConfig> {
  const linear = key("rope.scaling.type") === "linear" && key("rope.scaling.factor") !== undefined;
  const factor = linear ? positiveNumber(path, `${arch}.rope.scaling.factor`, key("rope.scaling.factor")) : 1;
  const softcap = key("final_logit_softcapping");
  if (softcap !== undefined && softcap !== 0) throw new ModelFileError(path, `${arch}.final_logit_softcapping ${String(softcap)} is not supported`);
  const fields: Partial<ModelConfig> = {
    ...(factor !== 1 ? { rope_linear_factor: factor } : {}),
    hidden_activation: "gelu_pytorch_tanh",
    embedding_scale: Math.fround(Math.sqrt(hidden)),
    query_pre_attn_scalar: layers === 62 ? hidden / heads : headDim,
  };
  const window = key("attention.sliding_window");
  if (window === undefined || window === 0) return fields;
  const slidingWindow = positiveInteger(path, `${arch}.attention.sliding_window`, window);
  const sliding = slidingLayers(path, arch, key, layers, 6);
  return {
    ...fields,
    sliding_window: slidingWindow,
    layer_types: sliding.map((flag) => (flag ? "sliding_attention" : "full_attention")),
    rope_local_base_freq: positiveNumber(path, `${arch}.rope.freq_base_swa`, key("rope.freq_base_swa") ?? 10000),
  };
}
