// A Gemma 4 layer's tensors, by GGUF name, as llama.cpp's gemma4 loader finds them: the tensors present decide the
// layer's form (fused attn_qkv or separate projections, V = K without attn_v, a mixture of experts where
// ffn_gate_inp exists, fused or separate expert gate/up, per-layer embedding inputs).
import { type ModelConfig, kvSourceLayer, layerAttention } from "../model/config.js";
import { ModelFileError } from "../model/errors.js";
import type { LayerTensors, TensorPlacer } from "./layer-tensors.js";

/**
 * Places Gemma 4 layer `index` with `place`, which must answer has() and rowsOf(). Other .scale tensors than those
 * placed here are the backend's to refuse (it sees every tensor).
 * @throws ModelFileError naming place.path and the key or tensor.
 */
export function gemma4LayerTensors<W, V>(config: ModelConfig, index: number, place: TensorPlacer<W, V>): LayerTensors<W, V> {
  const { has, rowsOf } = place;
  const path = place.path ?? "the model file";
  if (!has || !rowsOf) throw new ModelFileError(path, "gemma4 is not supported by this backend (its tensor placer cannot test for tensors or slice rows)");
  const d = config.hidden_size;
  const { heads, kvHeads, headDim } = layerAttention(config, index);
  const qDim = heads * headDim;
  const kvDim = kvHeads * headDim;
  const ownKv = kvSourceLayer(config, index) === index;
  const p = `blk.${index}.`;
  let q: W;
  let k: W | undefined;
  let v: W | undefined;
  if (has.call(place, `${p}attn_qkv.weight`)) {
    const qkv = place.matrix(`${p}attn_qkv.weight`, d, qDim + 2 * kvDim);
    q = rowsOf.call(place, qkv, 0, qDim);
    if (ownKv) {
      k = rowsOf.call(place, qkv, qDim, kvDim);
      v = rowsOf.call(place, qkv, qDim + kvDim, kvDim);
    }
  } else {
    q = place.matrix(`${p}attn_q.weight`, d, qDim);
    if (ownKv) {
      k = place.matrix(`${p}attn_k.weight`, d, kvDim);
      // Without attn_v the values are the keys' projection (use_alternative_attention).
      v = has.call(place, `${p}attn_v.weight`) ? place.matrix(`${p}attn_v.weight`, d, kvDim) : undefined;
    }
  }
  const ffn = config.layer_intermediate_sizes?.[index] ?? config.intermediate_size;
  const tensors: LayerTensors<W, V> = {
    attnNorm: place.vector(`${p}attn_norm.weight`, d),
    q, k, v,
    qNorm: place.vector(`${p}attn_q_norm.weight`, headDim),
    kNorm: ownKv ? place.vector(`${p}attn_k_norm.weight`, headDim) : undefined,
    output: place.matrix(`${p}attn_output.weight`, qDim, d),
    attnPostNorm: place.vector(`${p}post_attention_norm.weight`, d),
    ffnNorm: place.vector(`${p}ffn_norm.weight`, d),
    ffnPostNorm: place.vector(`${p}post_ffw_norm.weight`, d),
    gate: place.matrix(`${p}ffn_gate.weight`, d, ffn),
    up: place.matrix(`${p}ffn_up.weight`, d, ffn),
    down: place.matrix(`${p}ffn_down.weight`, ffn, d),
    gemma4: { outScale: place.optionalVector(`${p}layer_output_scale.weight`, 1) },
  };
  if (has.call(place, `${p}ffn_gate_inp.weight`)) {
    const count = config.num_experts;
    const width = config.moe_intermediate_size;
    if (count === undefined || width === undefined) {
      throw new ModelFileError(path, `tensor '${p}ffn_gate_inp.weight' is present but the file has no gemma4.expert_count / gemma4.expert_feed_forward_length`);
    }
    const fused = has.call(place, `${p}ffn_gate_up_exps.weight`);
    tensors.experts = {
      router: place.matrix(`${p}ffn_gate_inp.weight`, d, count),
      ...(fused
        ? { gateUp: place.matrices(`${p}ffn_gate_up_exps.weight`, d, 2 * width, count) }
        : { gate: place.matrices(`${p}ffn_gate_exps.weight`, d, width, count), up: place.matrices(`${p}ffn_up_exps.weight`, d, width, count) }),
      down: place.matrices(`${p}ffn_down_exps.weight`, width, d, count),
      downScale: place.optionalVector(`${p}ffn_down_exps.scale`, count),
    };
    tensors.gemma4!.moe = {
      routerScale: place.vector(`${p}ffn_gate_inp.scale`, d),
      preNorm2: place.vector(`${p}pre_ffw_norm_2.weight`, d),
      postNorm1: place.vector(`${p}post_ffw_norm_1.weight`, d),
      postNorm2: place.vector(`${p}post_ffw_norm_2.weight`, d),
    };
  }
  const perLayer = config.hidden_size_per_layer_input;
  if (perLayer !== undefined) {
    tensors.gemma4!.perLayer = {
      inputGate: place.matrix(`${p}inp_gate.weight`, d, perLayer),
      projection: place.matrix(`${p}proj.weight`, perLayer, d),
      postNorm: place.vector(`${p}post_norm.weight`, d),
    };
  }
  return tensors;
}
