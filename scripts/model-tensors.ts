// The tensors of a model shape (Hugging Face names and shapes, GGUF names) and their seeded values, row chunk by row chunk.
import { ggufNameOf } from "../engine/model/tensor-names.js";
import { type HuggingFaceConfig, headDimOf, isGemma3 } from "./model-presets.js";
import { fillUniform, tensorStream } from "./random-weights.js";
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
}

/**
 * The tensors of a model in `config`, in checkpoint order (embedding, layers, final norm, untied output).
 * Gemma 3 layers: input_layernorm, q/k/v, q_norm/k_norm, o, post_attention_layernorm, pre_feedforward_layernorm,
 * gate/up/down, post_feedforward_layernorm; q and k are not permuted (only the GGUF `llama` architecture is).
 */
export function planTensors(config: HuggingFaceConfig): PlannedTensor[] {
  const hidden = config.hidden_size;
  const headDim = headDimOf(config);
  const qRows = config.num_attention_heads * headDim;
  const kvRows = config.num_key_value_heads * headDim;
  const isLlama = config.model_type === "llama";
  const gemma = isGemma3(config);
  const hasQkvBias = config.model_type === "qwen2" || config.attention_bias === true;
  const tensors: PlannedTensor[] = [];
  const add = (huggingFaceName: string, shape: number[], role: TensorRole, ggufPermuteHeads?: number) => {
    const ggufName = ggufNameOf(huggingFaceName, config.model_type);
    if (!ggufName) throw new Error(`no GGUF name for ${huggingFaceName}`);
    const isNorm = role === "norm" || role === "final_norm" || role === "qk_norm" || role === "post_norm";
    const normOffset = gemma && isNorm ? 1 : undefined;
    tensors.push({ huggingFaceName, ggufName, shape, role, init: initFor(role, config), ggufPermuteHeads, normOffset });
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
    if (config.model_type === "qwen3" || gemma) {
      add(`${p}self_attn.q_norm.weight`, [headDim], "qk_norm");
      add(`${p}self_attn.k_norm.weight`, [headDim], "qk_norm");
    }
    add(`${p}self_attn.o_proj.weight`, [hidden, qRows], "attn_output");
    add(`${p}post_attention_layernorm.weight`, [hidden], gemma ? "post_norm" : "norm");
    if (gemma) add(`${p}pre_feedforward_layernorm.weight`, [hidden], "norm");
    add(`${p}mlp.gate_proj.weight`, [config.intermediate_size, hidden], "ffn_gate");
    add(`${p}mlp.up_proj.weight`, [config.intermediate_size, hidden], "ffn_up");
    add(`${p}mlp.down_proj.weight`, [hidden, config.intermediate_size], "ffn_down");
    if (gemma) add(`${p}post_feedforward_layernorm.weight`, [hidden], "post_norm");
  }
  add("model.norm.weight", [hidden], "final_norm");
  if (!config.tie_word_embeddings) add("lm_head.weight", [config.vocab_size, hidden], "output");
  return tensors;
}

/** Elements in a tensor. */
export function elementCount(tensor: PlannedTensor): number {
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
export function* tensorValueChunks(tensor: PlannedTensor, seed: number, rowMultiple = 1): Generator<Float32Array> {
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
