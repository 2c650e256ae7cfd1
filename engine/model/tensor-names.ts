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
 * The GGUF name of a Hugging Face tensor, or undefined for tensors loom does not use (e.g. rotary caches).
 * `modelType` (config.json's model_type) selects an architecture's own names where they differ from Llama's; without
 * it, or for any other architecture, the Llama names apply.
 */
export function ggufNameOf(huggingFaceName: string, modelType?: string): string | undefined {
  const global = GLOBAL_NAMES[huggingFaceName];
  if (global) return global;
  const match = /^model\.layers\.(\d+)\.(.+)$/.exec(huggingFaceName);
  if (!match) return undefined;
  const names = modelType === "gemma3_text" || modelType === "gemma3" ? GEMMA3_LAYER_NAMES : LAYER_NAMES;
  const suffix = names[match[2]];
  return suffix ? `blk.${match[1]}.${suffix}` : undefined;
}
