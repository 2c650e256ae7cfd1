// The tensors of one transformer layer, by GGUF name and checked shape: the one definition both backends place.
import type { ModelConfig } from "../model/config.js";
import { gemma4LayerTensors } from "./gemma4-layer-tensors.js";

/** One layer's tensors as a backend holds them: matrices as W, vectors as V. */
export interface LayerTensors<W, V> {
  attnNorm: V;
  q: W;
  /** Absent in Gemma 4's shared-KV layers, which attend over an earlier layer's cache. */
  k?: W;
  /** Absent in Gemma 4's shared-KV layers, and where Gemma 4 takes V = K (no attn_v). */
  v?: W;
  /** Qwen2 q/k/v biases. */
  qBias?: V;
  kBias?: V;
  vBias?: V;
  /** Qwen3 and Gemma 3 q/k norms (one head's width). */
  qNorm?: V;
  kNorm?: V;
  output: W;
  /** gpt-oss: the attention output projection's bias. */
  outputBias?: V;
  /** gpt-oss: per head, the attention sink's logit. */
  sinks?: V;
  /** Gemma 3: RMS norm of the attention output, before the residual add. */
  attnPostNorm?: V;
  ffnNorm: V;
  /** Gemma 3: RMS norm of the feed-forward output, before the residual add. */
  ffnPostNorm?: V;
  /** The dense feed-forward (absent in a mixture-of-experts layer). */
  gate?: W;
  up?: W;
  down?: W;
  /**
   * A mixture-of-experts layer: the router [d, experts] and every expert's gate, up [d, ffn] and down [ffn, d]; gpt-oss
   * adds the router's bias [experts] and every expert's biases ([ffn, experts], [ffn, experts], [d, experts]).
   */
  experts?: {
    router: W; gate?: W; up?: W; down: W; routerBias?: V; gateBias?: V; upBias?: V; downBias?: V;
    /** Gemma 4: gate and up fused, [d, 2 * ffn] per expert (gate rows first), in place of gate and up. */
    gateUp?: W;
    /** Gemma 4: per expert, a multiplier of its down projection's output ([experts]). */
    downScale?: V;
  };
  /** Gemma 4's extras (see gemma4-layer-tensors.ts). */
  gemma4?: Gemma4LayerTensors<W, V>;
}

/** What a Gemma 4 layer has beyond the common tensors. */
export interface Gemma4LayerTensors<W, V> {
  /** A multiplier of the layer's output ([1]). */
  outScale?: V;
  /** A mixture-of-experts layer keeps its dense MLP as a shared expert, with these norms and the router's input scale. */
  moe?: { routerScale: V; preNorm2: V; postNorm1: V; postNorm2: V };
  /** Per-layer embedding input: gate [d, n], projection [n, d] and its norm. */
  perLayer?: { inputGate: W; projection: W; postNorm: V };
}

/**
 * How a backend places tensors: a [k, n] matrix, `count` [k, n] matrices stored one after another (experts), an [n]
 * vector, an optional [n] vector (undefined when absent).
 */
export interface TensorPlacer<W, V> {
  matrix(name: string, k: number, n: number): W;
  matrices(name: string, k: number, n: number, count: number): W;
  vector(name: string, n: number): V;
  optionalVector(name: string, n: number): V | undefined;
  /** `count` [n] vectors stored one after another (experts' biases, [n, count]). */
  vectors(name: string, n: number, count: number): V;
  /** Whether the file has tensor `name` (needed by Gemma 4, whose optional matrices decide a layer's form). */
  has?(name: string): boolean;
  /** Rows [first, first + rows) of a placed [k, n] matrix, as a [k, rows] matrix (Gemma 4's fused attn_qkv). */
  rowsOf?(matrix: W, first: number, rows: number): W;
  /** The model file, named by the errors of the layer definitions that check more than shapes (Gemma 4's). */
  path?: string;
}

/** Places layer `index`'s tensors with the backend's placer (which checks shapes and types). */
export function layerTensors<W, V>(config: ModelConfig, index: number, place: TensorPlacer<W, V>): LayerTensors<W, V> {
  if (config.architecture === "gemma4") return gemma4LayerTensors(config, index, place);
  const d = config.hidden_size;
  const qDim = config.num_attention_heads * config.head_dim;
  const kvDim = config.num_key_value_heads * config.head_dim;
  const ffn = config.intermediate_size;
  const p = `blk.${index}.`;
  // Gemma 3 has every norm; the others have the q/k norms (Qwen3) or none.
  const gemma = config.architecture === "gemma3";
  const gptOss = config.architecture === "gpt-oss";
  const headNorm = (name: string) => (gemma ? place.vector(name, config.head_dim) : place.optionalVector(name, config.head_dim));
  return {
    attnNorm: place.vector(`${p}attn_norm.weight`, d),
    q: place.matrix(`${p}attn_q.weight`, d, qDim),
    k: place.matrix(`${p}attn_k.weight`, d, kvDim),
    v: place.matrix(`${p}attn_v.weight`, d, kvDim),
    qBias: place.optionalVector(`${p}attn_q.bias`, qDim),
    kBias: place.optionalVector(`${p}attn_k.bias`, kvDim),
    vBias: place.optionalVector(`${p}attn_v.bias`, kvDim),
    qNorm: headNorm(`${p}attn_q_norm.weight`),
    kNorm: headNorm(`${p}attn_k_norm.weight`),
    output: place.matrix(`${p}attn_output.weight`, qDim, d),
    outputBias: place.optionalVector(`${p}attn_output.bias`, d),
    sinks: gptOss ? place.vector(`${p}attn_sinks.weight`, config.num_attention_heads) : undefined,
    attnPostNorm: gemma ? place.vector(`${p}post_attention_norm.weight`, d) : undefined,
    // gpt-oss names its pre-feed-forward norm post_attention_norm (llama.cpp's attn_post_norm).
    ffnNorm: place.vector(gptOss ? `${p}post_attention_norm.weight` : `${p}ffn_norm.weight`, d),
    ffnPostNorm: gemma ? place.vector(`${p}post_ffw_norm.weight`, d) : undefined,
    ...feedForward(config, p, place),
  };
}

/** A layer's feed-forward: dense, or a mixture of experts when the config has experts. */
function feedForward<W, V>(config: ModelConfig, p: string, place: TensorPlacer<W, V>): Pick<LayerTensors<W, V>, "gate" | "up" | "down" | "experts"> {
  const d = config.hidden_size;
  if (config.num_experts === undefined) {
    const ffn = config.intermediate_size;
    return { gate: place.matrix(`${p}ffn_gate.weight`, d, ffn), up: place.matrix(`${p}ffn_up.weight`, d, ffn), down: place.matrix(`${p}ffn_down.weight`, ffn, d) };
  }
  const ffn = config.moe_intermediate_size!;
  const count = config.num_experts;
  const experts = {
    router: place.matrix(`${p}ffn_gate_inp.weight`, d, count),
    gate: place.matrices(`${p}ffn_gate_exps.weight`, d, ffn, count),
    up: place.matrices(`${p}ffn_up_exps.weight`, d, ffn, count),
    down: place.matrices(`${p}ffn_down_exps.weight`, ffn, d, count),
  };
  if (config.architecture !== "gpt-oss") return { experts };
  return {
    experts: {
      ...experts,
      routerBias: place.vector(`${p}ffn_gate_inp.bias`, count),
      gateBias: place.vectors(`${p}ffn_gate_exps.bias`, ffn, count),
      upBias: place.vectors(`${p}ffn_up_exps.bias`, ffn, count),
      downBias: place.vectors(`${p}ffn_down_exps.bias`, d, count),
    },
  };
}
