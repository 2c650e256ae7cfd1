// The tensors of a Gemma 3 vision projector by role, with the shape each must have (GGML order: shape[0] is the row
// length): one list both backends' encoders load from, checked once.
import { ModelFileError } from "../model/errors.js";
import type { VisionConfig } from "./clip-config.js";

/** One encoder layer's tensor names. */
export interface VisionLayerNames {
  norm1: string; norm1Bias: string;
  q: string; qBias: string; k: string; kBias: string; v: string; vBias: string;
  output: string; outputBias: string;
  norm2: string; norm2Bias: string;
  up: string; upBias: string; down: string; downBias: string;
}

/** Every tensor the encoder reads. */
export interface VisionTensorNames {
  /** The patch convolution's kernel: [patchSize, patchSize, 3, hidden], read as [3 * patchSize^2, hidden] rows. */
  patch: string; patchBias: string;
  /** Learned positions: [hidden, patches]. */
  positions: string;
  layers: VisionLayerNames[];
  postNorm: string; postNormBias: string;
  /** RMS-norm weight before the projection: [hidden]. */
  softEmbeddingNorm: string;
  /** The projection into the text model, stored [outputSize, hidden] (its rows are the vision features). */
  projection: string;
}

/** The names of every tensor the encoder of `config` reads. */
export function visionTensorNames(config: VisionConfig): VisionTensorNames {
  return {
    patch: "v.patch_embd.weight", patchBias: "v.patch_embd.bias", positions: "v.position_embd.weight",
    layers: Array.from({ length: config.layers }, (_, i): VisionLayerNames => {
      const name = (part: string, kind: "weight" | "bias") => `v.blk.${i}.${part}.${kind}`;
      return {
        norm1: name("ln1", "weight"), norm1Bias: name("ln1", "bias"),
        q: name("attn_q", "weight"), qBias: name("attn_q", "bias"), k: name("attn_k", "weight"), kBias: name("attn_k", "bias"),
        v: name("attn_v", "weight"), vBias: name("attn_v", "bias"), output: name("attn_out", "weight"), outputBias: name("attn_out", "bias"),
        norm2: name("ln2", "weight"), norm2Bias: name("ln2", "bias"),
        up: name("ffn_up", "weight"), upBias: name("ffn_up", "bias"), down: name("ffn_down", "weight"), downBias: name("ffn_down", "bias"),
      };
    }),
    postNorm: "v.post_ln.weight", postNormBias: "v.post_ln.bias",
    softEmbeddingNorm: "mm.soft_emb_norm.weight", projection: "mm.input_projection.weight",
  };
}

/** The shape each named tensor must have, by name. */
export function visionTensorShapes(config: VisionConfig): Map<string, number[]> {
  const names = visionTensorNames(config);
  const { hiddenSize: d, feedForwardSize: ffn, patchSize: p, patchesPerSide: side, outputSize } = config;
  const shapes = new Map<string, number[]>([
    [names.patch, [p, p, 3, d]], [names.patchBias, [d]], [names.positions, [d, side * side]],
    [names.postNorm, [d]], [names.postNormBias, [d]], [names.softEmbeddingNorm, [d]], [names.projection, [outputSize, d]],
  ]);
  for (const layer of names.layers) {
    for (const vector of [layer.norm1, layer.norm1Bias, layer.qBias, layer.kBias, layer.vBias, layer.outputBias, layer.norm2, layer.norm2Bias, layer.downBias]) shapes.set(vector, [d]);
    for (const matrix of [layer.q, layer.k, layer.v, layer.output]) shapes.set(matrix, [d, d]);
    shapes.set(layer.up, [d, ffn]);
    shapes.set(layer.upBias, [ffn]);
    shapes.set(layer.down, [ffn, d]);
  }
  return shapes;
}

/** Checks that every tensor the encoder reads is present with its shape. @throws ModelFileError naming the first at fault. */
export function checkVisionTensors(path: string, config: VisionConfig, shapeOf: (name: string) => readonly number[] | undefined): void {
  for (const [name, expected] of visionTensorShapes(config)) {
    const shape = shapeOf(name);
    if (!shape) throw new ModelFileError(path, `tensor '${name}' is missing`);
    const trimmed = [...shape];
    while (trimmed.length > expected.length && trimmed[trimmed.length - 1] === 1) trimmed.pop();
    if (trimmed.length !== expected.length || trimmed.some((n, i) => n !== expected[i])) {
      throw new ModelFileError(path, `tensor '${name}' has shape [${shape.join(", ")}], expected [${expected.join(", ")}]`);
    }
  }
}
