// The model configuration, with Hugging Face config.json field names, built from either a config.json or GGUF metadata.
import type { GgufValue } from "./gguf/format.js";
import { ModelFileError } from "./errors.js";

/** The architectures loom implements (one definition, small variants). */
export type Architecture = "llama" | "qwen2" | "qwen3";

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
}

const ARCHITECTURES: Record<string, Architecture> = {
  llama: "llama", LlamaForCausalLM: "llama",
  qwen2: "qwen2", Qwen2ForCausalLM: "qwen2",
  qwen3: "qwen3", Qwen3ForCausalLM: "qwen3",
};

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
  const architecture = typeof arch === "string" ? ARCHITECTURES[arch] : undefined;
  if (!architecture) throw new ModelFileError(path, `architecture '${String(arch)}' is not supported (llama, qwen2 and qwen3 are)`);
  const key = (name: string) => metadata.get(`${arch}.${name}`);
  const hidden = positiveInteger(path, `${arch}.embedding_length`, key("embedding_length"));
  const heads = positiveInteger(path, `${arch}.attention.head_count`, key("attention.head_count"));
  const headDim = key("attention.key_length") === undefined ? hidden / heads : positiveInteger(path, `${arch}.attention.key_length`, key("attention.key_length"));
  if (!Number.isInteger(headDim)) throw new ModelFileError(path, `embedding_length ${hidden} is not divisible by head_count ${heads}`);
  const tokens = metadata.get("tokenizer.ggml.tokens");
  const vocab = key("vocab_size") ?? (Array.isArray(tokens) ? tokens.length : undefined);
  const scalingType = key("rope.scaling.type");
  if (scalingType !== undefined && scalingType !== "none") {
    throw new ModelFileError(path, `${arch}.rope.scaling.type '${String(scalingType)}' is not supported`);
  }
  const kvHeads = key("attention.head_count_kv");
  const name = metadata.get("general.name");
  return validate(path, {
    architecture,
    hidden_size: hidden,
    intermediate_size: positiveInteger(path, `${arch}.feed_forward_length`, key("feed_forward_length")),
    num_hidden_layers: positiveInteger(path, `${arch}.block_count`, key("block_count")),
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
  });
}
