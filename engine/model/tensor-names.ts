// Maps Hugging Face checkpoint tensor names onto the GGUF names loom uses internally.

const GLOBAL_NAMES: Record<string, string> = {
  "model.embed_tokens.weight": "token_embd.weight",
  "model.norm.weight": "output_norm.weight",
  "lm_head.weight": "output.weight",
};

const LAYER_NAMES: Record<string, string> = {
  "input_layernorm.weight": "attn_norm.weight",
  "self_attn.q_proj.weight": "attn_q.weight",
  "self_attn.k_proj.weight": "attn_k.weight",
  "self_attn.v_proj.weight": "attn_v.weight",
  "self_attn.q_proj.bias": "attn_q.bias",
  "self_attn.k_proj.bias": "attn_k.bias",
  "self_attn.v_proj.bias": "attn_v.bias",
  "self_attn.o_proj.weight": "attn_output.weight",
  "self_attn.q_norm.weight": "attn_q_norm.weight",
  "self_attn.k_norm.weight": "attn_k_norm.weight",
  "post_attention_layernorm.weight": "ffn_norm.weight",
  "mlp.gate_proj.weight": "ffn_gate.weight",
  "mlp.up_proj.weight": "ffn_up.weight",
  "mlp.down_proj.weight": "ffn_down.weight",
};

/**
 * Gemma 3 (config.json model_type `gemma3_text`, or `gemma3`) norms its layers four times. Its post_attention_layernorm
 * is the attention's post-norm, not Llama's pre-FFN norm; the FFN has its own pre- and post-norms (gguf-py's
 * tensor_mapping.py: ATTN_POST_NORM, FFN_PRE_NORM, FFN_POST_NORM for MODEL_ARCH.GEMMA3).
 */
const GEMMA3_LAYER_NAMES: Record<string, string> = {
  ...LAYER_NAMES,
  "post_attention_layernorm.weight": "post_attention_norm.weight",
  "pre_feedforward_layernorm.weight": "ffn_norm.weight",
  "post_feedforward_layernorm.weight": "post_ffw_norm.weight",
};

/**
 * Qwen3-MoE (model_type `qwen3_moe`): the router `mlp.gate` is llama.cpp's ffn_gate_inp. The experts' merged names
 * (`mlp.experts.{gate,up,down}_proj.weight`, the 3-D tensors convert_hf_to_gguf.py stacks from the per-expert ones,
 * and gguf-py's tensor_mapping.py's names for them) are ffn_{gate,up,down}_exps; per-expert checkpoint tensors are
 * slices of those (see ggufExpertOf).
 */
const QWEN3_MOE_LAYER_NAMES: Record<string, string> = {
  ...LAYER_NAMES,
  "mlp.gate.weight": "ffn_gate_inp.weight",
  "mlp.experts.gate_proj.weight": "ffn_gate_exps.weight",
  "mlp.experts.up_proj.weight": "ffn_up_exps.weight",
  "mlp.experts.down_proj.weight": "ffn_down_exps.weight",
};

function layerNames(modelType: string | undefined): Record<string, string> {
  if (modelType === "gemma3_text" || modelType === "gemma3") return GEMMA3_LAYER_NAMES;
  if (modelType === "qwen3_moe") return QWEN3_MOE_LAYER_NAMES;
  return LAYER_NAMES;
}

/**
 * The GGUF name of a Hugging Face tensor, or undefined for tensors loom does not use (e.g. rotary caches).
 * `modelType` (config.json's model_type) selects an architecture's own names where they differ from Llama's; without
 * it, or for any other architecture, the Llama names apply.
 */
export function ggufNameOf(huggingFaceName: string, modelType?: string): string | undefined {
  const global = GLOBAL_NAMES[huggingFaceName];
  if (global) return global;
  const match = /^model\.layers\.(\d+)\.(.+)$/.exec(huggingFaceName);
  if (!match) return undefined;
  const suffix = layerNames(modelType)[match[2]];
  return suffix ? `blk.${match[1]}.${suffix}` : undefined;
}

const EXPERT_PROJECTIONS: Record<string, string> = { gate_proj: "ffn_gate_exps", up_proj: "ffn_up_exps", down_proj: "ffn_down_exps" };

/**
 * For one expert's matrix in a Qwen3-MoE / Qwen2-MoE checkpoint (`model.layers.N.mlp.experts.E.{gate,up,down}_proj.weight`):
 * the 3-D GGUF tensor it is slice `expert` of (`blk.N.ffn_{gate,up,down}_exps.weight`, expert E's rows after expert
 * E-1's, as convert_hf_to_gguf.py stacks them with torch.stack(dim=0)). Undefined for any other name.
 */
export function ggufExpertOf(huggingFaceName: string): { ggufName: string; expert: number } | undefined {
  const match = /^model\.layers\.(\d+)\.mlp\.experts\.(\d+)\.(gate_proj|up_proj|down_proj)\.weight$/.exec(huggingFaceName);
  if (!match) return undefined;
  return { ggufName: `blk.${match[1]}.${EXPERT_PROJECTIONS[match[3]]}.weight`, expert: Number(match[2]) };
}
