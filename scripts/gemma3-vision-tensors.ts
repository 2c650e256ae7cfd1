// The tensors of a Gemma 3 vision tower and projector (Hugging Face names and shapes, mmproj GGUF names and types),
// as convert_hf_to_gguf.py's Gemma3VisionModel writes them and llama.cpp's clip.cpp reads them.
import { GgmlType } from "../kernels/formats/types.js";
import type { Gemma3VisionConfig } from "./model-presets.js";
import type { UniformInit } from "./weight-init.js";
import { type VisionTensorRole, visionInitFor } from "./vision-weight-init.js";

/** The dtypes an mmproj is written in: convert_hf_to_gguf.py --mmproj --outtype f16 (llama.cpp's published files) or f32. */
export type MmprojDtype = "f16" | "f32";

/** Every mmproj dtype, default first. */
export const MMPROJ_DTYPES: readonly MmprojDtype[] = ["f16", "f32"];

/** llama.cpp's default Gemma 3 pooling factor (clip.cpp): the converter writes scale_factor only when it differs. */
export const GEMMA3_DEFAULT_SCALE_FACTOR = 4;

/** One tensor of a generated mmproj. */
export interface PlannedVisionTensor {
  /** The Gemma3ForConditionalGeneration checkpoint name (also the random stream's key). */
  huggingFaceName: string;
  /** The mmproj GGUF name, e.g. `v.blk.0.attn_q.weight`. */
  ggufName: string;
  /** PyTorch order (GGUF's ne is its reverse): [out, in] for matrices, [hidden, 3, p, p] for the patch kernel. */
  shape: number[];
  role: VisionTensorRole;
  init: UniformInit;
  /** soft_emb_norm: Gemma3RMSNorm computes x * (1 + w), so the checkpoint holds the drawn multiplier minus 1 and the GGUF w + 1. */
  normOffset?: number;
}

/** Patches per side of an image: image_size / patch_size. */
export function patchesPerSide(vision: Gemma3VisionConfig): number {
  const { image_size: size, patch_size: patch } = vision.vision_config;
  if (size % patch !== 0) throw new RangeError(`image_size ${size} is not a multiple of patch_size ${patch}`);
  return size / patch;
}

/**
 * The projector's pooling factor per side, as convert_hf_to_gguf.py derives it: patches per side over image tokens per
 * side (sqrt(mm_tokens_per_image)). Throws unless the pooling tiles the patch grid exactly.
 */
export function projectorScaleFactor(vision: Gemma3VisionConfig): number {
  const side = patchesPerSide(vision);
  const tokensPerSide = Math.round(Math.sqrt(vision.mm_tokens_per_image));
  if (tokensPerSide * tokensPerSide !== vision.mm_tokens_per_image || side % tokensPerSide !== 0) {
    throw new RangeError(`mm_tokens_per_image ${vision.mm_tokens_per_image} does not pool ${side} x ${side} patches evenly`);
  }
  return side / tokensPerSide;
}

/**
 * The tensors of `vision` projecting to a text model of `textHidden`, in checkpoint order: patch embedding (a conv
 * kernel and bias), position embedding, per layer layer_norm1, q/k/v/out (weights and biases), layer_norm2, mlp fc1/fc2,
 * then post_layernorm and the projector's mm_input_projection_weight ([vision hidden, text hidden]: it multiplies
 * from the right, so its GGUF ne[0] is the text hidden size, what clip.cpp's clip_n_mmproj_embd reads) and
 * mm_soft_emb_norm.
 */
export function planVisionTensors(vision: Gemma3VisionConfig, textHidden: number): PlannedVisionTensor[] {
  const v = vision.vision_config;
  const hidden = v.hidden_size;
  if (hidden % v.num_attention_heads !== 0) throw new RangeError(`vision hidden_size ${hidden} is not a multiple of ${v.num_attention_heads} heads`);
  projectorScaleFactor(vision);
  const patches = patchesPerSide(vision) ** 2;
  const tensors: PlannedVisionTensor[] = [];
  const add = (huggingFaceName: string, ggufName: string, shape: number[], role: VisionTensorRole) => {
    const normOffset = role === "soft_emb_norm" ? 1 : undefined;
    tensors.push({ huggingFaceName, ggufName, shape, role, init: visionInitFor(role, vision), normOffset });
  };
  const tower = "vision_tower.vision_model.";
  add(`${tower}embeddings.patch_embedding.weight`, "v.patch_embd.weight", [hidden, v.num_channels, v.patch_size, v.patch_size], "patch_embedding");
  add(`${tower}embeddings.patch_embedding.bias`, "v.patch_embd.bias", [hidden], "bias");
  add(`${tower}embeddings.position_embedding.weight`, "v.position_embd.weight", [patches, hidden], "position_embedding");
  for (let layer = 0; layer < v.num_hidden_layers; layer++) {
    const p = `${tower}encoder.layers.${layer}.`;
    const g = `v.blk.${layer}.`;
    add(`${p}layer_norm1.weight`, `${g}ln1.weight`, [hidden], "layer_norm");
    add(`${p}layer_norm1.bias`, `${g}ln1.bias`, [hidden], "layer_norm_bias");
    for (const [hf, gguf, role] of [["q_proj", "attn_q", "attn_q"], ["k_proj", "attn_k", "attn_k"], ["v_proj", "attn_v", "attn_v"], ["out_proj", "attn_out", "attn_output"]] as const) {
      add(`${p}self_attn.${hf}.weight`, `${g}${gguf}.weight`, [hidden, hidden], role);
      add(`${p}self_attn.${hf}.bias`, `${g}${gguf}.bias`, [hidden], "bias");
    }
    add(`${p}layer_norm2.weight`, `${g}ln2.weight`, [hidden], "layer_norm");
    add(`${p}layer_norm2.bias`, `${g}ln2.bias`, [hidden], "layer_norm_bias");
    add(`${p}mlp.fc1.weight`, `${g}ffn_up.weight`, [v.intermediate_size, hidden], "ffn_up");
    add(`${p}mlp.fc1.bias`, `${g}ffn_up.bias`, [v.intermediate_size], "bias");
    add(`${p}mlp.fc2.weight`, `${g}ffn_down.weight`, [hidden, v.intermediate_size], "ffn_down");
    add(`${p}mlp.fc2.bias`, `${g}ffn_down.bias`, [hidden], "bias");
  }
  add(`${tower}post_layernorm.weight`, "v.post_ln.weight", [hidden], "layer_norm");
  add(`${tower}post_layernorm.bias`, "v.post_ln.bias", [hidden], "layer_norm_bias");
  add("multi_modal_projector.mm_input_projection_weight", "mm.input_projection.weight", [hidden, textHidden], "input_projection");
  add("multi_modal_projector.mm_soft_emb_norm.weight", "mm.soft_emb_norm.weight", [hidden], "soft_emb_norm");
  return tensors;
}

/**
 * The GGML type of a vision tensor, as convert_hf_to_gguf.py's Gemma3VisionModel.tensor_force_quant and the base
 * rules choose it: mm.input_projection is F16 whatever the output type (llama.cpp issue 13025), the embeddings (patch
 * kernel and position embedding, Hugging Face names with `.embeddings.`) F32, vectors F32, other matrices `dtype`.
 */
export function mmprojTensorType(tensor: PlannedVisionTensor, dtype: MmprojDtype): GgmlType {
  if (tensor.role === "input_projection") return GgmlType.F16;
  if (tensor.shape.length === 1 || tensor.huggingFaceName.includes(".embeddings.")) return GgmlType.F32;
  return dtype === "f16" ? GgmlType.F16 : GgmlType.F32;
}
