// Gemma 4's GGUF keys read as llama.cpp's gemma4 loader reads them: per-layer attention shapes (the sliding layers'
// _swa head size and rotary dimensions, per-layer KV heads), the shared-KV tail and whose KV it reads, per-layer
// feed-forward widths, experts, per-layer inputs and soft-capping; the files it refuses, naming the key or tensor;
// and that the WebGPU backend takes the architecture (its equality with WebAssembly: webgpu-new-architectures.test.ts).
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { ensureTestModel } from "../../scripts/test-models.js";
import { WasmModelRunner } from "../backends/wasm/model-runner.js";
import { webGpuUnsupported } from "../backends/webgpu/architectures.js";
import { attentionWindow, configFromGguf, kvSourceLayer, layerAttention, layerKvWidth, layerRope } from "./config.js";
import { ModelFileError } from "./errors.js";
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

  it("gives each layer its own heads as KV heads where head_count_kv is absent, as llama.cpp copies head_count", () => {
    const config = configFromGguf("m.gguf", gemma4({ "gemma4.attention.head_count": Int32Array.from([4, 8, 4, 8, 4, 8]), "gemma4.attention.head_count_kv": undefined }), false);
    expect(Array.from({ length: 6 }, (_, i) => layerAttention(config, i).kvHeads)).toEqual([4, 8, 4, 8, 4, 8]);
    expect(layerKvWidth(config, 1)).toBe(8 * 128);
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

  it("refuses experts without the expert keys, naming the file and the router tensor", async () => {
    const source = openModelSource(await ensureTestModel("tiny-gemma4", "gguf", "q8_0"));
    const config = source.config as { num_experts?: number; moe_intermediate_size?: number };
    delete config.num_experts;
    delete config.moe_intermediate_size;
    const error = await WasmModelRunner.create(source, options, { threads: 1 }).then(() => undefined, (caught: unknown) => caught);
    expect(error).toBeInstanceOf(ModelFileError);
    expect((error as ModelFileError).path).toBe(source.path);
    expect((error as Error).message).toMatch(/tensor 'blk\.2\.ffn_gate_inp\.weight' is present but the file has no gemma4\.expert_count/);
  }, 60_000);
});

describe("a tiny-gemma4 file's rope_freqs.weight", () => {
  const work = mkdtempSync(join(tmpdir(), "loom-gemma4-rope-freqs-"));
  afterAll(() => rmSync(work, { recursive: true, force: true }));

  /** A copy of tiny-gemma4 (q8_0) with header bytes changed by `patch`. */
  async function patched(name: string, patch: (bytes: Buffer) => void): Promise<string> {
    const bytes = readFileSync(await ensureTestModel("tiny-gemma4", "gguf", "q8_0"));
    patch(bytes);
    const path = join(work, name);
    writeFileSync(path, bytes);
    return path;
  }
  /** The offset of GGUF key `key`'s value type (after its u64 length and bytes). */
  function keyValue(bytes: Buffer, key: string): number {
    const length = Buffer.alloc(8);
    length.writeBigUInt64LE(BigInt(key.length));
    const at = bytes.indexOf(Buffer.concat([length, Buffer.from(key)]));
    expect(at).toBeGreaterThan(0);
    return at + 8 + key.length;
  }
  const renameRopeFreqs = (bytes: Buffer) => {
    const at = bytes.indexOf("rope_freqs.weight");
    expect(bytes.indexOf("rope_freqs.weight", at + 1)).toBe(-1);
    bytes.write("rope_freqz.weight", at);
  };

  it("is required where the model has a full-attention layer, as llama.cpp requires it for the first one", async () => {
    const path = await patched("no-rope-freqs.gguf", renameRopeFreqs);
    expect(() => openModelSource(path)).toThrow(ModelFileError);
    expect(() => openModelSource(path)).toThrow(/tensor 'rope_freqs\.weight' is missing \(gemma4 needs it for its full-attention layers\)/);
  }, 60_000);

  it("is not required where every layer slides", async () => {
    const path = await patched("all-sliding-no-rope-freqs.gguf", (bytes) => {
      renameRopeFreqs(bytes);
      const at = keyValue(bytes, "gemma4.attention.sliding_window_pattern");
      // ARRAY of BOOL, 6 entries, then the flags.
      expect([bytes.readUInt32LE(at), bytes.readUInt32LE(at + 4), Number(bytes.readBigUInt64LE(at + 8))]).toEqual([9, 7, 6]);
      bytes.fill(1, at + 16, at + 22);
    });
    const source = openModelSource(path);
    expect(source.ropeFreqFactors).toBeNull();
    expect(source.config.layer_types).toEqual(new Array(6).fill("sliding_attention"));
  }, 60_000);

  it("holds half the full layers' head size, whatever their rotary dimensions", async () => {
    const path = await patched("rope-dims-64.gguf", (bytes) => {
      const at = keyValue(bytes, "gemma4.rope.dimension_count");
      expect([bytes.readUInt32LE(at), bytes.readUInt32LE(at + 4)]).toEqual([4, 128]); // UINT32 128
      bytes.writeUInt32LE(64, at + 4);
    });
    const source = openModelSource(path);
    expect(layerAttention(source.config, 1)).toMatchObject({ headDim: 128, rotaryDim: 64 });
    expect(source.ropeFreqFactors).toHaveLength(64);
  }, 60_000);
});
