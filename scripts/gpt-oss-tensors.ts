// gpt-oss's checkpoint tensors (transformers' GptOssForCausalLM names and shapes) and the GGUF tensors llama.cpp's
// converter (conversion/gpt_oss.py) makes of them: fused experts are cut, transposed and split into gate and up.
import type { ExpertCut, PlannedTensor } from "./model-tensors.js";
import { type HuggingFaceConfig, headDimOf } from "./model-presets.js";
import { type TensorRole, initFor } from "./weight-init.js";

/**
 * The tensors of a gpt-oss model in checkpoint order: embedding; per layer input_layernorm, q/k/v/o with biases,
 * self_attn.sinks [heads], post_attention_layernorm (GGUF post_attention_norm), the router mlp.router [experts, hidden]
 * with its bias, and the experts fused as GptOssExperts holds them:
 * - mlp.experts.gate_up_proj [experts, hidden, 2 x width] (inputs first; output column 2j is gate unit j, 2j + 1 up unit
 *   j) and gate_up_proj_bias [experts, 2 x width], which the converter transposes and splits by parity into
 *   ffn_gate_exps / ffn_up_exps [experts, width, hidden] and their biases [experts, width];
 * - mlp.experts.down_proj [experts, width, hidden], transposed into ffn_down_exps [experts, hidden, width], and
 *   down_proj_bias [experts, hidden] (ffn_down_exps.bias as it is);
 * then the final norm and the untied lm_head. q and k are not permuted: gpt-oss's RoPE is NeoX-style.
 */
export function planGptOssTensors(config: HuggingFaceConfig): PlannedTensor[] {
  const hidden = config.hidden_size;
  const headDim = headDimOf(config);
  const qRows = config.num_attention_heads * headDim;
  const kvRows = config.num_key_value_heads * headDim;
  const experts = config.num_local_experts;
  const width = config.intermediate_size;
  if (!experts) throw new RangeError("a gpt_oss config needs num_local_experts");
  if (config.tie_word_embeddings) throw new RangeError("gpt-oss has an untied lm_head; llama.cpp's gpt-oss loader requires output.weight");
  const tensors: PlannedTensor[] = [];
  const add = (huggingFaceName: string, ggufName: string, shape: number[], role: TensorRole, ggufCuts?: ExpertCut[]) => {
    tensors.push({ huggingFaceName, ggufName, shape, role, init: initFor(role, config), ggufCuts });
  };
  add("model.embed_tokens.weight", "token_embd.weight", [config.vocab_size, hidden], "embedding");
  for (let layer = 0; layer < config.num_hidden_layers; layer++) {
    const p = `model.layers.${layer}.`;
    const b = `blk.${layer}.`;
    add(`${p}input_layernorm.weight`, `${b}attn_norm.weight`, [hidden], "norm");
    for (const [projection, gguf, rows, role] of [
      ["q_proj", "attn_q", qRows, "attn_q"], ["k_proj", "attn_k", kvRows, "attn_k"], ["v_proj", "attn_v", kvRows, "attn_v"],
    ] as const) {
      add(`${p}self_attn.${projection}.weight`, `${b}${gguf}.weight`, [rows, hidden], role);
      add(`${p}self_attn.${projection}.bias`, `${b}${gguf}.bias`, [rows], "bias");
    }
    add(`${p}self_attn.o_proj.weight`, `${b}attn_output.weight`, [hidden, qRows], "attn_output");
    add(`${p}self_attn.o_proj.bias`, `${b}attn_output.bias`, [hidden], "bias");
    add(`${p}self_attn.sinks`, `${b}attn_sinks.weight`, [config.num_attention_heads], "attn_sinks");
    add(`${p}post_attention_layernorm.weight`, `${b}post_attention_norm.weight`, [hidden], "norm");
    add(`${p}mlp.router.weight`, `${b}ffn_gate_inp.weight`, [experts, hidden], "router");
    add(`${p}mlp.router.bias`, `${b}ffn_gate_inp.bias`, [experts], "bias");
    // The fused tensors' own GGUF names are never written: each is replaced by its cuts.
    add(`${p}mlp.experts.gate_up_proj`, `${b}ffn_gate_up_exps.weight`, [experts, hidden, 2 * width], "expert_gate", [
      { ggufName: `${b}ffn_gate_exps.weight`, role: "expert_gate", transpose: true, everyOther: 0 },
      { ggufName: `${b}ffn_up_exps.weight`, role: "expert_up", transpose: true, everyOther: 1 },
    ]);
    add(`${p}mlp.experts.gate_up_proj_bias`, `${b}ffn_gate_up_exps.bias`, [experts, 2 * width], "bias", [
      { ggufName: `${b}ffn_gate_exps.bias`, role: "bias", transpose: false, everyOther: 0 },
      { ggufName: `${b}ffn_up_exps.bias`, role: "bias", transpose: false, everyOther: 1 },
    ]);
    add(`${p}mlp.experts.down_proj`, `${b}ffn_down_exps.weight`, [experts, width, hidden], "expert_down", [
      { ggufName: `${b}ffn_down_exps.weight`, role: "expert_down", transpose: true },
    ]);
    add(`${p}mlp.experts.down_proj_bias`, `${b}ffn_down_exps.bias`, [experts, hidden], "bias");
  }
  add("model.norm.weight", "output_norm.weight", [hidden], "final_norm");
  add("lm_head.weight", "output.weight", [config.vocab_size, hidden], "output");
  return tensors;
}
