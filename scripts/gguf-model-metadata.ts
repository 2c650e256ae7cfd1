// The GGUF metadata llama.cpp reads for a llama / qwen2 / qwen3 model, as convert_hf_to_gguf.py writes it.
import { gguf, type GgufTypedValue } from "../engine/model/gguf/writer.js";
import { type ModelPreset, headDimOf } from "./model-presets.js";
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
  const arch = config.model_type;
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
  ];
  if (config.head_dim !== undefined) {
    entries.push([`${arch}.attention.key_length`, gguf.u32(headDim)], [`${arch}.attention.value_length`, gguf.u32(headDim)]);
  }
  return entries;
}
