// A plain float32 forward pass of a Gemma 3 mmproj (SigLIP tower, then the gemma3 projector) as llama.cpp's clip graph
// computes it (clip.cpp build_inp / build_vit, models/siglip.cpp), for tests of the generated weights' scale.
// Plain code, no test-runner imports; slow (no SIMD), meant for the tiny towers.
import type { Gemma3VisionConfig } from "./model-presets.js";
import { patchesPerSide, projectorScaleFactor } from "./gemma3-vision-tensors.js";

/** A tensor's values in GGML order (ne[0] fastest), looked up by GGUF name. */
export type VisionTensorSource = (ggufName: string) => Float32Array;

/** What the forward pass returns: the projected tokens and the residual stream's RMS after each layer. */
export interface VisionForwardResult {
  /** [tokens, textHidden], token t = row Y, column X of the pooled grid at Y * side + X. */
  embeddings: Float32Array;
  tokens: number;
  /** RMS over all patches and components of the residual stream: after the embeddings, then after each layer. */
  residualRms: number[];
}

/** Pixels of an RGB image in [0, 1], planar ([3][size][size]), normalised by the tower's image_mean / image_std. */
export function normalisePixels(vision: Gemma3VisionConfig, planar: Float32Array): Float32Array {
  const size = vision.vision_config.image_size;
  const out = new Float32Array(planar.length);
  for (let c = 0; c < 3; c++) {
    for (let i = 0; i < size * size; i++) out[c * size * size + i] = (planar[c * size * size + i] - vision.image_mean[c]) / vision.image_std[c];
  }
  return out;
}

/** y[r] = sum_i w[r * inLength + i] x[i] + b[r], for each row of x (GGML ne [inLength, outLength] weights). */
function linear(x: Float32Array, rows: number, inLength: number, w: Float32Array, b: Float32Array | undefined, outLength: number): Float32Array {
  const y = new Float32Array(rows * outLength);
  for (let r = 0; r < rows; r++) {
    const xr = x.subarray(r * inLength, (r + 1) * inLength);
    for (let o = 0; o < outLength; o++) {
      let sum = b ? b[o] : 0;
      const wo = o * inLength;
      for (let i = 0; i < inLength; i++) sum += w[wo + i] * xr[i];
      y[r * outLength + o] = sum;
    }
  }
  return y;
}

/** LayerNorm (ggml_norm, then weight and bias) of each row. */
function layerNorm(x: Float32Array, rows: number, n: number, w: Float32Array, b: Float32Array, eps: number): Float32Array {
  const y = new Float32Array(x.length);
  for (let r = 0; r < rows; r++) {
    let mean = 0;
    for (let i = 0; i < n; i++) mean += x[r * n + i];
    mean /= n;
    let variance = 0;
    for (let i = 0; i < n; i++) variance += (x[r * n + i] - mean) ** 2;
    const scale = 1 / Math.sqrt(variance / n + eps);
    for (let i = 0; i < n; i++) y[r * n + i] = (x[r * n + i] - mean) * scale * w[i] + b[i];
  }
  return y;
}

/** GELU, tanh approximation (ggml_gelu; SigLIP's gelu_pytorch_tanh). */
function gelu(x: number): number {
  return 0.5 * x * (1 + Math.tanh(Math.sqrt(2 / Math.PI) * (x + 0.044715 * x * x * x)));
}

function rms(values: Float32Array): number {
  let sum = 0;
  for (const v of values) sum += v * v;
  return Math.sqrt(sum / values.length);
}

/** Full (non-causal) multi-head attention of q, k, v ([n, hidden] each), scaled by 1/sqrt(head_dim). */
function attention(q: Float32Array, k: Float32Array, v: Float32Array, n: number, hidden: number, heads: number): Float32Array {
  const d = hidden / heads;
  const out = new Float32Array(n * hidden);
  const scores = new Float32Array(n);
  for (let h = 0; h < heads; h++) {
    for (let i = 0; i < n; i++) {
      let max = -Infinity;
      for (let j = 0; j < n; j++) {
        let dot = 0;
        for (let c = 0; c < d; c++) dot += q[i * hidden + h * d + c] * k[j * hidden + h * d + c];
        scores[j] = dot / Math.sqrt(d);
        max = Math.max(max, scores[j]);
      }
      let total = 0;
      for (let j = 0; j < n; j++) total += scores[j] = Math.exp(scores[j] - max);
      for (let j = 0; j < n; j++) {
        const p = scores[j] / total;
        for (let c = 0; c < d; c++) out[i * hidden + h * d + c] += p * v[j * hidden + h * d + c];
      }
    }
  }
  return out;
}

/**
 * Runs `pixels` (normalised, planar [3][size][size]) through the tower and projector whose GGUF tensors `tensor`
 * returns, projecting to `textHidden`.
 */
export function gemma3VisionForward(vision: Gemma3VisionConfig, textHidden: number, tensor: VisionTensorSource, pixels: Float32Array): VisionForwardResult {
  const v = vision.vision_config;
  const hidden = v.hidden_size;
  const ffn = v.intermediate_size;
  const p = v.patch_size;
  const side = patchesPerSide(vision);
  const size = v.image_size;
  const n = side * side;
  const eps = v.layer_norm_eps;
  // Patch embedding: a p x p stride-p convolution (kernel ne [p, p, 3, hidden]), plus its bias and the position embedding.
  const kernel = tensor("v.patch_embd.weight");
  const patchBias = tensor("v.patch_embd.bias");
  const position = tensor("v.position_embd.weight");
  let x: Float32Array = new Float32Array(n * hidden);
  for (let py = 0; py < side; py++) {
    for (let px = 0; px < side; px++) {
      const patch = py * side + px;
      for (let o = 0; o < hidden; o++) {
        let sum = patchBias[o] + position[patch * hidden + o];
        for (let c = 0; c < 3; c++) {
          for (let ky = 0; ky < p; ky++) {
            for (let kx = 0; kx < p; kx++) sum += kernel[((o * 3 + c) * p + ky) * p + kx] * pixels[(c * size + py * p + ky) * size + px * p + kx];
          }
        }
        x[patch * hidden + o] = sum;
      }
    }
  }
  const residualRms = [rms(x)];
  for (let layer = 0; layer < v.num_hidden_layers; layer++) {
    const g = (name: string) => tensor(`v.blk.${layer}.${name}`);
    let h = layerNorm(x, n, hidden, g("ln1.weight"), g("ln1.bias"), eps);
    const q = linear(h, n, hidden, g("attn_q.weight"), g("attn_q.bias"), hidden);
    const k = linear(h, n, hidden, g("attn_k.weight"), g("attn_k.bias"), hidden);
    const val = linear(h, n, hidden, g("attn_v.weight"), g("attn_v.bias"), hidden);
    const attended = linear(attention(q, k, val, n, hidden, v.num_attention_heads), n, hidden, g("attn_out.weight"), g("attn_out.bias"), hidden);
    for (let i = 0; i < x.length; i++) x[i] += attended[i];
    h = layerNorm(x, n, hidden, g("ln2.weight"), g("ln2.bias"), eps);
    const up = linear(h, n, hidden, g("ffn_up.weight"), g("ffn_up.bias"), ffn).map(gelu);
    const down = linear(up, n, ffn, g("ffn_down.weight"), g("ffn_down.bias"), hidden);
    for (let i = 0; i < x.length; i++) x[i] += down[i];
    residualRms.push(rms(x));
  }
  x = layerNorm(x, n, hidden, tensor("v.post_ln.weight"), tensor("v.post_ln.bias"), eps);
  // Projector: average-pool k x k patches, RMS-normalise times soft_emb_norm, project (ne [textHidden, hidden]).
  const k = projectorScaleFactor(vision);
  const tokenSide = side / k;
  const tokens = tokenSide * tokenSide;
  const pooled = new Float32Array(tokens * hidden);
  for (let ty = 0; ty < tokenSide; ty++) {
    for (let tx = 0; tx < tokenSide; tx++) {
      const t = ty * tokenSide + tx;
      for (let dy = 0; dy < k; dy++) {
        for (let dx = 0; dx < k; dx++) {
          const patch = (ty * k + dy) * side + tx * k + dx;
          for (let c = 0; c < hidden; c++) pooled[t * hidden + c] += x[patch * hidden + c] / (k * k);
        }
      }
    }
  }
  const norm = tensor("mm.soft_emb_norm.weight");
  for (let t = 0; t < tokens; t++) {
    const row = pooled.subarray(t * hidden, (t + 1) * hidden);
    const scale = 1 / Math.sqrt(row.reduce((s, value) => s + value * value, 0) / hidden + eps);
    for (let c = 0; c < hidden; c++) row[c] *= scale * norm[c];
  }
  const projection = tensor("mm.input_projection.weight");
  const embeddings = new Float32Array(tokens * textHidden);
  for (let t = 0; t < tokens; t++) {
    for (let c = 0; c < hidden; c++) {
      const value = pooled[t * hidden + c];
      for (let o = 0; o < textHidden; o++) embeddings[t * textHidden + o] += value * projection[c * textHidden + o];
    }
  }
  return { embeddings, tokens, residualRms };
}
