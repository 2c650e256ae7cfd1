// Initialisation scales of the random-weight Gemma 3 vision tower (SigLIP) and projector, written as an mmproj GGUF.
// Chosen so activations stay finite and O(1)-O(10) through every layer, image tokens differ from one another and
// from image to image, and the projected tokens have the scale of the text model's (scaled) token embeddings.
//
// - Pixels arrive normalised to [-1, 1] (mean and std 0.5). The patch kernel is uniform with std 1/sqrt(3 p^2), so
//   each patch's embedding has components of about the pixels' RMS; the position embedding adds std POSITION_STD,
//   below that, so an image's content, not only where a patch sits, decides its tokens.
// - Each layer is pre-LayerNorm (ln1, ln2: weight 1 +- 20%, bias std LN_BIAS_STD) with a residual add and no post
//   norm, as SigLIP's. q and k have std QK_GAIN/sqrt(hidden) (attention scores of std about QK_GAIN^2, as the text
//   models), v and ffn_up 1/sqrt(hidden), attn_out and ffn_down RESIDUAL_GAIN/sqrt(fan_in): each layer adds about 1 per
//   component to the residual stream, which post_ln then normalises. Linear biases have std VISION_BIAS_STD: small,
//   since a bias adds the same vector to every token and the pooled tokens would converge on it.
// - The projector (llama.cpp's gemma3 graph): average-pool scale_factor^2 patches per token, RMS-normalise, multiply by
//   soft_emb_norm (1 +- 20%; the checkpoint holds w and the GGUF w + 1, as Gemma3RMSNorm and the converter do), project
//   with std 1/sqrt(vision hidden). The projected tokens then have components of about 1: the scale of Gemma 3's token
//   embeddings after the text model multiplies them by sqrt(hidden) (image embeddings are not multiplied).
// Measured with scripts/gemma3-vision-forward.ts (llama.cpp's graph in plain float32) on two 112 px test images
// (gradients, and 14 px blocks of random colours); "spread" is the RMS of the tokens' deviation from their mean token
// over the tokens' RMS, "differ" the RMS of the two images' token difference over one's:
//   tiny-gemma3 (2 layers):             token RMS 0.95-0.97, spread 0.90-0.93, differ 1.09, residual RMS <= 1.14
//   27 layers at tiny width:            token RMS 0.98-1.03, spread 0.50-0.57, differ 0.80, residual RMS 0.7 -> 3.7
//   gemma3-27b's widths (1152, 4304,    token RMS 1.00-1.01, spread 0.29-0.38, differ 0.72, residual RMS 0.7 -> 3.7
//   16 heads, 27 layers) at 112 px:
// Position std 0.3 or residual gain 1 left the 27-layer spread at 0.25-0.40, linear biases of std 0.05 at 0.41-0.46:
// the tokens converge on the layers' common direction (biases, GELU's positive mean through ffn_down) with depth.
// scripts/generate-mmproj.test.ts holds the first two cases to these bounds.
import type { Gemma3VisionConfig } from "./model-presets.js";
import { QK_GAIN, type UniformInit } from "./weight-init.js";

/** What a vision tensor is, which decides its initialisation and GGUF type. */
export type VisionTensorRole =
  | "patch_embedding" | "position_embedding"
  | "attn_q" | "attn_k" | "attn_v" | "attn_output" | "ffn_up" | "ffn_down"
  | "layer_norm" | "layer_norm_bias" | "bias"
  | "soft_emb_norm" | "input_projection";

/** Standard deviation of the learned position embedding. */
export const POSITION_STD = 0.5;
/** Gain of the residual-branch outputs (attn_out, ffn_down). */
export const VISION_RESIDUAL_GAIN = 0.7;
/** Standard deviation of the linear layers' biases (patch embedding, q/k/v/out, ffn up/down). */
export const VISION_BIAS_STD = 0.02;
/** Standard deviation of the LayerNorm biases. */
export const LN_BIAS_STD = 0.05;
/** Relative spread of norm weights around 1. */
const NORM_SPREAD = 0.2;

const SQRT3 = Math.sqrt(3);

function zeroMean(std: number): UniformInit {
  return { center: 0, halfWidth: std * SQRT3 };
}

/** The initialisation of a vision tensor of `role` in `vision`. */
export function visionInitFor(role: VisionTensorRole, vision: Gemma3VisionConfig): UniformInit {
  const { hidden_size: hidden, intermediate_size: ffn, patch_size: patch, num_channels: channels } = vision.vision_config;
  switch (role) {
    case "patch_embedding":
      return zeroMean(1 / Math.sqrt(channels * patch * patch));
    case "position_embedding":
      return zeroMean(POSITION_STD);
    case "attn_q":
    case "attn_k":
      return zeroMean(QK_GAIN / Math.sqrt(hidden));
    case "attn_v":
    case "ffn_up":
      return zeroMean(1 / Math.sqrt(hidden));
    case "attn_output":
      return zeroMean(VISION_RESIDUAL_GAIN / Math.sqrt(hidden));
    case "ffn_down":
      return zeroMean(VISION_RESIDUAL_GAIN / Math.sqrt(ffn));
    case "layer_norm":
    case "soft_emb_norm":
      return { center: 1, halfWidth: NORM_SPREAD };
    case "layer_norm_bias":
      return zeroMean(LN_BIAS_STD);
    case "bias":
      return zeroMean(VISION_BIAS_STD);
    case "input_projection":
      return zeroMean(1 / Math.sqrt(hidden));
  }
}
