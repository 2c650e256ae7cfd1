// The model configuration, with Hugging Face config.json field names, built from either a config.json or GGUF metadata.
import type { GgufValue } from "./gguf/format.js";
import { ModelFileError } from "./errors.js";

/** The architectures loom implements (one definition, small variants). */
export type Architecture = "llama" | "qwen2" | "qwen3" | "qwen3moe" | "gemma3";

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
  /** The feed-forward's gate activation (default "silu"); Gemma's is GELU with the tanh approximation. */
  hidden_activation?: "silu" | "gelu_pytorch_tanh";
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
}

/** Whether layer `index` attends over a sliding window (and how wide), or over the whole sequence (0). */
export function attentionWindow(config: ModelConfig, index: number): number {
  return config.layer_types?.[index] === "sliding_attention" ? config.sliding_window! : 0;
}

/**
 * Layer `index`'s RoPE as llama.cpp sets it: its base (Gemma 3's sliding-window layers have their own) and the
 * multiplier of every angle (linear scaling's f32 1 / factor on the full layers; 1 elsewhere).
 */
export function layerRope(config: ModelConfig, index: number): { base: number; freqScale: number } {
  const local = attentionWindow(config, index) > 0;
  return {
    base: local && config.rope_local_base_freq !== undefined ? config.rope_local_base_freq : config.rope_theta,
    freqScale: !local && config.rope_linear_factor !== undefined ? Math.fround(1 / config.rope_linear_factor) : 1,
  };
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
const GGUF_ARCHITECTURES: Record<string, Architecture> = { ...ARCHITECTURES, gemma3: "gemma3", qwen3moe: "qwen3moe" };

function positiveInteger(path: string, field: string, value: unknown): number {
  if (typeof value !== "number" || !Number.isSafeInteger(value) || value <= 0) {
    throw new ModelFileError(path, `${field} must be a positive integer, found ${JSON.stringify(value)}`);
  }
  return value;
}

function positiveNumber(path: string, field: string, value: unknown): number {
  if (typeof value !== "number" || !Number.isFinite(value) || value <= 0) {
    throw new ModelFileError(path, `${field} must be a positive number, found ${JSON.stringify(value)}`);
  }
  return value;
}

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
  if (!architecture) throw new ModelFileError(path, `architecture '${String(arch)}' is not supported (llama, qwen2, qwen3, qwen3moe and gemma3 are)`);
  const key = (name: string) => metadata.get(`${arch}.${name}`);
  const hidden = positiveInteger(path, `${arch}.embedding_length`, key("embedding_length"));
  const heads = positiveInteger(path, `${arch}.attention.head_count`, key("attention.head_count"));
  const headDim = key("attention.key_length") === undefined ? hidden / heads : positiveInteger(path, `${arch}.attention.key_length`, key("attention.key_length"));
  if (!Number.isInteger(headDim)) throw new ModelFileError(path, `embedding_length ${hidden} is not divisible by head_count ${heads}`);
  const tokens = metadata.get("tokenizer.ggml.tokens");
  const vocab = key("vocab_size") ?? (Array.isArray(tokens) ? tokens.length : undefined);
  const scalingType = key("rope.scaling.type");
  if (scalingType !== undefined && scalingType !== "none" && !(architecture === "gemma3" && scalingType === "linear")) {
    throw new ModelFileError(path, `${arch}.rope.scaling.type '${String(scalingType)}' is not supported`);
  }
  const kvHeads = key("attention.head_count_kv");
  const name = metadata.get("general.name");
  const layers = positiveInteger(path, `${arch}.block_count`, key("block_count"));
  const gemma = architecture === "gemma3" ? gemma3Fields(path, String(arch), key, layers, hidden, heads, headDim) : {};
  const experts = architecture === "qwen3moe" ? expertFields(path, String(arch), key) : {};
  return validate(path, {
    architecture,
    hidden_size: hidden,
    intermediate_size: positiveInteger(path, `${arch}.feed_forward_length`, key("feed_forward_length")),
    num_hidden_layers: layers,
    num_attention_heads: heads,
    num_key_value_heads: kvHeads === undefined ? heads : positiveInteger(path, `${arch}.attention.head_count_kv`, kvHeads),
    head_dim: headDim,
    vocab_size: positiveInteger(path, "vocabulary size", vocab),
    max_position_embeddings: positiveInteger(path, `${arch}.context_length`, key("context_length") ?? 2048),
    rms_norm_eps: positiveNumber(path, `${arch}.attention.layer_norm_rms_epsilon`, key("attention.layer_norm_rms_epsilon")),
    rope_theta: positiveNumber(path, `${arch}.rope.freq_base`, key("rope.freq_base") ?? 10000),
    rotary_dim: key("rope.dimension_count") === undefined ? headDim : positiveInteger(path, `${arch}.rope.dimension_count`, key("rope.dimension_count")),
    // GGUF carries llama3 scaling as the precomputed rope_freqs.weight tensor instead.
    rope_scaling: null,
    tie_word_embeddings: !hasOutputTensor,
    name: typeof name === "string" ? name : undefined,
    ...gemma,
    ...experts,
  });
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
  const pattern = key("attention.sliding_window_pattern");
  let sliding: boolean[];
  if (Array.isArray(pattern)) {
    if (pattern.length !== layers || !pattern.every((flag) => typeof flag === "boolean")) {
      throw new ModelFileError(path, `${arch}.attention.sliding_window_pattern must hold one boolean per layer (${layers}), found ${JSON.stringify(pattern)}`);
    }
    sliding = pattern as boolean[];
  } else {
    const period = pattern === undefined ? 6 : pattern;
    if (typeof period !== "number" || !Number.isSafeInteger(period) || period < 0) {
      throw new ModelFileError(path, `${arch}.attention.sliding_window_pattern must be a layer period or per-layer flags, found ${JSON.stringify(period)}`);
    }
    sliding = Array.from({ length: layers }, (_, il) => period === 0 || il % period < period - 1);
  }
  return {
    ...fields,
    sliding_window: slidingWindow,
    layer_types: sliding.map((flag) => (flag ? "sliding_attention" : "full_attention")),
    rope_local_base_freq: positiveNumber(path, `${arch}.rope.freq_base_swa`, key("rope.freq_base_swa") ?? 10000),
  };
}
