// Gemma 3's GGUF keys read as llama.cpp's gemma3 loader reads them: which layers slide (a period, per-layer flags,
// or the default period of 6), the local RoPE base, the query scale (the 27B's hidden / heads), the GeGLU gate and
// the embedding scale; and the files it refuses, naming the key.
import { describe, expect, it } from "vitest";
import { attentionWindow, configFromGguf } from "./config.js";
import type { GgufValue } from "./gguf/format.js";

function gemma3(extra: Record<string, GgufValue> = {}, layers = 6): Map<string, GgufValue> {
  return new Map<string, GgufValue>(Object.entries({
    "general.architecture": "gemma3",
    "gemma3.embedding_length": 64,
    "gemma3.feed_forward_length": 128,
    "gemma3.block_count": layers,
    "gemma3.attention.head_count": 4,
    "gemma3.attention.head_count_kv": 2,
    "gemma3.attention.key_length": 32,
    "gemma3.attention.value_length": 32,
    "gemma3.attention.layer_norm_rms_epsilon": 1e-6,
    "gemma3.rope.freq_base": 1e6,
    "gemma3.context_length": 32768,
    "gemma3.vocab_size": 262144,
    "gemma3.attention.sliding_window": 8,
    ...extra,
  }));
}

describe("Gemma 3 configuration from GGUF", () => {
  it("makes every sixth layer global by default, with the local layers' RoPE base 10000", () => {
    const config = configFromGguf("m.gguf", gemma3({}, 12), false);
    expect(config.architecture).toBe("gemma3");
    expect(Array.from({ length: 12 }, (_, i) => attentionWindow(config, i))).toEqual([8, 8, 8, 8, 8, 0, 8, 8, 8, 8, 8, 0]);
    expect(config.rope_local_base_freq).toBe(10000);
    expect(config.rope_theta).toBe(1e6);
    expect(config.hidden_activation).toBe("gelu_pytorch_tanh");
    expect(config.embedding_scale).toBe(Math.fround(Math.sqrt(64)));
    expect(config.query_pre_attn_scalar).toBe(32);
  });

  it("reads a pattern period, per-layer flags and the local RoPE base from their keys", () => {
    const period = configFromGguf("m.gguf", gemma3({ "gemma3.attention.sliding_window_pattern": 3, "gemma3.rope.freq_base_swa": 5000 }), false);
    expect(Array.from({ length: 6 }, (_, i) => attentionWindow(period, i))).toEqual([8, 8, 0, 8, 8, 0]);
    expect(period.rope_local_base_freq).toBe(5000);
    const flags = configFromGguf("m.gguf", gemma3({ "gemma3.attention.sliding_window_pattern": [true, false, true, false, false, true] }), false);
    expect(Array.from({ length: 6 }, (_, i) => attentionWindow(flags, i))).toEqual([8, 0, 8, 0, 0, 8]);
  });

  it("has no sliding layers without a window, and scales the 27B's queries by hidden / heads", () => {
    const noWindow = gemma3();
    noWindow.delete("gemma3.attention.sliding_window");
    const config = configFromGguf("m.gguf", noWindow, false);
    expect(attentionWindow(config, 0)).toBe(0);
    expect(config.layer_types).toBeUndefined();
    const big = configFromGguf("m.gguf", gemma3({ "gemma3.embedding_length": 5376, "gemma3.attention.head_count": 32, "gemma3.attention.head_count_kv": 16, "gemma3.attention.key_length": 128, "gemma3.attention.value_length": 128 }, 62), false);
    expect(big.query_pre_attn_scalar).toBe(168);
  });

  it("reads linear RoPE scaling for the full layers (the 4B-27B's factor 8)", () => {
    expect(configFromGguf("m.gguf", gemma3({ "gemma3.rope.scaling.type": "linear", "gemma3.rope.scaling.factor": 8 }), false).rope_linear_factor).toBe(8);
    expect(configFromGguf("m.gguf", gemma3(), false).rope_linear_factor).toBeUndefined();
  });

  it("refuses a window larger than the context, a malformed pattern, logit soft-capping and a bad scaling factor, naming them", () => {
    expect(() => configFromGguf("m.gguf", gemma3({ "gemma3.attention.sliding_window": 40000 }), false)).toThrow(/sliding window 40000 is larger than the context length 32768/);
    expect(() => configFromGguf("m.gguf", gemma3({ "gemma3.attention.sliding_window_pattern": [true, false] }), false)).toThrow(/gemma3\.attention\.sliding_window_pattern must hold one boolean per layer \(6\)/);
    expect(() => configFromGguf("m.gguf", gemma3({ "gemma3.attention.sliding_window_pattern": "six" }), false)).toThrow(/gemma3\.attention\.sliding_window_pattern must be a layer period or per-layer flags/);
    expect(() => configFromGguf("m.gguf", gemma3({ "gemma3.final_logit_softcapping": 30 }), false)).toThrow(/gemma3\.final_logit_softcapping 30 is not supported/);
    expect(() => configFromGguf("m.gguf", gemma3({ "gemma3.rope.scaling.type": "linear", "gemma3.rope.scaling.factor": -8 }), false)).toThrow(/gemma3\.rope\.scaling\.factor must be a positive number, found -8/);
  });
});
