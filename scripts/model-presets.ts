// Shapes of public models (and tiny test variants) for the random-weight generator, as config.json fields.
// The full-size presets copy the published config.json of each model; only the weights are random.

/** The tokenizers the generator can attach (files under ../shared or node_modules; see fixture-paths.ts). */
export type TokenizerName = "smollm2" | "qwen3" | "llama2-32k";

/** Llama 3 RoPE scaling as config.json writes it. */
export interface Llama3RopeScalingConfig {
  rope_type: "llama3";
  factor: number;
  low_freq_factor: number;
  high_freq_factor: number;
  original_max_position_embeddings: number;
}

/** A Hugging Face config.json for the architectures loom runs (field names and values as transformers writes them). */
export interface HuggingFaceConfig {
  architectures: readonly ["LlamaForCausalLM"] | readonly ["Qwen2ForCausalLM"] | readonly ["Qwen3ForCausalLM"];
  model_type: "llama" | "qwen2" | "qwen3";
  hidden_size: number;
  intermediate_size: number;
  num_hidden_layers: number;
  num_attention_heads: number;
  num_key_value_heads: number;
  /** Present when heads * head_dim differs from hidden_size, or when the published config spells it out. */
  head_dim?: number;
  vocab_size: number;
  max_position_embeddings: number;
  rms_norm_eps: number;
  rope_theta: number;
  rope_scaling?: Llama3RopeScalingConfig | null;
  tie_word_embeddings: boolean;
  /** Llama/Qwen3: q/k/v/o biases (false in every preset); Qwen2 always has q/k/v biases and omits this field. */
  attention_bias?: boolean;
  hidden_act: "silu";
  bos_token_id: number;
  eos_token_id: number;
  [field: string]: unknown;
}

/** A model shape plus the tokenizer that goes with it. */
export interface ModelPreset {
  name: string;
  /** What the preset copies and where it departs from the public model. */
  description: string;
  config: HuggingFaceConfig;
  tokenizer: TokenizerName;
  /**
   * Pad the tokenizer's vocabulary to `config.vocab_size` with reserved special tokens
   * (`<|reserved_special_token_N|>`), as Llama 3's own vocabulary does. Without it, ids past the tokenizer's
   * last token become `[PADn]` placeholders, as llama.cpp's converter writes them for Qwen.
   */
  padWithReservedTokens?: boolean;
  /** True for the shapes of real public models (slow to write); false for the small test variants. */
  fullSize: boolean;
}

const LLAMA_COMMON = {
  architectures: ["LlamaForCausalLM"],
  model_type: "llama",
  attention_bias: false,
  attention_dropout: 0.0,
  hidden_act: "silu",
  initializer_range: 0.02,
  mlp_bias: false,
  pretraining_tp: 1,
  use_cache: true,
} as const;

const QWEN2_COMMON = {
  architectures: ["Qwen2ForCausalLM"],
  model_type: "qwen2",
  attention_dropout: 0.0,
  hidden_act: "silu",
  initializer_range: 0.02,
  use_cache: true,
  use_sliding_window: false,
} as const;

const QWEN3_COMMON = {
  architectures: ["Qwen3ForCausalLM"],
  model_type: "qwen3",
  attention_bias: false,
  attention_dropout: 0.0,
  hidden_act: "silu",
  initializer_range: 0.02,
  rope_scaling: null,
  sliding_window: null,
  use_cache: true,
  use_sliding_window: false,
} as const;

/** Llama 3.2's RoPE scaling (also used by tiny-llama3). */
const LLAMA3_ROPE_SCALING: Llama3RopeScalingConfig = {
  rope_type: "llama3",
  factor: 32.0,
  low_freq_factor: 1.0,
  high_freq_factor: 4.0,
  original_max_position_embeddings: 8192,
};

const SMOLLM2_IDS = { bos_token_id: 1, eos_token_id: 2 }; // <|im_start|>, <|im_end|>
const QWEN_IDS = { bos_token_id: 151643, eos_token_id: 151645 }; // <|endoftext|>, <|im_end|>
const LLAMA2_IDS = { bos_token_id: 1, eos_token_id: 2 }; // <s>, </s>

/** Every preset, by name. */
export const MODEL_PRESETS: Readonly<Record<string, ModelPreset>> = {
  "smollm2-135m": {
    name: "smollm2-135m",
    description: "SmolLM2-135M-Instruct (HuggingFaceTB): Llama architecture, 30 layers, hidden 576, 9 heads / 3 KV heads, tied embeddings; its own tokenizer and ChatML template.",
    config: {
      ...LLAMA_COMMON, ...SMOLLM2_IDS,
      hidden_size: 576, intermediate_size: 1536, num_hidden_layers: 30, num_attention_heads: 9, num_key_value_heads: 3,
      vocab_size: 49152, max_position_embeddings: 8192, rms_norm_eps: 1e-5, rope_theta: 100000, rope_scaling: null,
      tie_word_embeddings: true, pad_token_id: 2,
    },
    tokenizer: "smollm2",
    fullSize: true,
  },
  "qwen3-0.6b": {
    name: "qwen3-0.6b",
    description: "Qwen3-0.6B: 28 layers, hidden 1024, 16 heads / 8 KV heads of head_dim 128 (16*128 != 1024), q_norm/k_norm, tied embeddings; Qwen3 tokenizer and thinking chat template.",
    config: {
      ...QWEN3_COMMON, ...QWEN_IDS,
      hidden_size: 1024, intermediate_size: 3072, num_hidden_layers: 28, num_attention_heads: 16, num_key_value_heads: 8, head_dim: 128,
      vocab_size: 151936, max_position_embeddings: 40960, rms_norm_eps: 1e-6, rope_theta: 1000000,
      tie_word_embeddings: true, max_window_layers: 28,
    },
    tokenizer: "qwen3",
    fullSize: true,
  },
  "llama-3.2-1b": {
    name: "llama-3.2-1b",
    description:
      "Llama-3.2-1B: 16 layers, hidden 2048, 32 heads / 8 KV heads, llama3 RoPE scaling (factor 32), tied embeddings. " +
      "No Llama 3 tokenizer is available here, so it carries the SmolLM2 tokenizer (and ChatML template) padded to 128256 " +
      "tokens with <|reserved_special_token_N|> entries; bos/eos are SmolLM2's ids 1 and 2, not Llama 3's 128000/128001.",
    config: {
      ...LLAMA_COMMON, ...SMOLLM2_IDS,
      hidden_size: 2048, intermediate_size: 8192, num_hidden_layers: 16, num_attention_heads: 32, num_key_value_heads: 8, head_dim: 64,
      vocab_size: 128256, max_position_embeddings: 131072, rms_norm_eps: 1e-5, rope_theta: 500000, rope_scaling: LLAMA3_ROPE_SCALING,
      tie_word_embeddings: true,
    },
    tokenizer: "smollm2",
    padWithReservedTokens: true,
    fullSize: true,
  },
  "qwen2.5-0.5b": {
    name: "qwen2.5-0.5b",
    description:
      "Qwen2.5-0.5B-Instruct: 24 layers, hidden 896, 14 heads / 2 KV heads, q/k/v biases, tied embeddings. " +
      "Carries the Qwen3 tokenizer (same byte-level BPE and ids up to 151664, plus Qwen3's extra specials) and Qwen3's chat template.",
    config: {
      ...QWEN2_COMMON, ...QWEN_IDS,
      hidden_size: 896, intermediate_size: 4864, num_hidden_layers: 24, num_attention_heads: 14, num_key_value_heads: 2,
      vocab_size: 151936, max_position_embeddings: 32768, rms_norm_eps: 1e-6, rope_theta: 1000000,
      tie_word_embeddings: true, sliding_window: 32768, max_window_layers: 21,
    },
    tokenizer: "qwen3",
    fullSize: true,
  },
  "llama-2-7b": {
    name: "llama-2-7b",
    description:
      "Llama-2-7B (meta-llama): 32 layers, hidden 4096, 32 heads with as many KV heads (no GQA), intermediate 11008, untied output, " +
      "the 32000-token Llama 2 SentencePiece vocabulary. About 4.1 GB at Q4_K_M and 7.2 GB at Q8_0: more than one 4 GiB WebAssembly memory.",
    config: {
      ...LLAMA_COMMON, ...LLAMA2_IDS,
      hidden_size: 4096, intermediate_size: 11008, num_hidden_layers: 32, num_attention_heads: 32, num_key_value_heads: 32,
      vocab_size: 32000, max_position_embeddings: 4096, rms_norm_eps: 1e-5, rope_theta: 10000, rope_scaling: null,
      tie_word_embeddings: false,
    },
    tokenizer: "llama2-32k",
    fullSize: true,
  },
  "tiny-llama": {
    name: "tiny-llama",
    description: "Test model: Llama architecture, 2 layers, hidden 128, 4 heads / 2 KV heads (head_dim 32), tied embeddings, SmolLM2 tokenizer (49152).",
    config: {
      ...LLAMA_COMMON, ...SMOLLM2_IDS,
      hidden_size: 128, intermediate_size: 352, num_hidden_layers: 2, num_attention_heads: 4, num_key_value_heads: 2,
      vocab_size: 49152, max_position_embeddings: 2048, rms_norm_eps: 1e-5, rope_theta: 10000, rope_scaling: null,
      tie_word_embeddings: true,
    },
    tokenizer: "smollm2",
    fullSize: false,
  },
  "tiny-llama3": {
    name: "tiny-llama3",
    description:
      "Test model: Llama 3 style, 2 layers, hidden 64, 4 heads / 2 KV heads (head_dim 16), rope_theta 500000 with llama3 RoPE scaling " +
      "(head_dim 16 puts frequencies in all three bands: unscaled, smoothed and divided by the factor), tied embeddings, " +
      "SmolLM2 tokenizer padded to 128256 with reserved special tokens, as llama-3.2-1b.",
    config: {
      ...LLAMA_COMMON, ...SMOLLM2_IDS,
      hidden_size: 64, intermediate_size: 192, num_hidden_layers: 2, num_attention_heads: 4, num_key_value_heads: 2, head_dim: 16,
      vocab_size: 128256, max_position_embeddings: 131072, rms_norm_eps: 1e-5, rope_theta: 500000, rope_scaling: LLAMA3_ROPE_SCALING,
      tie_word_embeddings: true,
    },
    tokenizer: "smollm2",
    padWithReservedTokens: true,
    fullSize: false,
  },
  "tiny-llama2": {
    name: "tiny-llama2",
    description: "Test model: Llama 2 style, 3 layers, hidden 128, 4 heads / 2 KV heads, untied output.weight, the 32000-token Llama 2 SentencePiece vocabulary.",
    config: {
      ...LLAMA_COMMON, ...LLAMA2_IDS,
      hidden_size: 128, intermediate_size: 352, num_hidden_layers: 3, num_attention_heads: 4, num_key_value_heads: 2,
      vocab_size: 32000, max_position_embeddings: 4096, rms_norm_eps: 1e-5, rope_theta: 10000, rope_scaling: null,
      tie_word_embeddings: false,
    },
    tokenizer: "llama2-32k",
    fullSize: false,
  },
  "tiny-qwen2": {
    name: "tiny-qwen2",
    description: "Test model: Qwen2 architecture with q/k/v biases, 2 layers, hidden 64, 4 heads / 2 KV heads, tied embeddings, Qwen3 tokenizer (vocab 151936).",
    config: {
      ...QWEN2_COMMON, ...QWEN_IDS,
      hidden_size: 64, intermediate_size: 224, num_hidden_layers: 2, num_attention_heads: 4, num_key_value_heads: 2,
      vocab_size: 151936, max_position_embeddings: 32768, rms_norm_eps: 1e-6, rope_theta: 1000000,
      tie_word_embeddings: true, sliding_window: 32768, max_window_layers: 2,
    },
    tokenizer: "qwen3",
    fullSize: false,
  },
  "tiny-qwen3": {
    name: "tiny-qwen3",
    description: "Test model: Qwen3 architecture, 2 layers, hidden 64, 4 heads / 2 KV heads of head_dim 32 (4*32 != 64), q_norm/k_norm, tied embeddings, Qwen3 tokenizer.",
    config: {
      ...QWEN3_COMMON, ...QWEN_IDS,
      hidden_size: 64, intermediate_size: 192, num_hidden_layers: 2, num_attention_heads: 4, num_key_value_heads: 2, head_dim: 32,
      vocab_size: 151936, max_position_embeddings: 40960, rms_norm_eps: 1e-6, rope_theta: 1000000,
      tie_word_embeddings: true, max_window_layers: 2,
    },
    tokenizer: "qwen3",
    fullSize: false,
  },
  "tiny-kquant": {
    name: "tiny-kquant",
    description:
      "Test model for K-quants: Llama architecture, 2 layers, hidden 256, 4 heads / 2 KV heads of head_dim 64, intermediate 512, " +
      "so every weight row length is a multiple of 256 and the q4_k_m mix applies with no fallback; tied embeddings, Llama 2 SentencePiece vocabulary.",
    config: {
      ...LLAMA_COMMON, ...LLAMA2_IDS,
      hidden_size: 256, intermediate_size: 512, num_hidden_layers: 2, num_attention_heads: 4, num_key_value_heads: 2,
      vocab_size: 32000, max_position_embeddings: 4096, rms_norm_eps: 1e-5, rope_theta: 10000, rope_scaling: null,
      tie_word_embeddings: true,
    },
    tokenizer: "llama2-32k",
    fullSize: false,
  },
};

/** Names of all presets. */
export const PRESET_NAMES: readonly string[] = Object.keys(MODEL_PRESETS);

/** Names of the small test presets. */
export const TINY_PRESET_NAMES: readonly string[] = PRESET_NAMES.filter((name) => !MODEL_PRESETS[name].fullSize);

/** The preset called `name`; throws listing the valid names otherwise. */
export function getPreset(name: string): ModelPreset {
  const preset = Object.prototype.hasOwnProperty.call(MODEL_PRESETS, name) ? MODEL_PRESETS[name] : undefined;
  if (!preset) throw new RangeError(`unknown model preset '${name}'; choose one of: ${PRESET_NAMES.join(", ")}`);
  return preset;
}

/** head_dim of a config: the explicit field, else hidden_size / num_attention_heads. */
export function headDimOf(config: HuggingFaceConfig): number {
  return config.head_dim ?? config.hidden_size / config.num_attention_heads;
}
