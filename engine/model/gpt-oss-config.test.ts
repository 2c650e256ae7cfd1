// gpt-oss's and Mistral 3's GGUF keys read as llama.cpp's openai-moe and mistral3 loaders read them: the period-2
// sliding window, the experts and their gating, YaRN's constants, the attention temperature; and the files refused,
// naming the key or the tensor.
import { describe, expect, it } from "vitest";
import { ensureTestModel } from "../../scripts/test-models.js";
import { WasmModelRunner } from "../backends/wasm/model-runner.js";
import { attentionTemperature, attentionWindow, configFromGguf, layerRope } from "./config.js";
import type { GgufValue } from "./gguf/format.js";
import { openModelSource } from "./source.js";

function gptOss(extra: Record<string, GgufValue> = {}, layers = 4): Map<string, GgufValue> {
  return new Map<string, GgufValue>(Object.entries({
    "general.architecture": "gpt-oss",
    "gpt-oss.embedding_length": 64,
    "gpt-oss.feed_forward_length": 64,
    "gpt-oss.block_count": layers,
    "gpt-oss.attention.head_count": 4,
    "gpt-oss.attention.head_count_kv": 2,
    "gpt-oss.attention.key_length": 64,
    "gpt-oss.attention.value_length": 64,
    "gpt-oss.attention.layer_norm_rms_epsilon": 1e-5,
    "gpt-oss.rope.freq_base": 150000,
    "gpt-oss.context_length": 131072,
    "gpt-oss.vocab_size": 201088,
    "gpt-oss.attention.sliding_window": 128,
    "gpt-oss.expert_count": 32,
    "gpt-oss.expert_used_count": 4,
    "gpt-oss.expert_feed_forward_length": 2880,
    "gpt-oss.rope.scaling.type": "yarn",
    "gpt-oss.rope.scaling.factor": 32,
    "gpt-oss.rope.scaling.original_context_length": 4096,
    ...extra,
  }));
}

function mistral3(extra: Record<string, GgufValue> = {}): Map<string, GgufValue> {
  return new Map<string, GgufValue>(Object.entries({
    "general.architecture": "mistral3",
    "mistral3.embedding_length": 64,
    "mistral3.feed_forward_length": 128,
    "mistral3.block_count": 2,
    "mistral3.attention.head_count": 4,
    "mistral3.attention.head_count_kv": 2,
    "mistral3.attention.layer_norm_rms_epsilon": 1e-5,
    "mistral3.rope.freq_base": 1e6,
    "mistral3.context_length": 262144,
    "mistral3.vocab_size": 131072,
    "mistral3.rope.scaling.type": "yarn",
    "mistral3.rope.scaling.factor": 16,
    "mistral3.rope.scaling.original_context_length": 16384,
    "mistral3.rope.scaling.yarn_log_multiplier": 1,
    "mistral3.attention.temperature_scale": 0.1,
    ...extra,
  }));
}

describe("gpt-oss configuration from GGUF", () => {
  it("windows the even layers, routes by softmax over the top k logits, and scales RoPE by YaRN", () => {
    const config = configFromGguf("m.gguf", gptOss(), true);
    expect(config.architecture).toBe("gpt-oss");
    expect([0, 1, 2, 3].map((i) => attentionWindow(config, i))).toEqual([128, 0, 128, 0]);
    expect(config).toMatchObject({ num_experts: 32, num_experts_per_tok: 4, moe_intermediate_size: 2880, norm_topk_prob: false, expert_gating: "softmax_weight", hidden_activation: "swiglu_oai" });
    const rope = layerRope(config, 0);
    expect(rope.freqScale).toBe(Math.fround(1 / 32));
    // ggml_rope_yarn_corr_dims(64, 4096, 150000, 32, 1): floor(8.09) and ceil(17.4); mscale 1 + 0.1 ln 32, in f32.
    expect(rope.yarn).toMatchObject({ extFactor: 1, corrLow: 8, corrHigh: 18 });
    expect(rope.yarn.mscale).toBeCloseTo(1 + 0.1 * Math.log(32), 5);
  });

  it("takes a window pattern and the window layers' own RoPE base from their keys", () => {
    const config = configFromGguf("m.gguf", gptOss({ "gpt-oss.attention.sliding_window_pattern": [false, true, true, false], "gpt-oss.rope.freq_base_swa": 10000 }), true);
    expect([0, 1, 2, 3].map((i) => attentionWindow(config, i))).toEqual([0, 128, 128, 0]);
    expect(layerRope(config, 1).base).toBe(10000);
    expect(layerRope(config, 0).base).toBe(150000);
  });

  it("refuses missing or malformed keys, naming them", () => {
    const without = gptOss();
    without.delete("gpt-oss.attention.sliding_window");
    expect(() => configFromGguf("m.gguf", without, true)).toThrow(/gpt-oss\.attention\.sliding_window must be a positive integer/);
    expect(() => configFromGguf("m.gguf", gptOss({ "gpt-oss.expert_used_count": 40 }), true)).toThrow(/expert_used_count 40 is more than gpt-oss\.expert_count 32/);
    expect(() => configFromGguf("m.gguf", gptOss({ "gpt-oss.rope.scaling.factor": 1 }), true)).toThrow(/rope\.scaling\.factor must be above 1 for yarn/);
    expect(() => configFromGguf("m.gguf", gptOss({ "gpt-oss.rope.scaling.yarn_ext_factor": 0.5 }), true)).toThrow(/yarn_ext_factor 0\.5 is not supported/);
    expect(() => configFromGguf("m.gguf", gptOss({ "gpt-oss.rope.scaling.type": "longrope" }), true)).toThrow(/rope\.scaling\.type 'longrope' is not supported/);
    expect(() => configFromGguf("m.gguf", gptOss({ "gpt-oss.attention.sliding_window": 200000 }), true)).toThrow(/sliding window 200000 is larger than the context length 131072/);
  });
});

describe("Mistral 3 configuration from GGUF", () => {
  it("reads YaRN with its log multiplier, and the attention temperature with the original context as its floor scale", () => {
    const config = configFromGguf("m.gguf", mistral3(), false);
    expect(config.architecture).toBe("mistral3");
    expect(config.rope_yarn).toMatchObject({ factor: 16, originalContext: 16384, logMultiplier: 1, betaFast: 32, betaSlow: 1 });
    // With log multiplier 1, llama.cpp's attention factor cancels rope_yarn's 1 + 0.1 ln(factor): mscale ~1.
    expect(layerRope(config, 0).yarn.mscale).toBeCloseTo(1, 5);
    expect(config.attention_temperature).toEqual({ scale: 0.1, floorScale: 16384 });
    expect(attentionTemperature(config, 0)).toBe(1);
    expect(attentionTemperature(config, 16383)).toBe(1);
    expect(attentionTemperature(config, 16384)).toBe(Math.fround(1 + 0.1 * Math.log(2)));
    expect(attentionTemperature(config, 5 * 16384 + 7)).toBe(Math.fround(1 + 0.1 * Math.log(6)));
  });

  it("has no temperature when the key is absent or 0", () => {
    const config = configFromGguf("m.gguf", mistral3({ "mistral3.attention.temperature_scale": 0 }), false);
    expect(config.attention_temperature).toBeUndefined();
    expect(attentionTemperature(config, 1e6)).toBe(1);
  });
});

describe("a gpt-oss file missing an expert tensor", () => {
  it("is refused at load, naming the tensor", async () => {
    const source = openModelSource(await ensureTestModel("tiny-gpt-oss", "gguf", "q8_0"));
    (source.tensors as Map<string, unknown>).delete("blk.1.ffn_up_exps.bias");
    const options = { maxBatchTokens: 16, maxSequences: 1, maxContext: 64, blockSize: 16, kvCache: { bytes: 4 * 1024 * 1024 } };
    await expect(WasmModelRunner.create(source, options, { threads: 1 })).rejects.toThrow(/tensor 'blk\.1\.ffn_up_exps\.bias' is missing/);
    (source.tensors as Map<string, unknown>).delete("blk.0.ffn_gate_exps.weight");
    await expect(WasmModelRunner.create(source, options, { threads: 1 })).rejects.toThrow(/tensor 'blk\.0\.ffn_gate_exps\.weight' is missing/);
  }, 60_000);
});
