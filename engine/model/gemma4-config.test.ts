// Gemma 4's GGUF keys read as llama.cpp's gemma4 loader reads them: per-layer attention shapes (the sliding layers'
// _swa head size and rotary dimensions, per-layer KV heads), the shared-KV tail and whose KV it reads, per-layer
// feed-forward widths, experts, per-layer inputs and soft-capping; the files it refuses, naming the key or tensor;
// and that the WebGPU backend takes the architecture (its equality with WebAssembly: webgpu-new-architectures.test.ts).
import { describe, expect, it } from "vitest";
import { ensureTestModel } from "../../scripts/test-models.js";
import { WasmModelRunner } from "../backends/wasm/model-runner.js";
import { webGpuUnsupported } from "../backends/webgpu/architectures.js";
import { attentionWindow, configFromGguf, kvSourceLayer, layerAttention, layerKvWidth, layerRope } from "./config.js";
import type { GgufValue } from "./gguf/format.js";
import { openModelSource } from "./source.js";

const SLIDING = [true, false, true, false, true, false];

function gemma4(extra: Record<string, GgufValue | undefined> = {}): Map<string, GgufValue> {
  const entries = Object.entries({
    "general.architecture": "gemma4",
    "gemma4.block_count": 6,
    "gemma4.context_length": 32768,
    "gemma4.embedding_length": 64,
    "gemma4.attention.head_count": 4,
    "gemma4.rope.freq_base": 1e6,
    "gemma4.rope.freq_base_swa": 10000,
    "gemma4.attention.layer_norm_rms_epsilon": 1e-6,
    "gemma4.expert_count": 4,
    "gemma4.expert_used_count": 2,
    "gemma4.final_logit_softcapping": 30,
    "gemma4.attention.sliding_window": 8,
    // The GGUF reader gives numeric arrays as typed arrays.
    "gemma4.attention.head_count_kv": Int32Array.from([2, 1, 2, 1, 2, 1]),
    "gemma4.attention.shared_kv_layers": 2,
    "gemma4.embedding_length_per_layer_input": 8,
    "gemma4.attention.sliding_window_pattern": SLIDING,
    "gemma4.attention.key_length": 128,
    "gemma4.attention.value_length": 128,
    "gemma4.attention.key_length_swa": 32,
    "gemma4.attention.value_length_swa": 32,
    "gemma4.expert_feed_forward_length": 32,
    "gemma4.feed_forward_length": Int32Array.from([64, 64, 64, 64, 128, 128]),
    "gemma4.rope.dimension_count": 128,
    "gemma4.rope.dimension_count_swa": 32,
    "gemma4.vocab_size": 262144,
    ...extra,
  }).filter((entry): entry is [string, GgufValue] => entry[1] !== undefined);
  return new Map<string, GgufValue>(entries);
}

describe("Gemma 4 configuration from GGUF", () => {
  it("reads each layer's attention shape, rotary dimensions and RoPE base", () => {
    const config = configFromGguf("m.gguf", gemma4(), false);
    expect(config.architecture).toBe("gemma4");
    expect(Array.from({ length: 6 }, (_, i) => attentionWindow(config, i))).toEqual([8, 0, 8, 0, 8, 0]);
    expect(layerAttention(config, 0)).toEqual({ heads: 4, kvHeads: 2, headDim: 32, rotaryDim: 32 });
    expect(layerAttention(config, 1)).toEqual({ heads: 4, kvHeads: 1, headDim: 128, rotaryDim: 128 });
    expect(layerRope(config, 0).base).toBe(10000);
    expect(layerRope(config, 1).base).toBe(1e6);
    // Buffers are sized by the widest layer.
    expect([config.num_attention_heads, config.num_key_value_heads, config.head_dim]).toEqual([4, 2, 128]);
    expect(config.attention_scale).toBe(1);
    expect(config.query_pre_attn_scalar).toBeUndefined();
    expect(config.value_norm).toBe(true);
    expect(config.rope_freqs_full_only).toBe(true);
    expect(config.embedding_scale).toBe(Math.fround(8));
    expect(config.hidden_activation).toBe("gelu_pytorch_tanh");
    expect(config.final_logit_softcapping).toBe(30);
    expect(config.hidden_size_per_layer_input).toBe(8);
    expect(config.layer_intermediate_sizes).toEqual([64, 64, 64, 64, 128, 128]);
    expect(config.intermediate_size).toBe(128);
    expect(config.num_experts).toBe(4);
    expect(config.num_experts_per_tok).toBe(2);
    expect(config.moe_intermediate_size).toBe(32);
    expect(config.norm_topk_prob).toBe(true);
    expect(config.expert_gating).toBe("softmax");
  });

  it("gives the shared-KV layers the KV of layer n_kv - 2 (sliding) or n_kv - 1 (full), and no cache of their own", () => {
    const config = configFromGguf("m.gguf", gemma4(), false);
    expect(Array.from({ length: 6 }, (_, i) => kvSourceLayer(config, i))).toEqual([0, 1, 2, 3, 2, 3]);
    expect(Array.from({ length: 6 }, (_, i) => layerKvWidth(config, i))).toEqual([64, 128, 64, 128, 0, 0]);
    const none = configFromGguf("m.gguf", gemma4({ "gemma4.attention.shared_kv_layers": undefined }), false);
    expect(Array.from({ length: 6 }, (_, i) => kvSourceLayer(none, i))).toEqual([0, 1, 2, 3, 4, 5]);
  });

  it("takes scalar head counts and widths, and no per-layer inputs, experts or soft-capping where the keys say none", () => {
    const config = configFromGguf("m.gguf", gemma4({
      "gemma4.attention.head_count_kv": 2, "gemma4.feed_forward_length": 96, "gemma4.embedding_length_per_layer_input": 0,
      "gemma4.expert_count": undefined, "gemma4.expert_used_count": undefined, "gemma4.final_logit_softcapping": undefined,
    }), true);
    expect(layerAttention(config, 1).kvHeads).toBe(2);
    expect(config.layer_intermediate_sizes).toEqual([96, 96, 96, 96, 96, 96]);
    expect(config.hidden_size_per_layer_input).toBeUndefined();
    expect(config.num_experts).toBeUndefined();
    expect(config.final_logit_softcapping).toBeUndefined();
    expect(config.tie_word_embeddings).toBe(false);
  });

  it("refuses malformed or unsupported keys, naming them", () => {
    const refuse = (extra: Record<string, GgufValue | undefined>, message: RegExp) => expect(() => configFromGguf("m.gguf", gemma4(extra), false)).toThrow(message);
    refuse({ "gemma4.attention.shared_kv_layers": 5 }, /gemma4\.attention\.shared_kv_layers 5 leaves 1 of 6 layers/);
    refuse({ "gemma4.attention.shared_kv_layers": 6 }, /gemma4\.attention\.shared_kv_layers must be a whole number below block_count 6/);
    refuse({ "gemma4.attention.sliding_window_pattern": undefined }, /gemma4\.attention\.sliding_window_pattern must hold one boolean per layer/);
    refuse({ "gemma4.attention.key_length_swa": undefined }, /gemma4\.attention\.key_length_swa must be a positive integer/);
    refuse({ "gemma4.attention.value_length": 64 }, /gemma4\.attention\.value_length 64 differs from gemma4\.attention\.key_length 128/);
    refuse({ "gemma4.attention.head_count_kv": Int32Array.from([2, 1, 2]) }, /gemma4\.attention\.head_count_kv must hold one value per layer \(6\), found 3/);
    refuse({ "gemma4.attention.head_count_kv": Int32Array.from([3, 1, 2, 1, 2, 1]) }, /layer 0: head_count 4 is not a multiple of head_count_kv 3/);
    refuse({ "gemma4.attention.causal": false }, /gemma4\.attention\.causal false \(bidirectional attention\) is not supported/);
    refuse({ "gemma4.rope.scaling.type": "yarn" }, /gemma4\.rope\.scaling\.type 'yarn' is not supported/);
    refuse({ "gemma4.expert_feed_forward_length": Int32Array.from([32, 32, 64, 32, 32, 32]) }, /gemma4\.expert_feed_forward_length differing by layer/);
    refuse({ "gemma4.attention.sliding_window_pattern": [true, true, false, false, true, false] }, /shared-KV layer 4 \(sliding\) would read layer 2's KV, which is full/);
  });

  it("is run by the WebGPU backend (the loader's auto choice may take it)", () => {
    expect(webGpuUnsupported(configFromGguf("m.gguf", gemma4(), false))).toBeUndefined();
  });
});

describe("a tiny-gemma4 file with a tensor missing or unsupported", () => {
  const options = { maxBatchTokens: 16, maxSequences: 1, maxContext: 64, blockSize: 16, kvCache: { bytes: 4 * 1024 * 1024 } };

  it("is refused at load, naming the tensor", async () => {
    const source = openModelSource(await ensureTestModel("tiny-gemma4", "gguf", "q8_0"));
    const tensors = source.tensors as Map<string, unknown>;
    tensors.delete("blk.3.attn_k_norm.weight");
    await expect(WasmModelRunner.create(source, options, { threads: 1 })).rejects.toThrow(/tensor 'blk\.3\.attn_k_norm\.weight' is missing/);
    tensors.delete("blk.2.post_ffw_norm_2.weight");
    await expect(WasmModelRunner.create(source, options, { threads: 1 })).rejects.toThrow(/tensor 'blk\.2\.post_ffw_norm_2\.weight' is missing/);
    tensors.delete("per_layer_proj_norm.weight");
    await expect(WasmModelRunner.create(source, options, { threads: 1 })).rejects.toThrow(/tensor 'per_layer_proj_norm\.weight' is missing/);
  }, 60_000);

  it("refuses a memory split that parts a shared-KV layer from the layer whose KV it reads", async () => {
    const source = openModelSource(await ensureTestModel("tiny-gemma4", "gguf", "q8_0"));
    await expect(WasmModelRunner.create(source, options, { threads: 1, maxLayersPerMemory: 3 })).rejects.toThrow(/layer 4 shares layer 2's KV, which the memory plan put in another WebAssembly memory/);
  }, 60_000);

  it("refuses a .scale tensor it does not apply, naming it", async () => {
    const source = openModelSource(await ensureTestModel("tiny-gemma4", "gguf", "q8_0"));
    const tensors = source.tensors as Map<string, { name: string }>;
    const donor = tensors.get("blk.0.attn_norm.weight")!;
    tensors.set("blk.0.attn_q.scale", { ...donor, name: "blk.0.attn_q.scale" });
    await expect(WasmModelRunner.create(source, options, { threads: 1 })).rejects.toThrow(/tensor 'blk\.0\.attn_q\.scale' is not supported/);
  }, 60_000);
});
