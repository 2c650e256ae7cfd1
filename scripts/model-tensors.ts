// The tensors of a model shape (Hugging Face names and shapes, GGUF names) and their seeded values, row chunk by row chunk.
import { ggufExpertOf, ggufNameOf } from "../engine/model/tensor-names.js";
import { planGemma4Tensors } from "./gemma4-tensors.js";
import { planGptOssTensors } from "./gpt-oss-tensors.js";
import { type HuggingFaceConfig, headDimOf, isGemma3, isGemma4, isGptOss, isMinistral3, isQwen3Moe } from "./model-presets.js";
import { fillUniform, skipStream, tensorStream } from "./random-weights.js";
import { type TensorRole, type UniformInit, initFor } from "./weight-init.js";

/** One tensor of a generated model. */
export interface PlannedTensor {
  /** The Hugging Face checkpoint name, e.g. `model.layers.0.self_attn.q_proj.weight` (also the random stream's key). */
  huggingFaceName: string;
  /** The GGUF name, e.g. `blk.0.attn_q.weight`. */
  ggufName: string;
  /** PyTorch order: [rows, rowLength] for matrices, [n] for vectors. */
  shape: number[];
  role: TensorRole;
  init: UniformInit;
  /**
   * For the GGUF `llama` architecture, attn_q / attn_k rows are permuted per head as llama.cpp's converter does
   * (reshape(heads, 2, head_dim/2, in).swapaxes(1, 2)); this is the head count to permute over, else undefined.
   */
  ggufPermuteHeads?: number;
  /**
   * Gemma 3's norms compute x * (1 + w): the checkpoint holds w, which is the drawn multiplier minus this offset (1),
   * and the GGUF file holds w + 1, as llama.cpp's converter adds 1 to every Gemma 3 `norm.weight`. Undefined elsewhere.
   */
  normOffset?: number;
  /**
   * Qwen3-MoE experts: this checkpoint tensor (one expert's [rows, rowLength] matrix) is slice `index` of the 3-D GGUF
   * tensor `ggufName`, which stacks `count` experts (expert e's rows after expert e-1's). Undefined elsewhere.
   */
  ggufExpert?: { index: number; count: number };
  /**
   * gpt-oss's fused experts: this checkpoint tensor ([experts, a, b], or [experts, n] for a bias) is not written to GGUF
   * as itself (`ggufName` is unused) but as these tensors, each cut from it expert by expert. Undefined elsewhere.
   */
  ggufCuts?: readonly ExpertCut[];
}

/** One GGUF tensor cut from a fused-experts checkpoint tensor, as llama.cpp's converter cuts gpt-oss's. */
export interface ExpertCut {
  ggufName: string;
  /** The role of the cut (its GGUF type follows it: expert_gate / expert_up / expert_down, or bias). */
  role: TensorRole;
  /** Transpose each expert's [a, b] matrix to [b, a] (transformers holds experts inputs-first; GGUF rows are outputs). */
  transpose: boolean;
  /** Keep every other row after transposing (of a bias: every other entry), from this one: gate (0) and up (1). */
  everyOther?: 0 | 1;
}

/**
 * The tensors of a model in `config`, in checkpoint order (embedding, layers, final norm, untied output).
 * Gemma 3 layers: input_layernorm, q/k/v, q_norm/k_norm, o, post_attention_layernorm, pre_feedforward_layernorm,
 * gate/up/down, post_feedforward_layernorm; q and k are not permuted (only the GGUF `llama` architecture is).
 * Qwen3-MoE layers: Qwen3's attention, post_attention_layernorm, the router mlp.gate ([experts, hidden]) and each expert's
 * gate_proj, up_proj ([moe_intermediate_size, hidden]) and down_proj ([hidden, moe_intermediate_size]), expert by
 * expert, as Qwen3MoeForCausalLM names them; ggufTensorGroups stacks the experts into llama.cpp's 3-D tensors.
 */
export function planTensors(config: HuggingFaceConfig): PlannedTensor[] {
  if (isGptOss(config)) return planGptOssTensors(config);
  if (isGemma4(config)) return planGemma4Tensors(config);
  const hidden = config.hidden_size;
  const headDim = headDimOf(config);
  const qRows = config.num_attention_heads * headDim;
  const kvRows = config.num_key_value_heads * headDim;
  // The converter permutes q/k for the GGUF llama architecture and for Ministral 3 (a LlamaModel in convert_hf_to_gguf.py).
  const isLlama = config.model_type === "llama" || isMinistral3(config);
  const gemma = isGemma3(config);
  const hasQkvBias = config.model_type === "qwen2" || config.attention_bias === true;
  const moe = isQwen3Moe(config);
  const experts = moe ? moeShape(config) : undefined;
  const tensors: PlannedTensor[] = [];
  const add = (huggingFaceName: string, shape: number[], role: TensorRole, ggufPermuteHeads?: number) => {
    const expert = ggufExpertOf(huggingFaceName);
    const ggufName = expert?.ggufName ?? ggufNameOf(huggingFaceName, config.model_type);
    if (!ggufName) throw new Error(`no GGUF name for ${huggingFaceName}`);
    const isNorm = role === "norm" || role === "final_norm" || role === "qk_norm" || role === "post_norm";
    const normOffset = gemma && isNorm ? 1 : undefined;
    const ggufExpert = expert && experts ? { index: expert.expert, count: experts.count } : undefined;
    tensors.push({ huggingFaceName, ggufName, shape, role, init: initFor(role, config), ggufPermuteHeads, normOffset, ggufExpert });
  };
  add("model.embed_tokens.weight", [config.vocab_size, hidden], "embedding");
  for (let layer = 0; layer < config.num_hidden_layers; layer++) {
    const p = `model.layers.${layer}.`;
    add(`${p}input_layernorm.weight`, [hidden], "norm");
    add(`${p}self_attn.q_proj.weight`, [qRows, hidden], "attn_q", isLlama ? config.num_attention_heads : undefined);
    add(`${p}self_attn.k_proj.weight`, [kvRows, hidden], "attn_k", isLlama ? config.num_key_value_heads : undefined);
    add(`${p}self_attn.v_proj.weight`, [kvRows, hidden], "attn_v");
    if (hasQkvBias) {
      add(`${p}self_attn.q_proj.bias`, [qRows], "bias", isLlama ? config.num_attention_heads : undefined);
      add(`${p}self_attn.k_proj.bias`, [kvRows], "bias", isLlama ? config.num_key_value_heads : undefined);
      add(`${p}self_attn.v_proj.bias`, [kvRows], "bias");
    }
    if (config.model_type === "qwen3" || moe || gemma) {
      add(`${p}self_attn.q_norm.weight`, [headDim], "qk_norm");
      add(`${p}self_attn.k_norm.weight`, [headDim], "qk_norm");
    }
    add(`${p}self_attn.o_proj.weight`, [hidden, qRows], "attn_output");
    add(`${p}post_attention_layernorm.weight`, [hidden], gemma ? "post_norm" : "norm");
    if (gemma) add(`${p}pre_feedforward_layernorm.weight`, [hidden], "norm");
    if (experts) {
      add(`${p}mlp.gate.weight`, [experts.count, hidden], "router");
      for (let e = 0; e < experts.count; e++) {
        add(`${p}mlp.experts.${e}.gate_proj.weight`, [experts.width, hidden], "expert_gate");
        add(`${p}mlp.experts.${e}.up_proj.weight`, [experts.width, hidden], "expert_up");
        add(`${p}mlp.experts.${e}.down_proj.weight`, [hidden, experts.width], "expert_down");
      }
    } else {
      add(`${p}mlp.gate_proj.weight`, [config.intermediate_size, hidden], "ffn_gate");
      add(`${p}mlp.up_proj.weight`, [config.intermediate_size, hidden], "ffn_up");
      add(`${p}mlp.down_proj.weight`, [hidden, config.intermediate_size], "ffn_down");
    }
    if (gemma) add(`${p}post_feedforward_layernorm.weight`, [hidden], "post_norm");
  }
  add("model.norm.weight", [hidden], "final_norm");
  if (!config.tie_word_embeddings) add("lm_head.weight", [config.vocab_size, hidden], "output");
  return tensors;
}

/**
 * A Qwen3-MoE config's experts: count and width. Throws unless every layer is MoE (decoder_sparse_step 1, no
 * mlp_only_layers), the only layout llama.cpp's qwen3moe loader takes.
 */
function moeShape(config: HuggingFaceConfig): { count: number; width: number } {
  const count = config.num_experts;
  const used = config.num_experts_per_tok;
  const width = config.moe_intermediate_size;
  if (!count || !used || !width || used > count) {
    throw new RangeError(`a qwen3_moe config needs num_experts, num_experts_per_tok <= num_experts and moe_intermediate_size (got ${count}, ${used}, ${width})`);
  }
  if ((config.decoder_sparse_step ?? 1) !== 1 || (config.mlp_only_layers ?? []).length > 0) {
    throw new RangeError("qwen3_moe with dense layers (decoder_sparse_step > 1 or mlp_only_layers) is not supported: llama.cpp's qwen3moe makes every layer MoE");
  }
  return { count, width };
}

/**
 * One GGUF tensor: a checkpoint tensor, several stacked into one 3-D tensor (Qwen3-MoE experts), or a cut of a
 * fused-experts tensor (gpt-oss).
 */
export interface GgufTensorGroup {
  ggufName: string;
  /** PyTorch order: [experts, rows, rowLength] for stacked or cut experts, else the part's own shape. */
  shape: number[];
  /** The checkpoint tensors whose values follow one another in the GGUF tensor (one, or each expert in order). */
  parts: PlannedTensor[];
  /** For a cut: how it is cut from its one part. */
  cut?: ExpertCut;
}

/** The PyTorch-order shape of a cut of a fused tensor of shape `[experts, a, b]` or `[experts, n]`. */
export function cutShape(shape: readonly number[], cut: ExpertCut): number[] {
  const [experts, ...slice] = shape;
  const [rows, ...rest] = cut.transpose ? [slice[1], slice[0]] : slice;
  return [experts, cut.everyOther === undefined ? rows : rows / 2, ...rest];
}

/**
 * The GGUF tensors of planned checkpoint tensors, in order of first appearance: each tensor alone, except the experts
 * of a layer, stacked as convert_hf_to_gguf.py's Qwen2MoeModel.modify_tensors does (torch.stack of experts 0..E-1 on
 * a new first axis): `blk.N.ffn_gate_exps.weight` / `ffn_up_exps` [E, n_ff_exp, n_embd] and `ffn_down_exps`
 * [E, n_embd, n_ff_exp] in PyTorch order, GGML ne {n_embd, n_ff_exp, E} and {n_ff_exp, n_embd, E}.
 */
export function ggufTensorGroups(planned: readonly PlannedTensor[]): GgufTensorGroup[] {
  const groups: GgufTensorGroup[] = [];
  const stacks = new Map<string, GgufTensorGroup>();
  for (const tensor of planned) {
    if (tensor.ggufCuts) {
      for (const cut of tensor.ggufCuts) groups.push({ ggufName: cut.ggufName, shape: cutShape(tensor.shape, cut), parts: [tensor], cut });
      continue;
    }
    if (!tensor.ggufExpert) {
      groups.push({ ggufName: tensor.ggufName, shape: tensor.shape, parts: [tensor] });
      continue;
    }
    let group = stacks.get(tensor.ggufName);
    if (!group) {
      group = { ggufName: tensor.ggufName, shape: [tensor.ggufExpert.count, ...tensor.shape], parts: [] };
      stacks.set(tensor.ggufName, group);
      groups.push(group);
    }
    group.parts[tensor.ggufExpert.index] = tensor;
  }
  for (const group of stacks.values()) {
    const count = group.shape[0];
    for (let e = 0; e < count; e++) {
      const part = group.parts[e];
      if (!part || part.shape.join() !== group.shape.slice(1).join()) throw new Error(`${group.ggufName}: expert ${e} is missing or has another shape`);
    }
  }
  return groups;
}

/** Elements in a tensor. */
export function elementCount(tensor: Pick<PlannedTensor, "shape">): number {
  return tensor.shape.reduce((a, b) => a * b, 1);
}

/** Target values per chunk: large enough to amortise calls, small enough to keep memory flat. */
const CHUNK_ELEMENTS = 1 << 20;

/**
 * The tensor's values in checkpoint (Hugging Face) order, as consecutive chunks of whole rows. Chunks hold a
 * multiple of `rowMultiple` rows (e.g. head_dim, so a per-head permutation applies chunk by chunk).
 * A tensor with a `normOffset` yields the drawn multiplier minus the offset (in f32), the form its checkpoint holds.
 * NOTE: the values do not depend on the chunking: one stream per tensor is drawn in order.
 */
export function* tensorValueChunks(
  tensor: Pick<PlannedTensor, "huggingFaceName" | "shape" | "init" | "normOffset">, seed: number, rowMultiple = 1,
): Generator<Float32Array> {
  const rowLength = tensor.shape.length === 1 ? tensor.shape[0] : tensor.shape[tensor.shape.length - 1];
  const rows = elementCount(tensor) / rowLength;
  const rowsPerChunk = Math.max(rowMultiple, Math.floor(CHUNK_ELEMENTS / rowLength / rowMultiple) * rowMultiple);
  const stream = tensorStream(seed, tensor.huggingFaceName);
  const { center, halfWidth, rowLogScale } = tensor.init;
  const rowStream = rowLogScale ? tensorStream(seed, `${tensor.huggingFaceName}#row-scale`) : undefined;
  // E[exp(2u)] for u uniform in [-w, w] is sinh(2w) / 2w: dividing by its root keeps the mean square at halfWidth^2/3.
  const rowNormaliser = rowLogScale ? 1 / Math.sqrt(Math.sinh(2 * rowLogScale) / (2 * rowLogScale)) : 1;
  for (let row = 0; row < rows; row += rowsPerChunk) {
    const chunkRows = Math.min(rowsPerChunk, rows - row);
    const chunk = new Float32Array(chunkRows * rowLength);
    fillUniform(chunk, stream, center, halfWidth);
    if (rowStream && rowLogScale) {
      const logScales = new Float32Array(chunkRows);
      fillUniform(logScales, rowStream, 0, rowLogScale);
      for (let r = 0; r < chunkRows; r++) {
        const scale = Math.exp(logScales[r]) * rowNormaliser;
        const values = chunk.subarray(r * rowLength, (r + 1) * rowLength);
        for (let i = 0; i < rowLength; i++) values[i] *= scale;
      }
    }
    if (tensor.normOffset) for (let i = 0; i < chunk.length; i++) chunk[i] -= tensor.normOffset;
    yield chunk;
  }
}

/**
 * The values of a cut (see ExpertCut), one expert at a time: each expert's slice of the fused tensor is drawn from
 * its place in the tensor's stream (so the values are the checkpoint's), transposed and thinned as the cut says.
 */
export function* cutValueChunks(tensor: PlannedTensor, cut: ExpertCut, seed: number): Generator<Float32Array> {
  if (tensor.init.rowLogScale || tensor.normOffset) throw new Error(`${tensor.huggingFaceName}: a fused-experts tensor has no row scale or norm offset`);
  const [experts, ...slice] = tensor.shape;
  const sliceLength = slice.reduce((a, b) => a * b, 1);
  // A bias slice [n] is a column: n rows of one value.
  const [rows, columns] = slice.length === 2 ? slice : [slice[0], 1];
  for (let expert = 0; expert < experts; expert++) {
    const stream = tensorStream(seed, tensor.huggingFaceName);
    skipStream(stream, expert * sliceLength);
    const values = new Float32Array(sliceLength);
    fillUniform(values, stream, tensor.init.center, tensor.init.halfWidth);
    // After an optional transpose the slice is [outRows, outColumns]; keep the rows of the cut's parity.
    const [outRows, outColumns] = cut.transpose ? [columns, rows] : [rows, columns];
    const step = cut.everyOther === undefined ? 1 : 2;
    const first = cut.everyOther ?? 0;
    const out = new Float32Array((outRows / step) * outColumns);
    let o = 0;
    for (let r = first; r < outRows; r += step) {
      for (let c = 0; c < outColumns; c++) out[o++] = cut.transpose ? values[c * columns + r] : values[r * columns + c];
    }
    yield out;
  }
}

/**
 * Permutes rows (or vector entries) within each head of `headDim` as llama.cpp's convert_hf_to_gguf.py does for the
 * llama architecture's q/k: GGUF row h*headDim + 2i + j holds checkpoint row h*headDim + j*headDim/2 + i.
 * `values` holds whole heads (`rowLength` values per row); returns a new array.
 */
export function permuteForGguf(values: Float32Array, headDim: number, rowLength: number): Float32Array {
  const out = new Float32Array(values.length);
  const headValues = headDim * rowLength;
  const half = headDim / 2;
  for (let head = 0; head * headValues < values.length; head++) {
    const base = head * headValues;
    for (let i = 0; i < half; i++) {
      for (let j = 0; j < 2; j++) {
        const from = base + (j * half + i) * rowLength;
        const to = base + (2 * i + j) * rowLength;
        out.set(values.subarray(from, from + rowLength), to);
      }
    }
  }
  return out;
}
