// Gemma 4's configuration from GGUF, as llama.cpp's gemma4 loader reads it: per-layer attention shapes (the sliding
// layers' own head size and rotary dimensions, per-layer head counts), the shared-KV tail, per-layer embeddings,
// experts and logit soft-capping. Kept apart from config.ts because almost every field here differs by layer.
import type { GgufValue } from "./gguf/format.js";
import { ModelFileError } from "./errors.js";
import { positiveInteger, positiveNumber } from "./config-values.js";
import type { LayerAttentionShape, ModelConfig } from "./config.js";

type Key = (name: string) => GgufValue | undefined;

/**
 * A key that is one value for every layer or an array of one per layer (llama.cpp's get_key_or_arr); `fallback`,
 * one value per layer, where the key is absent.
 */
function perLayer(path: string, field: string, value: unknown, layers: number, fallback?: readonly number[]): number[] {
  if (value === undefined && fallback !== undefined) return [...fallback];
  // The GGUF reader gives numeric arrays as typed arrays.
  if (Array.isArray(value) || ArrayBuffer.isView(value)) {
    const list = Array.from(value as ArrayLike<unknown>);
    if (list.length !== layers) throw new ModelFileError(path, `${field} must hold one value per layer (${layers}), found ${list.length}`);
    return list.map((entry, il) => positiveInteger(path, `${field}[${il}]`, typeof entry === "bigint" ? Number(entry) : entry));
  }
  return new Array<number>(layers).fill(positiveInteger(path, field, value));
}

/**
 * Which layer's KV each layer reads, as llama.cpp's gemma4 KV cache `reuse` rule gives it: the first
 * `layers - shared` layers their own; each later (shared-KV) layer the last of those of its kind, layer
 * (first shared - 2) when it slides, else (first shared - 1).
 */
export function gemma4KvSources(path: string, arch: string, sliding: readonly boolean[], shared: number): number[] {
  const layers = sliding.length;
  const fromStart = layers - shared;
  if (shared > 0 && fromStart < 2) {
    throw new ModelFileError(path, `${arch}.attention.shared_kv_layers ${shared} leaves ${fromStart} of ${layers} layers with their own KV; at least 2 are needed`);
  }
  return sliding.map((slides, il) => {
    if (il < fromStart) return il;
    const source = fromStart - (slides ? 2 : 1);
    if (sliding[source] !== slides) {
      throw new ModelFileError(path, `${arch}: shared-KV layer ${il} (${slides ? "sliding" : "full"}) would read layer ${source}'s KV, which is ${sliding[source] ? "sliding" : "full"}`);
    }
    return source;
  });
}

/**
 * The whole config of a `gemma4` GGUF. Keys as the converter (conversion/gemma.py Gemma4Model) writes them:
 * key_length / value_length (full layers' head size) and their _swa twins, rope.dimension_count(_swa),
 * head_count / head_count_kv / feed_forward_length / expert_feed_forward_length as a value or one per layer,
 * attention.sliding_window_pattern as per-layer flags, attention.shared_kv_layers, embedding_length_per_layer_input,
 * final_logit_softcapping, rope.freq_base(_swa). Refuses by key what loom does not compute: non-causal attention,
 * RoPE scaling types, key and value sizes that differ.
 */
export function gemma4Config(path: string, arch: string, key: Key, vocab: unknown, hasOutputTensor: boolean, name: string | undefined): ModelConfig {
  const hidden = positiveInteger(path, `${arch}.embedding_length`, key("embedding_length"));
  const layers = positiveInteger(path, `${arch}.block_count`, key("block_count"));
  if (key("attention.causal") === false) throw new ModelFileError(path, `${arch}.attention.causal false (bidirectional attention) is not supported`);
  const scalingType = key("rope.scaling.type");
  if (scalingType !== undefined && scalingType !== "none") throw new ModelFileError(path, `${arch}.rope.scaling.type '${String(scalingType)}' is not supported for gemma4`);
  const pattern = key("attention.sliding_window_pattern");
  if (!Array.isArray(pattern) || pattern.length !== layers || !pattern.every((flag) => typeof flag === "boolean")) {
    throw new ModelFileError(path, `${arch}.attention.sliding_window_pattern must hold one boolean per layer (${layers}), found ${JSON.stringify(pattern)}`);
  }
  const sliding = pattern as boolean[];
  const heads = perLayer(path, `${arch}.attention.head_count`, key("attention.head_count"), layers);
  // Absent, each layer's KV heads are its heads (llama.cpp copies the head_count array).
  const kvHeads = perLayer(path, `${arch}.attention.head_count_kv`, key("attention.head_count_kv"), layers, heads);
  const headFull = positiveInteger(path, `${arch}.attention.key_length`, key("attention.key_length"));
  const headSwa = positiveInteger(path, `${arch}.attention.key_length_swa`, key("attention.key_length_swa"));
  for (const [k, v] of [["key_length", "value_length"], ["key_length_swa", "value_length_swa"]]) {
    const value = key(`attention.${v}`);
    if (value !== undefined && value !== key(`attention.${k}`)) {
      throw new ModelFileError(path, `${arch}.attention.${v} ${String(value)} differs from ${arch}.attention.${k} ${String(key(`attention.${k}`))} (gemma4 needs them equal)`);
    }
  }
  const rotFull = key("rope.dimension_count") === undefined ? headFull : positiveInteger(path, `${arch}.rope.dimension_count`, key("rope.dimension_count"));
  const rotSwa = key("rope.dimension_count_swa") === undefined ? rotFull : positiveInteger(path, `${arch}.rope.dimension_count_swa`, key("rope.dimension_count_swa"));
  const layerAttention: LayerAttentionShape[] = sliding.map((slides, il) => {
    const headDim = slides ? headSwa : headFull;
    const rotaryDim = slides ? rotSwa : rotFull;
    if (heads[il]! % kvHeads[il]! !== 0) throw new ModelFileError(path, `layer ${il}: head_count ${heads[il]} is not a multiple of head_count_kv ${kvHeads[il]}`);
    if (rotaryDim > headDim || rotaryDim % 2 !== 0) throw new ModelFileError(path, `layer ${il}: rotary dimension ${rotaryDim} must be even and at most the head size ${headDim}`);
    return { heads: heads[il]!, kvHeads: kvHeads[il]!, headDim, rotaryDim };
  });
  const sharedValue = key("attention.shared_kv_layers") ?? 0;
  if (typeof sharedValue !== "number" || !Number.isSafeInteger(sharedValue) || sharedValue < 0 || sharedValue >= layers) {
    throw new ModelFileError(path, `${arch}.attention.shared_kv_layers must be a whole number below block_count ${layers}, found ${JSON.stringify(sharedValue)}`);
  }
  const kvSources = gemma4KvSources(path, arch, sliding, sharedValue);
  const ffn = perLayer(path, `${arch}.feed_forward_length`, key("feed_forward_length"), layers);
  const perLayerInput = key("embedding_length_per_layer_input");
  if (typeof perLayerInput !== "number" || !Number.isSafeInteger(perLayerInput) || perLayerInput < 0) {
    throw new ModelFileError(path, `${arch}.embedding_length_per_layer_input must be a whole number, found ${JSON.stringify(perLayerInput)}`);
  }
  const softcap = key("final_logit_softcapping");
  const contextLength = positiveInteger(path, `${arch}.context_length`, key("context_length") ?? 2048);
  const window = positiveInteger(path, `${arch}.attention.sliding_window`, key("attention.sliding_window"));
  if (window > contextLength) throw new ModelFileError(path, `sliding window ${window} is larger than the context length ${contextLength}`);
  return {
    architecture: "gemma4",
    hidden_size: hidden,
    // The widest of each, for buffers; layers read their own from layer_attention / layer_intermediate_sizes.
    intermediate_size: Math.max(...ffn),
    num_hidden_layers: layers,
    num_attention_heads: Math.max(...heads),
    num_key_value_heads: Math.max(...kvHeads),
    head_dim: Math.max(headFull, headSwa),
    vocab_size: positiveInteger(path, "vocabulary size", vocab),
    max_position_embeddings: contextLength,
    rms_norm_eps: positiveNumber(path, `${arch}.attention.layer_norm_rms_epsilon`, key("attention.layer_norm_rms_epsilon")),
    rope_theta: positiveNumber(path, `${arch}.rope.freq_base`, key("rope.freq_base") ?? 10000),
    rotary_dim: rotFull,
    rope_scaling: null,
    tie_word_embeddings: !hasOutputTensor,
    name,
    sliding_window: window,
    layer_types: sliding.map((flag) => (flag ? "sliding_attention" : "full_attention")),
    rope_local_base_freq: positiveNumber(path, `${arch}.rope.freq_base_swa`, key("rope.freq_base_swa") ?? 10000),
    hidden_activation: "gelu_pytorch_tanh",
    embedding_scale: Math.fround(Math.sqrt(hidden)),
    attention_scale: 1,
    layer_attention: layerAttention,
    layer_intermediate_sizes: ffn,
    kv_source_layers: kvSources,
    rope_freqs_full_only: true,
    value_norm: true,
    ...(perLayerInput > 0 ? { hidden_size_per_layer_input: perLayerInput } : {}),
    ...(softcap !== undefined && softcap !== 0 ? { final_logit_softcapping: positiveNumber(path, `${arch}.final_logit_softcapping`, softcap) } : {}),
    ...gemma4Experts(path, arch, key, layers),
  };
}

/**
 * The experts of a Gemma 4 MoE model (26B-A4B), when the file has expert_count: softmax over every expert, top k,
 * weights renormalised (build_moe_ffn's norm_w true), GELU experts. Which layers are MoE is the tensors' to say
 * (ffn_gate_inp); every expert width must be the same.
 */
function gemma4Experts(path: string, arch: string, key: Key, layers: number): Partial<ModelConfig> {
  const count = key("expert_count");
  if (count === undefined || count === 0) return {};
  const experts = positiveInteger(path, `${arch}.expert_count`, count);
  const used = positiveInteger(path, `${arch}.expert_used_count`, key("expert_used_count"));
  if (used > experts) throw new ModelFileError(path, `${arch}.expert_used_count ${used} is more than ${arch}.expert_count ${experts}`);
  const widths = perLayer(path, `${arch}.expert_feed_forward_length`, key("expert_feed_forward_length"), layers);
  if (new Set(widths).size !== 1) throw new ModelFileError(path, `${arch}.expert_feed_forward_length differing by layer (${widths.join(", ")}) is not supported`);
  return { num_experts: experts, num_experts_per_tok: used, moe_intermediate_size: widths[0], norm_topk_prob: true, expert_gating: "softmax" };
}
