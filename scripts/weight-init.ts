// Initialisation scales of random-weight models: chosen so activations stay O(1)-O(10) through every layer and
// the output logits are peaky, with clear top-1 margins (greedy tokens must not hinge on rounding).
//
// - Every matrix is uniform with std gain/sqrt(fan_in), so each projection of an RMS-normalised input has O(1)
//   components. q and k use QK_GAIN (scores q.k/sqrt(head_dim) then have std about QK_GAIN^2 = 2.25: selective
//   attention that still mixes positions); v and the FFN gate/up use 1.
// - The two residual-branch outputs (attn_output, ffn_down) use RESIDUAL_GAIN = 2: each layer adds about 1-2 per
//   component to the residual stream (measured on smollm2-135m: RMS 2 after layer 0, 12 after layer 29, max |x| 40;
//   FFN hidden RMS 0.6; top attention weight 0.4-0.65), which keeps the current token's own embedding a small part
//   of the stream. With tied embeddings a stream dominated by that embedding makes the model echo its input:
//   measured with llama.cpp on the tiny presets, gain 2 instead of 1 cut the share of greedy steps that repeat the
//   previous token from 29-72% to 4-23% (the final settings give 0-21% on the tiny presets, about 20% full size).
// - The embedding has std 1/sqrt(hidden) (rows of norm about 1), so RMS-norm sees mean squares of about 1/hidden,
//   well above eps. The output projection (tied or not) has the same std, so logit = w_v . (g * x/rms(x)) has std
//   about g: the final norm's weight, centred on LOGIT_STD = 6, sets the logit scale directly.
// - Each row of the embedding / output matrix is further scaled by a log-uniform factor (mean square 1): the logits
//   become a scale mixture of Gaussians, whose heavier upper tail makes near-ties between the top two rarer. Measured
//   with llama.cpp over 8 prompts x 24 greedy steps per tiny preset: top1 - top2 < 0.1 on 3-8% of steps (median
//   margin 1.2-1.7) against 7-8% (median 0.7-1.1) without the row scale; top-1 tokens stay varied.
// - Norm weights are 1 +- 20% (random, so a kernel that drops them is caught); Qwen3's q_norm/k_norm are
//   QK_GAIN +- 20%; Qwen2's q/k/v biases have std BIAS_STD (large enough to change the output if dropped, small
//   enough that v's bias does not add one constant direction that every position then echoes).
// - Gemma 3 (tiny-gemma3, gemma3-27b) uses the same draws; the drawn norm values are the multipliers its norms apply
//   (1 + w), so its checkpoint holds w = value - 1 and its GGUF file the value, w + 1 (model-tensors.ts normOffset). Two
//   things differ: the embedding is multiplied by sqrt(hidden) on input (components of about 1, where the other
//   presets' are 1/sqrt(hidden)), and each attention / FFN output is RMS-normalised again (post_attention_layernorm,
//   post_feedforward_layernorm) before it joins the residual stream, so RESIDUAL_GAIN is normalised away and the
//   post-norm multiplier is the branch gain instead: POST_NORM_GAIN = 6 (the pre-norms stay at 1, q/k norms at
//   QK_GAIN, the final norm at LOGIT_STD, which still sets the logit scale: the tied output is not scaled). At 1 the
//   current token's own embedding dominates the stream and the model echoes it: measured with llama.cpp on
//   tiny-gemma3 (f32, 8 prompts x 24 greedy steps), 82% of steps repeated the previous token at 1, 36% at 2, 20% at 4,
//   7% at 6 and 3% at 10 (tiny-llama 10%, tiny-qwen3 5%); at 6, 5% of top-1 margins are under 0.1 (median 1.45).
// - Qwen3-MoE (tiny-qwen3moe, qwen3-30b-a3b): each expert is drawn as a dense FFN of width moe_intermediate_size (gate
//   and up 1/sqrt(hidden), down RESIDUAL_GAIN/sqrt(moe_intermediate_size)); the layer's output is the top-k experts'
//   outputs weighted by their renormalised router softmax. The router (mlp.gate, ffn_gate_inp) has std
//   ROUTER_GAIN/sqrt(hidden), so its logits on the RMS-normalised input have std about ROUTER_GAIN. Measured with
//   llama.cpp on tiny-qwen3moe (8 prompts x 24 greedy steps; f32 / q8_0 / q4_k_m), the share of steps repeating the
//   previous token is 9% / 10% / 6% at router gain 1, 5% / 4% / 2% at 2 (tiny-qwen3 4% on the same prompts), 6% / 5% / 1%
//   at 3; 4-5% of top-1 margins under 0.1 at 2 (median 1.1-1.3). Gain 2 is kept: it also doubles the gap between the
//   k-th and the (k+1)-th router logit, so quantisation and rounding differences between engines rarely change which
//   experts a token gets (the router stays F32 in every file, but its input does not).
// - gpt-oss (tiny-gpt-oss, gpt-oss-20b) draws its experts, router and attention like Qwen3-MoE's (the fused gate_up_proj
//   with the gate/up gain, down_proj with the down gain, router gain 2); every bias (q/k/v/o, router, experts) has std
//   BIAS_STD, so a kernel that drops one changes the output. Each head's attention sink (a logit that joins the
//   softmax's denominator only) is uniform in SINK_CENTER +- SINK_HALF_WIDTH: scores have std about QK_GAIN^2 = 2.25, so
//   some heads' sinks take a large share of the attention and others almost none. Measured with llama.cpp on
//   tiny-gpt-oss (8 prompts x 24 greedy steps; f32 / q8_0 / q4_k_m): 0% / 0% / 1% of steps repeat the previous token,
//   2% / 6% / 7% of top-1 margins are under 0.1 (median 1.4 / 1.2 / 1.1).
// - Ministral 3 (tiny-mistral) is Llama's layout with tied embeddings and takes Llama's draws: on the same prompts
//   15% / 10% / 21% of steps repeat the previous token (tiny-llama 10%, tiny-qwen3 4% in f32), 3% / 6% / 5% of
//   margins are under 0.1 (median 1.6 / 1.4 / 1.7).
import type { HuggingFaceConfig } from "./model-presets.js";
import { headDimOf } from "./model-presets.js";

/** What a tensor is, which decides its initialisation (and its GGUF type in mixed quantisations). */
export type TensorRole =
  | "embedding" | "output"
  | "attn_q" | "attn_k" | "attn_v" | "attn_output"
  | "ffn_gate" | "ffn_up" | "ffn_down"
  /** Qwen3-MoE: the router (mlp.gate, GGUF ffn_gate_inp) and one expert's gate / up / down matrix. */
  | "router" | "expert_gate" | "expert_up" | "expert_down"
  | "norm" | "final_norm" | "qk_norm" | "post_norm" | "bias"
  /** gpt-oss: each head's attention sink logit (self_attn.sinks, GGUF attn_sinks). */
  | "attn_sinks";

/** Values are uniform in [center - halfWidth, center + halfWidth), each row then times its row scale if any. */
export interface UniformInit {
  center: number;
  halfWidth: number;
  /** Rows are scaled by exp(u) / sqrt(E[exp(2u)]), u uniform in [-rowLogScale, rowLogScale] (drawn from its own stream). */
  rowLogScale?: number;
}

/** Target standard deviation of the output logits. */
export const LOGIT_STD = 6;
/** Gain of the query and key projections (or of Qwen3's q_norm/k_norm weights). */
export const QK_GAIN = 1.5;
/** Standard deviation of Qwen2's q/k/v biases. */
export const BIAS_STD = 0.2;
/** Half-width of the log-uniform row scale of the embedding and output matrices. */
export const VOCAB_ROW_LOG_SCALE = 0.5;
/** Gain of the residual-branch outputs (attn_output, ffn_down). */
export const RESIDUAL_GAIN = 2;
/** Centre of Gemma 3's post-norm multipliers (attention and FFN outputs), its residual-branch gain. */
export const POST_NORM_GAIN = 6;
/** Gain of a Qwen3-MoE router: its logits have about this standard deviation (see the header). */
export const ROUTER_GAIN = 2;
/** Centre and half-width of gpt-oss's attention sinks (logits; see the header). */
export const SINK_CENTER = 1;
export const SINK_HALF_WIDTH = 2;
/** Relative spread of norm weights around their centre. */
const NORM_SPREAD = 0.2;

const SQRT3 = Math.sqrt(3);

function zeroMean(std: number): UniformInit {
  return { center: 0, halfWidth: std * SQRT3 };
}

/** The initialisation of a tensor of `role` in a model of shape `config`. */
export function initFor(role: TensorRole, config: HuggingFaceConfig): UniformInit {
  const hidden = config.hidden_size;
  switch (role) {
    case "embedding":
    case "output":
      return { ...zeroMean(1 / Math.sqrt(hidden)), rowLogScale: VOCAB_ROW_LOG_SCALE };
    case "attn_v":
    case "ffn_gate":
    case "ffn_up":
      return zeroMean(1 / Math.sqrt(hidden));
    case "attn_q":
    case "attn_k":
      return zeroMean(QK_GAIN / Math.sqrt(hidden));
    case "attn_output":
      return zeroMean(RESIDUAL_GAIN / Math.sqrt(config.num_attention_heads * headDimOf(config)));
    case "ffn_down":
      return zeroMean(RESIDUAL_GAIN / Math.sqrt(config.intermediate_size));
    case "router":
      return zeroMean(ROUTER_GAIN / Math.sqrt(hidden));
    case "expert_gate":
    case "expert_up":
      return zeroMean(1 / Math.sqrt(hidden));
    case "expert_down":
      return zeroMean(RESIDUAL_GAIN / Math.sqrt(config.moe_intermediate_size ?? config.intermediate_size));
    case "norm":
      return { center: 1, halfWidth: NORM_SPREAD };
    case "final_norm":
      return { center: LOGIT_STD, halfWidth: NORM_SPREAD * LOGIT_STD };
    case "qk_norm":
      return { center: QK_GAIN, halfWidth: NORM_SPREAD * QK_GAIN };
    case "post_norm":
      return { center: POST_NORM_GAIN, halfWidth: NORM_SPREAD * POST_NORM_GAIN };
    case "bias":
      return zeroMean(BIAS_STD);
    case "attn_sinks":
      return { center: SINK_CENTER, halfWidth: SINK_HALF_WIDTH };
  }
}
