// Output formats and dtypes of the generator, and which GGML type each tensor gets in a GGUF file.
import { GgmlType } from "../kernels/formats/types.js";
import { f16ToF32, f32ToF16 } from "../kernels/formats/f16.js";
import { bf16ToF32, f32ToBf16 } from "../kernels/formats/bf16.js";
import type { PlannedTensor } from "./model-tensors.js";

/** File formats the generator writes. */
export type ModelFormat = "gguf" | "hf";

/**
 * Weight dtypes. `q4_k_m` and `q5_k_m` are Q4_K_M- and Q5_K_M-like mixes: Q4_K (Q5_K) for most matrices, Q6_K for
 * ffn_down, the embedding and the output matrix; `q6_k` is Q6_K throughout; `q4_1`, `q5_0` and `q5_1` put every
 * matrix in that type, as `q4_0` and `q8_0` do; `mxfp4` is llama.cpp's MXFP4_MOE (MXFP4 expert stacks, Q8_0 for every
 * other matrix). Hugging Face directories take only f32, f16 and bf16 (safetensors has no GGML block types).
 */
export type ModelDtype = "f32" | "f16" | "bf16" | "q8_0" | "q4_0" | "q4_1" | "q5_0" | "q5_1" | "q4_k_m" | "q5_k_m" | "q6_k" | "mxfp4";

/** Every dtype, in the order the CLI lists them. */
export const MODEL_DTYPES: readonly ModelDtype[] = ["f32", "f16", "bf16", "q8_0", "q4_0", "q4_1", "q5_0", "q5_1", "q4_k_m", "q5_k_m", "q6_k", "mxfp4"];

/** Dtypes a Hugging Face (safetensors) directory can hold. */
export const HF_DTYPES: readonly ModelDtype[] = ["f32", "f16", "bf16"];

/** llama.cpp's `general.file_type` (enum llama_ftype) for each dtype. */
export const GGUF_FILE_TYPE: Readonly<Record<ModelDtype, number>> = {
  f32: 0, f16: 1, q4_0: 2, q4_1: 3, q8_0: 7, q5_0: 8, q5_1: 9, q4_k_m: 15, q5_k_m: 17, q6_k: 18, bf16: 32, mxfp4: 38,
};

/** Parses a dtype name (case-insensitive); throws listing the valid ones. */
export function parseModelDtype(text: string): ModelDtype {
  const dtype = text.toLowerCase() as ModelDtype;
  if (!MODEL_DTYPES.includes(dtype)) throw new RangeError(`unknown dtype '${text}'; choose one of: ${MODEL_DTYPES.join(", ")}`);
  return dtype;
}

/** Throws unless `dtype` can be written in `format`. */
export function checkFormatDtype(format: ModelFormat, dtype: ModelDtype): void {
  if (format === "hf" && !HF_DTYPES.includes(dtype)) {
    throw new RangeError(`safetensors cannot hold ${dtype} (it has no GGML block types); write hf as ${HF_DTYPES.join(", ")}, or use --format gguf`);
  }
}

const BLOCK_TYPES: Partial<Record<ModelDtype, GgmlType>> = {
  f32: GgmlType.F32, f16: GgmlType.F16, bf16: GgmlType.BF16, q8_0: GgmlType.Q8_0, q4_0: GgmlType.Q4_0,
  q4_1: GgmlType.Q4_1, q5_0: GgmlType.Q5_0, q5_1: GgmlType.Q5_1,
};

/** The K-quant of most matrices in each K-quant mix (the rest, see ggufTensorType, are Q6_K). */
const K_QUANT_MIXES: Partial<Record<ModelDtype, GgmlType>> = { q4_k_m: GgmlType.Q4_K, q5_k_m: GgmlType.Q5_K, q6_k: GgmlType.Q6_K };

/**
 * The GGML type of a tensor in a GGUF file of `dtype`. Vectors (norms, biases) stay F32, as llama.cpp's converter
 * keeps them (gpt-oss's 2-D expert biases too: the converter quantizes only names ending in .weight), and so does a
 * Qwen3-MoE or gpt-oss router (ffn_gate_inp): the converter writes it F32 whatever the output type and
 * llama.cpp's quantizer never quantizes `ffn_gate_inp.weight` (llama-quant.cpp, tensor_allows_quantization). Experts
 * take their dense counterparts' types (the quantizer's categories match by substring: ffn_down_exps is an ffn_down,
 * so Q6_K in the K-quant mixes), each expert's rows quantized as rows of their own. A matrix whose row length is not
 * a multiple of the type's block falls back as llama.cpp's quantizer does (llama-quant.cpp, tensor_type_fallback):
 * Q4_K to Q5_0, Q5_K to Q5_1, Q6_K to Q8_0, and a 32-block type (or a fallback whose block does not fit) to F16.
 * `mxfp4` is the quantizer's MXFP4_MOE: a stack of more than one expert (a 3-D tensor, ne[2] > 1) is MXFP4, every other
 * matrix Q8_0, the output and the embedding included (tied or not); routers and vectors stay F32 as above.
 * NOTE: like the dense mixes (no use_more_bits layer choice for ffn_down/attn_v), the quantizer's rules for models of
 * exactly 8 experts (Mixtral: attn_k/attn_v Q8_0, attn_output Q5_K) are not mirrored; they would touch tiny-qwen3moe,
 * not Qwen3-30B-A3B's 128 experts.
 */
export function ggufTensorType(tensor: PlannedTensor, dtype: ModelDtype): GgmlType {
  if (tensor.shape.length === 1 || tensor.role === "router" || tensor.role === "bias") return GgmlType.F32;
  const rowLength = tensor.shape[tensor.shape.length - 1];
  if (dtype === "mxfp4") {
    // shape is outermost first: [experts, rows, row length] for an expert stack.
    const type = tensor.shape.length === 3 && tensor.shape[0] > 1 ? GgmlType.MXFP4 : GgmlType.Q8_0;
    return rowLength % 32 === 0 ? type : GgmlType.F16;
  }
  const mix = K_QUANT_MIXES[dtype];
  if (mix !== undefined) {
    const wantsQ6 =
      mix === GgmlType.Q6_K || tensor.role === "ffn_down" || tensor.role === "expert_down" || tensor.role === "embedding" || tensor.role === "output";
    if (rowLength % 256 === 0) return wantsQ6 ? GgmlType.Q6_K : mix;
    if (rowLength % 32 === 0) return wantsQ6 ? GgmlType.Q8_0 : mix === GgmlType.Q5_K ? GgmlType.Q5_1 : GgmlType.Q5_0;
    return GgmlType.F16;
  }
  const type = BLOCK_TYPES[dtype] as GgmlType;
  if (type !== GgmlType.F32 && type !== GgmlType.F16 && type !== GgmlType.BF16 && rowLength % 32 !== 0) return GgmlType.F16;
  return type;
}

/**
 * Rounds values in place to what an f16/bf16 checkpoint would hold, for tensors GGUF keeps in F32 (vectors, routers): converting a
 * half-precision checkpoint gives exactly these (the converter upcasts them), so the GGUF and the Hugging Face
 * directory of the same dtype hold the same numbers.
 */
export function roundToCheckpointPrecision(values: Float32Array, dtype: ModelDtype): void {
  if (dtype === "f16") for (let i = 0; i < values.length; i++) values[i] = f16ToF32(f32ToF16(values[i]));
  else if (dtype === "bf16") for (let i = 0; i < values.length; i++) values[i] = bf16ToF32(f32ToBf16(values[i]));
}
