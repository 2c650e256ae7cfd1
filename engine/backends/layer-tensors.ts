// The tensors of one transformer layer, by GGUF name and checked shape: the one definition both backends place.
import type { ModelConfig } from "../model/config.js";

/** One layer's tensors as a backend holds them: matrices as W, vectors as V. */
export interface LayerTensors<W, V> {
  attnNorm: V;
  q: W;
  k: W;
  v: W;
  /** Qwen2 q/k/v biases. */
  qBias?: V;
  kBias?: V;
  vBias?: V;
  /** Qwen3 q/k norms (one head's width). */
  qNorm?: V;
  kNorm?: V;
  output: W;
  ffnNorm: V;
  gate: W;
  up: W;
  down: W;
}

/** How a backend places tensors: a [k, n] matrix, an [n] vector, an optional [n] vector (undefined when absent). */
export interface TensorPlacer<W, V> {
  matrix(name: string, k: number, n: number): W;
  vector(name: string, n: number): V;
  optionalVector(name: string, n: number): V | undefined;
}

/** Places layer `index`'s tensors with the backend's placer (which checks shapes and types). */
export function layerTensors<W, V>(config: ModelConfig, index: number, place: TensorPlacer<W, V>): LayerTensors<W, V> {
  const d = config.hidden_size;
  const qDim = config.num_attention_heads * config.head_dim;
  const kvDim = config.num_key_value_heads * config.head_dim;
  const ffn = config.intermediate_size;
  const p = `blk.${index}.`;
  return {
    attnNorm: place.vector(`${p}attn_norm.weight`, d),
    q: place.matrix(`${p}attn_q.weight`, d, qDim),
    k: place.matrix(`${p}attn_k.weight`, d, kvDim),
    v: place.matrix(`${p}attn_v.weight`, d, kvDim),
    qBias: place.optionalVector(`${p}attn_q.bias`, qDim),
    kBias: place.optionalVector(`${p}attn_k.bias`, kvDim),
    vBias: place.optionalVector(`${p}attn_v.bias`, kvDim),
    qNorm: place.optionalVector(`${p}attn_q_norm.weight`, config.head_dim),
    kNorm: place.optionalVector(`${p}attn_k_norm.weight`, config.head_dim),
    output: place.matrix(`${p}attn_output.weight`, qDim, d),
    ffnNorm: place.vector(`${p}ffn_norm.weight`, d),
    gate: place.matrix(`${p}ffn_gate.weight`, d, ffn),
    up: place.matrix(`${p}ffn_up.weight`, d, ffn),
    down: place.matrix(`${p}ffn_down.weight`, ffn, d),
  };
}
