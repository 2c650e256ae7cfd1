// Gemma 4's tensors (transformers' Gemma4 names as random-stream keys) and the GGUF tensors llama.cpp's converter
// (conversion/gemma.py Gemma4Model) and loader (src/models/gemma4.cpp) know them by. Norms are stored as used
// (Gemma 4's norm_shift is 0). The generator writes Gemma 4 as GGUF only.
import type { PlannedTensor } from "./model-tensors.js";
import type { Gemma4Fields, HuggingFaceConfig } from "./model-presets.js";
import { QK_GAIN, ROUTER_GAIN, type TensorRole, type UniformInit, initFor } from "./weight-init.js";

/** A layer's attention shape, as llama.cpp's hparams give it per layer. */
export function gemma4LayerShape(config: HuggingFaceConfig & Gemma4Fields, layer: number): { headDim: number; kvHeads: number; sliding: boolean } {
  const sliding = config.layer_types[layer] === "sliding_attention";
  return sliding
    ? { headDim: config.head_dim!, kvHeads: config.num_key_value_heads, sliding }
    : { headDim: config.global_head_dim, kvHeads: config.num_global_key_value_heads, sliding };
}

/** Each layer's dense MLP width: doubled on the shared-KV layers with use_double_wide_mlp, as the converter writes it. */
export function gemma4FeedForwardLengths(config: HuggingFaceConfig & Gemma4Fields): number[] {
  const firstShared = config.num_hidden_layers - config.num_kv_shared_layers;
  return Array.from({ length: config.num_hidden_layers }, (_, il) => (config.use_double_wide_mlp && il >= firstShared ? 2 : 1) * config.intermediate_size);
}

/**
 * The tensors of a Gemma 4 model. Scales follow weight-init.ts with Gemma 3's post-norm gain; what Gemma 4 adds:
 * attention scores are not scaled (attention scale 1), so the q/k norm weights are QK_GAIN / head_dim^(1/4) (scores of
 * std about QK_GAIN^2 as elsewhere); values are RMS-normed, so the projections' scales wash out; the router reads
 * rms_norm(x) / sqrt(hidden), so its weights have std ROUTER_GAIN (logits of std about 2); per-layer embeddings are
 * drawn at 1/sqrt(n) (the graph multiplies them by sqrt(n)); layer_output_scale is 0.8 +- 0.3.
 */
export function planGemma4Tensors(config: HuggingFaceConfig & Gemma4Fields): PlannedTensor[] {
  const hidden = config.hidden_size;
  const layers = config.num_hidden_layers;
  const perLayer = config.hidden_size_per_layer_input;
  const ffn = gemma4FeedForwardLengths(config);
  const firstShared = layers - config.num_kv_shared_layers;
  const tensors: PlannedTensor[] = [];
  const add = (huggingFaceName: string, ggufName: string, shape: number[], role: TensorRole, init: UniformInit = initFor(role, config), ggufExpert?: { index: number; count: number }) => {
    tensors.push({ huggingFaceName, ggufName, shape, role, init, ggufExpert });
  };
  const std = (value: number): UniformInit => ({ center: 0, halfWidth: value * Math.sqrt(3) });
  const m = "model.language_model.";
  add(`${m}embed_tokens.weight`, "token_embd.weight", [config.vocab_size, hidden], "embedding");
  if (perLayer > 0) {
    add(`${m}embed_tokens_per_layer.weight`, "per_layer_token_embd.weight", [config.vocab_size, layers * perLayer], "embedding", std(1 / Math.sqrt(perLayer)));
    add(`${m}per_layer_model_projection.weight`, "per_layer_model_proj.weight", [layers * perLayer, hidden], "ffn_up");
    add(`${m}per_layer_projection_norm.weight`, "per_layer_proj_norm.weight", [perLayer], "norm");
  }
  for (let il = 0; il < layers; il++) {
    const p = `${m}layers.${il}.`;
    const b = `blk.${il}.`;
    const { headDim, kvHeads } = gemma4LayerShape(config, il);
    const qRows = config.num_attention_heads * headDim;
    const kvRows = kvHeads * headDim;
    const ownKv = il < firstShared;
    const headNorm: UniformInit = { center: QK_GAIN / headDim ** 0.25, halfWidth: (0.2 * QK_GAIN) / headDim ** 0.25 };
    add(`${p}input_layernorm.weight`, `${b}attn_norm.weight`, [hidden], "norm");
    if (config.loom_fused_qkv_layers.includes(il)) {
      if (!ownKv) throw new RangeError(`gemma4 layer ${il}: a shared-KV layer has no K/V to fuse`);
      add(`${p}self_attn.qkv_proj.weight`, `${b}attn_qkv.weight`, [qRows + 2 * kvRows, hidden], "attn_v");
    } else {
      add(`${p}self_attn.q_proj.weight`, `${b}attn_q.weight`, [qRows, hidden], "attn_v");
      if (ownKv) add(`${p}self_attn.k_proj.weight`, `${b}attn_k.weight`, [kvRows, hidden], "attn_v");
      if (ownKv && !config.loom_k_eq_v_layers.includes(il)) add(`${p}self_attn.v_proj.weight`, `${b}attn_v.weight`, [kvRows, hidden], "attn_v");
    }
    add(`${p}self_attn.q_norm.weight`, `${b}attn_q_norm.weight`, [headDim], "qk_norm", headNorm);
    if (ownKv) add(`${p}self_attn.k_norm.weight`, `${b}attn_k_norm.weight`, [headDim], "qk_norm", headNorm);
    add(`${p}self_attn.o_proj.weight`, `${b}attn_output.weight`, [hidden, qRows], "attn_output");
    add(`${p}post_attention_layernorm.weight`, `${b}post_attention_norm.weight`, [hidden], "post_norm");
    add(`${p}pre_feedforward_layernorm.weight`, `${b}ffn_norm.weight`, [hidden], "norm");
    add(`${p}mlp.gate_proj.weight`, `${b}ffn_gate.weight`, [ffn[il]!, hidden], "ffn_gate");
    add(`${p}mlp.up_proj.weight`, `${b}ffn_up.weight`, [ffn[il]!, hidden], "ffn_up");
    add(`${p}mlp.down_proj.weight`, `${b}ffn_down.weight`, [hidden, ffn[il]!], "ffn_down", std(2 / Math.sqrt(ffn[il]!)));
    if (config.loom_moe_layers.includes(il)) addExperts(config, il, add, std);
    add(`${p}post_feedforward_layernorm.weight`, `${b}post_ffw_norm.weight`, [hidden], "post_norm");
    if (perLayer > 0) {
      add(`${p}per_layer_input_gate.weight`, `${b}inp_gate.weight`, [perLayer, hidden], "ffn_gate");
      add(`${p}per_layer_projection.weight`, `${b}proj.weight`, [hidden, perLayer], "ffn_down", std(1 / Math.sqrt(perLayer)));
      add(`${p}post_per_layer_input_norm.weight`, `${b}post_norm.weight`, [hidden], "norm");
    }
    if (config.loom_out_scale_layers.includes(il)) add(`${p}layer_scalar`, `${b}layer_output_scale.weight`, [1], "norm", { center: 0.8, halfWidth: 0.3 });
  }
  add(`${m}norm.weight`, "output_norm.weight", [hidden], "final_norm");
  return tensors;
}

/**
 * Gemma 4's router logits have std about this (3x weight-init.ts's ROUTER_GAIN): with 4 experts at gain 2, router
 * near-ties (a k-th and (k+1)-th logit 0.002-0.007 apart) at earlier positions flipped a token's experts between
 * llama.cpp and loom in Q4_K_M, which parted the greedy paths later by logit gaps of 0.5-2; a wider spread makes such
 * ties rarer.
 */
const GEMMA4_ROUTER_GAIN = 3 * ROUTER_GAIN;

type Add = (huggingFaceName: string, ggufName: string, shape: number[], role: TensorRole, init?: UniformInit, ggufExpert?: { index: number; count: number }) => void;

/**
 * A MoE layer's router (its scale, the router matrix), its two extra norm pairs and its experts, stacked into 3-D
 * GGUF tensors expert after expert: ffn_gate_up_exps [E, 2w, hidden] (gate rows first, as the converter fuses them)
 * unless the layer keeps ffn_gate_exps / ffn_up_exps apart, and ffn_down_exps [E, hidden, w].
 */
function addExperts(config: HuggingFaceConfig & Gemma4Fields, il: number, add: Add, std: (value: number) => UniformInit): void {
  const hidden = config.hidden_size;
  const count = config.num_experts;
  const width = config.moe_intermediate_size;
  if (!count || !width || !config.top_k_experts) throw new RangeError("a gemma4 config with loom_moe_layers needs num_experts, top_k_experts and moe_intermediate_size");
  const p = `model.language_model.layers.${il}.`;
  const b = `blk.${il}.`;
  add(`${p}router.scale`, `${b}ffn_gate_inp.scale`, [hidden], "norm");
  add(`${p}router.proj.weight`, `${b}ffn_gate_inp.weight`, [count, hidden], "router", std(GEMMA4_ROUTER_GAIN));
  add(`${p}pre_feedforward_layernorm_2.weight`, `${b}pre_ffw_norm_2.weight`, [hidden], "norm");
  add(`${p}post_feedforward_layernorm_1.weight`, `${b}post_ffw_norm_1.weight`, [hidden], "norm");
  add(`${p}post_feedforward_layernorm_2.weight`, `${b}post_ffw_norm_2.weight`, [hidden], "norm");
  const split = config.loom_split_gate_up_layers.includes(il);
  for (let e = 0; e < count; e++) {
    const expert = { index: e, count };
    const x = `${p}experts.${e}.`;
    if (split) {
      add(`${x}gate_proj.weight`, `${b}ffn_gate_exps.weight`, [width, hidden], "expert_gate", undefined, expert);
      add(`${x}up_proj.weight`, `${b}ffn_up_exps.weight`, [width, hidden], "expert_up", undefined, expert);
    } else {
      add(`${x}gate_up_proj.weight`, `${b}ffn_gate_up_exps.weight`, [2 * width, hidden], "expert_gate", undefined, expert);
    }
    add(`${x}down_proj.weight`, `${b}ffn_down_exps.weight`, [hidden, width], "expert_down", std(2 / Math.sqrt(width)), expert);
  }
  if (config.loom_down_scale_layers.includes(il)) add(`${p}router.per_expert_scale`, `${b}ffn_down_exps.scale`, [count], "norm");
}
