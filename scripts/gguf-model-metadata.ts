// The GGUF metadata llama.cpp reads for a llama / qwen2 / qwen3 / qwen3moe / gemma3 / gpt-oss / mistral3 model, as
// convert_hf_to_gguf.py writes it.
import { gguf, type GgufTypedValue } from "../engine/model/gguf/writer.js";
import {
  type Gemma4Fields, type HuggingFaceConfig, type ModelPreset, type YarnRopeScalingConfig, ggufArchitectureOf, headDimOf, isGemma3, isGemma4, isGptOss,
  isMinistral3, isQwen3Moe,
} from "./model-presets.js";
import { gemma4FeedForwardLengths } from "./gemma4-tensors.js";
import { GGUF_FILE_TYPE, type ModelDtype } from "./model-dtypes.js";

/** Identifies the generator run in the file (keys llama.cpp ignores). */
export interface GeneratorStamp {
  version: number;
  seed: number;
}

/**
 * The general.* and {arch}.* keys for `preset` written as `dtype` (tokenizer keys are added separately).
 * Key lengths are written when config.json has head_dim, as the converter does.
 */
export function ggufArchitectureMetadata(preset: ModelPreset, dtype: ModelDtype, stamp: GeneratorStamp): Array<[string, GgufTypedValue]> {
  const config = preset.config;
  const arch = ggufArchitectureOf(config);
  const headDim = headDimOf(config);
  const entries: Array<[string, GgufTypedValue]> = [
    ["general.architecture", gguf.string(arch)],
    ["general.type", gguf.string("model")],
    ["general.name", gguf.string(`${preset.name} (random weights)`)],
    ["general.quantization_version", gguf.u32(2)],
    ["general.file_type", gguf.u32(GGUF_FILE_TYPE[dtype])],
    ["loom.generator.preset", gguf.string(preset.name)],
    ["loom.generator.version", gguf.u32(stamp.version)],
    ["loom.generator.seed", gguf.u32(stamp.seed)],
  ];
  if (isGemma3(config)) return [...entries, ...gemma3Keys(preset)];
  if (isGemma4(config)) return [...entries, ...gemma4Keys(preset.name, config)];
  if (isQwen3Moe(config)) return [...entries, ...qwen3MoeKeys(preset)];
  if (isGptOss(config)) return [...entries, ...gptOssKeys(preset)];
  if (isMinistral3(config)) return [...entries, ...mistral3Keys(preset)];
  entries.push(
    [`${arch}.vocab_size`, gguf.u32(config.vocab_size)],
    [`${arch}.context_length`, gguf.u32(config.max_position_embeddings)],
    [`${arch}.embedding_length`, gguf.u32(config.hidden_size)],
    [`${arch}.block_count`, gguf.u32(config.num_hidden_layers)],
    [`${arch}.feed_forward_length`, gguf.u32(config.intermediate_size)],
    [`${arch}.attention.head_count`, gguf.u32(config.num_attention_heads)],
    [`${arch}.attention.head_count_kv`, gguf.u32(config.num_key_value_heads)],
    [`${arch}.rope.freq_base`, gguf.f32(config.rope_theta)],
    [`${arch}.rope.dimension_count`, gguf.u32(headDim)],
    [`${arch}.attention.layer_norm_rms_epsilon`, gguf.f32(config.rms_norm_eps)],
  );
  if (config.head_dim !== undefined) {
    entries.push([`${arch}.attention.key_length`, gguf.u32(headDim)], [`${arch}.attention.value_length`, gguf.u32(headDim)]);
  }
  return entries;
}

/** llama_pooling_type's values (llama.h). */
const POOLING_TYPE_IDS = { mean: 1, cls: 2, last: 3 } as const;

/**
 * An embedding preset's `<arch>.pooling_type` (none for the others, which keeps every other preset's file, and its
 * recorded answers, as they were).
 */
export function ggufPoolingKeys(preset: ModelPreset): Array<[string, GgufTypedValue]> {
  if (preset.pooling === undefined) return [];
  return [[`${ggufArchitectureOf(preset.config)}.pooling_type`, gguf.u32(POOLING_TYPE_IDS[preset.pooling])]];
}

/**
 * The gemma3.* keys, as Gemma3Model.set_gguf_parameters (conversion/gemma.py, on TextModel's) writes them: no
 * vocab_size and no rope.dimension_count (llama.cpp takes head_dim for it); rope.freq_base is the global layers' base
 * and rope.freq_base_swa the sliding-window layers' (rope_local_base_freq); linear RoPE scaling (27B) as
 * rope.scaling.type/factor; attention.sliding_window since sliding_window_pattern is not 1. llama.cpp then makes layer
 * il sliding-window when il % 6 < 5 (load_swa_pattern's default of 6: the file has no sliding_window_pattern key) and
 * scales queries by 1/sqrt(head_dim), or 1/sqrt(hidden / heads) for a 62-layer (27B) model: query_pre_attn_scalar.
 */
function gemma3Keys(preset: ModelPreset): Array<[string, GgufTypedValue]> {
  const config = preset.config;
  const headDim = headDimOf(config);
  const entries: Array<[string, GgufTypedValue]> = [
    ["gemma3.block_count", gguf.u32(config.num_hidden_layers)],
    ["gemma3.context_length", gguf.u32(config.max_position_embeddings)],
    ["gemma3.embedding_length", gguf.u32(config.hidden_size)],
    ["gemma3.feed_forward_length", gguf.u32(config.intermediate_size)],
    ["gemma3.attention.head_count", gguf.u32(config.num_attention_heads)],
    ["gemma3.attention.head_count_kv", gguf.u32(config.num_key_value_heads)],
  ];
  const scaling = config.rope_scaling;
  if (scaling?.rope_type === "linear") {
    entries.push(["gemma3.rope.scaling.type", gguf.string("linear")], ["gemma3.rope.scaling.factor", gguf.f32(scaling.factor)]);
  }
  entries.push(["gemma3.rope.freq_base", gguf.f32(config.rope_theta)]);
  if (config.rope_local_base_freq !== undefined) entries.push(["gemma3.rope.freq_base_swa", gguf.f32(config.rope_local_base_freq)]);
  entries.push(
    ["gemma3.attention.layer_norm_rms_epsilon", gguf.f32(config.rms_norm_eps)],
    ["gemma3.attention.key_length", gguf.u32(headDim)],
    ["gemma3.attention.value_length", gguf.u32(headDim)],
  );
  if (config.sliding_window_pattern !== 1 && typeof config.sliding_window === "number") {
    entries.push(["gemma3.attention.sliding_window", gguf.u32(config.sliding_window)]);
  }
  return entries;
}

/**
 * The qwen3moe.* keys, as Qwen3MoeModel (Qwen2MoeModel.set_gguf_parameters on TextModel's, conversion/qwen.py and
 * base.py) writes them, in its order: no vocab_size and no rope.dimension_count (llama.cpp takes head_dim); the dense
 * feed_forward_length is config.json's intermediate_size (Qwen3-30B-A3B: 6144, which no layer uses); expert_count
 * (num_experts), expert_used_count (num_experts_per_tok), key/value_length (head_dim), then
 * expert_feed_forward_length (moe_intermediate_size). norm_topk_prob is not written: llama.cpp's qwen3moe graph always
 * renormalises the top-k weights (build_moe_ffn with norm_w true), and the converter writes no expert_weights_norm.
 */
function qwen3MoeKeys(preset: ModelPreset): Array<[string, GgufTypedValue]> {
  const config = preset.config;
  const headDim = headDimOf(config);
  return [
    ["qwen3moe.block_count", gguf.u32(config.num_hidden_layers)],
    ["qwen3moe.context_length", gguf.u32(config.max_position_embeddings)],
    ["qwen3moe.embedding_length", gguf.u32(config.hidden_size)],
    ["qwen3moe.feed_forward_length", gguf.u32(config.intermediate_size)],
    ["qwen3moe.attention.head_count", gguf.u32(config.num_attention_heads)],
    ["qwen3moe.attention.head_count_kv", gguf.u32(config.num_key_value_heads)],
    ["qwen3moe.rope.freq_base", gguf.f32(config.rope_theta)],
    ["qwen3moe.attention.layer_norm_rms_epsilon", gguf.f32(config.rms_norm_eps)],
    ["qwen3moe.expert_count", gguf.u32(config.num_experts!)],
    ["qwen3moe.expert_used_count", gguf.u32(config.num_experts_per_tok!)],
    ["qwen3moe.attention.key_length", gguf.u32(headDim)],
    ["qwen3moe.attention.value_length", gguf.u32(headDim)],
    ["qwen3moe.expert_feed_forward_length", gguf.u32(config.moe_intermediate_size!)],
  ];
}

/** A config's YaRN parameters: rope_parameters (transformers 5, Ministral 3) or rope_scaling (gpt-oss); throws if neither is YaRN. */
function yarnOf(config: HuggingFaceConfig): YarnRopeScalingConfig {
  const parameters = (config.rope_parameters ?? config.rope_scaling) as YarnRopeScalingConfig | null | undefined;
  if (parameters?.rope_type !== "yarn") throw new RangeError(`${config.model_type}: expected YaRN rope_parameters / rope_scaling, got ${JSON.stringify(parameters)}`);
  return parameters;
}

/**
 * The keys TextModel.set_gguf_parameters (conversion/base.py) writes for a YaRN model whose config has head_dim, in
 * its order: sizes, YaRN scaling (type, factor, original context, beta_fast, beta_slow; no extrapolation or attention
 * factor, which neither config has), rope.freq_base, the RMS epsilon, expert counts (MoE only), key/value lengths.
 */
function yarnTextModelKeys(arch: string, config: HuggingFaceConfig, experts?: { count: number; used: number }): Array<[string, GgufTypedValue]> {
  const yarn = yarnOf(config);
  const headDim = headDimOf(config);
  const entries: Array<[string, GgufTypedValue]> = [
    [`${arch}.block_count`, gguf.u32(config.num_hidden_layers)],
    [`${arch}.context_length`, gguf.u32(config.max_position_embeddings)],
    [`${arch}.embedding_length`, gguf.u32(config.hidden_size)],
    [`${arch}.feed_forward_length`, gguf.u32(config.intermediate_size)],
    [`${arch}.attention.head_count`, gguf.u32(config.num_attention_heads)],
    [`${arch}.attention.head_count_kv`, gguf.u32(config.num_key_value_heads)],
    [`${arch}.rope.scaling.type`, gguf.string("yarn")],
    [`${arch}.rope.scaling.factor`, gguf.f32(yarn.factor)],
    [`${arch}.rope.scaling.original_context_length`, gguf.u32(yarn.original_max_position_embeddings)],
    [`${arch}.rope.scaling.yarn_beta_fast`, gguf.f32(yarn.beta_fast)],
    [`${arch}.rope.scaling.yarn_beta_slow`, gguf.f32(yarn.beta_slow)],
    [`${arch}.rope.freq_base`, gguf.f32((yarn.rope_theta as number | undefined) ?? config.rope_theta)],
    [`${arch}.attention.layer_norm_rms_epsilon`, gguf.f32(config.rms_norm_eps)],
  ];
  if (experts) entries.push([`${arch}.expert_count`, gguf.u32(experts.count)], [`${arch}.expert_used_count`, gguf.u32(experts.used)]);
  entries.push([`${arch}.attention.key_length`, gguf.u32(headDim)], [`${arch}.attention.value_length`, gguf.u32(headDim)]);
  return entries;
}

/**
 * The gpt-oss.* keys, as GptOssModel (conversion/gpt_oss.py) writes them: TextModel's (YaRN, expert_count from
 * num_local_experts, expert_used_count from num_experts_per_tok; no vocab_size, no rope.dimension_count: llama.cpp
 * takes head_dim), then attention.sliding_window and expert_feed_forward_length (intermediate_size, the expert width).
 * No sliding_window_pattern: llama.cpp's gpt-oss loader makes the even layers sliding (load_swa_pattern with 2), which
 * is what layer_types says.
 */
function gptOssKeys(preset: ModelPreset): Array<[string, GgufTypedValue]> {
  const config = preset.config;
  const count = config.num_local_experts;
  const used = config.num_experts_per_tok;
  if (!count || !used || used > count) throw new RangeError(`${preset.name}: gpt-oss needs num_local_experts and num_experts_per_tok <= it (got ${count}, ${used})`);
  if (typeof config.sliding_window !== "number") throw new RangeError(`${preset.name}: gpt-oss needs a sliding_window`);
  const layerTypes = config.layer_types as readonly string[] | undefined;
  layerTypes?.forEach((type, layer) => {
    if (type !== (layer % 2 === 0 ? "sliding_attention" : "full_attention")) {
      throw new RangeError(`${preset.name}: layer_types[${layer}] is ${type}; llama.cpp's gpt-oss makes the even layers sliding and the odd ones full`);
    }
  });
  return [
    ...yarnTextModelKeys("gpt-oss", config, { count, used }),
    ["gpt-oss.attention.sliding_window", gguf.u32(config.sliding_window)],
    ["gpt-oss.expert_feed_forward_length", gguf.u32(config.intermediate_size)],
  ];
}

/**
 * The mistral3.* keys, as Ministral3Model (conversion/mistral3.py, on LlamaModel's and TextModel's) writes them for a
 * ministral3 config: TextModel's (YaRN from rope_parameters, rope_theta inside it), LlamaModel's vocab_size and
 * rope.dimension_count (head_dim), then rope.scaling.yarn_log_multiplier (mscale_all_dim) and
 * attention.temperature_scale (llama_4_scaling_beta). llama.cpp scales queries by 1 + beta * floor(pos / n) with n the
 * original context length.
 */
function mistral3Keys(preset: ModelPreset): Array<[string, GgufTypedValue]> {
  const config = preset.config;
  const yarn = yarnOf(config);
  if (typeof yarn.mscale_all_dim !== "number" || typeof yarn.llama_4_scaling_beta !== "number") {
    throw new RangeError(`${preset.name}: ministral3 rope_parameters need mscale_all_dim and llama_4_scaling_beta`);
  }
  return [
    ...yarnTextModelKeys("mistral3", config),
    ["mistral3.vocab_size", gguf.u32(config.vocab_size)],
    ["mistral3.rope.dimension_count", gguf.u32(headDimOf(config))],
    ["mistral3.rope.scaling.yarn_log_multiplier", gguf.f32(yarn.mscale_all_dim)],
    ["mistral3.attention.temperature_scale", gguf.f32(yarn.llama_4_scaling_beta)],
  ];
}

/**
 * The gemma4.* keys with the values Gemma4Model.set_gguf_parameters (conversion/gemma.py, over Gemma3Model's and
 * TextModel's) leaves: sizes, head counts (head_count_kv one per layer: the sliding layers' and the full layers'
 * counts), rope.freq_base (full) and freq_base_swa (sliding), the RMS epsilon, expert counts, final logit
 * soft-capping, the sliding window and its per-layer flags, shared_kv_layers, embedding_length_per_layer_input,
 * key/value lengths (full) and their _swa twins, expert_feed_forward_length, feed_forward_length (one per layer with
 * the double-wide MLP), rope.dimension_count (the full head size: proportional RoPE works through rope_freqs) and
 * dimension_count_swa.
 */
function gemma4Keys(name: string, config: HuggingFaceConfig & Gemma4Fields): Array<[string, GgufTypedValue]> {
  if (typeof config.sliding_window !== "number") throw new RangeError(`${name}: gemma4 needs a sliding_window`);
  const sliding = config.layer_types.map((type) => type === "sliding_attention");
  const entries: Array<[string, GgufTypedValue]> = [
    ["gemma4.block_count", gguf.u32(config.num_hidden_layers)],
    ["gemma4.context_length", gguf.u32(config.max_position_embeddings)],
    ["gemma4.embedding_length", gguf.u32(config.hidden_size)],
    ["gemma4.attention.head_count", gguf.u32(config.num_attention_heads)],
    ["gemma4.rope.freq_base", gguf.f32(config.rope_parameters.full_attention.rope_theta)],
    ["gemma4.rope.freq_base_swa", gguf.f32(config.rope_parameters.sliding_attention.rope_theta)],
    ["gemma4.attention.layer_norm_rms_epsilon", gguf.f32(config.rms_norm_eps)],
  ];
  if (config.num_experts) {
    entries.push(["gemma4.expert_count", gguf.u32(config.num_experts)], ["gemma4.expert_used_count", gguf.u32(config.top_k_experts!)]);
  }
  if (config.final_logit_softcapping) entries.push(["gemma4.final_logit_softcapping", gguf.f32(config.final_logit_softcapping)]);
  const headDimSwa = config.head_dim!;
  const headDimFull = config.global_head_dim;
  entries.push(
    ["gemma4.attention.sliding_window", gguf.u32(config.sliding_window)],
    ["gemma4.attention.head_count_kv", gguf.i32s(sliding.map((swa) => (swa ? config.num_key_value_heads : config.num_global_key_value_heads)))],
    ["gemma4.attention.shared_kv_layers", gguf.u32(config.num_kv_shared_layers)],
    ["gemma4.embedding_length_per_layer_input", gguf.u32(config.hidden_size_per_layer_input)],
    ["gemma4.attention.sliding_window_pattern", { type: "array", itemType: "bool", value: sliding }],
    ["gemma4.attention.key_length", gguf.u32(headDimFull)],
    ["gemma4.attention.value_length", gguf.u32(headDimFull)],
    ["gemma4.attention.key_length_swa", gguf.u32(headDimSwa)],
    ["gemma4.attention.value_length_swa", gguf.u32(headDimSwa)],
  );
  if (config.moe_intermediate_size) entries.push(["gemma4.expert_feed_forward_length", gguf.u32(config.moe_intermediate_size)]);
  entries.push(
    ["gemma4.feed_forward_length", config.use_double_wide_mlp ? gguf.i32s(gemma4FeedForwardLengths(config)) : gguf.u32(config.intermediate_size)],
    ["gemma4.rope.dimension_count", gguf.u32(headDimFull)],
    ["gemma4.rope.dimension_count_swa", gguf.u32(headDimSwa)],
  );
  return entries;
}
