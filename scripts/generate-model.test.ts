import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { closeSync, mkdtempSync, openSync, readFileSync, readSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { REPOSITORY_ROOT, failIfMissing, skipOutsideCi, titled } from "../engine/testing/fixtures.js";
import { GgmlType } from "../kernels/formats/types.js";
import { bf16ToF32, f32ToBf16 } from "../kernels/formats/bf16.js";
import { readGgufHeader, type GgufHeader } from "../engine/model/gguf/reader.js";
import { dequantize } from "../kernels/formats/quantize.js";
import type { ModelDtype } from "./model-dtypes.js";
import { llama3RopeFreqFactors } from "../kernels/rope-frequencies.js";
import { readSafetensorsDirectory } from "../engine/model/safetensors/reader.js";
import { GENERATED_MODELS_DIR, GENERATOR_VERSION, defaultModelPath, generateModel, main } from "./generate-model.js";
import { MODEL_PRESETS, TINY_PRESET_NAMES, getPreset, headDimOf } from "./model-presets.js";
import { planTensors, tensorValueChunks } from "./model-tensors.js";
import { ensureTestModel, testModelSkipReason } from "./test-models.js";
import { LOGIT_STD } from "./weight-init.js";

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

function readBytes(path: string, offset: number, length: number): Buffer {
  const fd = openSync(path, "r");
  try {
    const bytes = Buffer.alloc(length);
    readSync(fd, bytes, 0, length, offset);
    return bytes;
  } finally {
    closeSync(fd);
  }
}

/** A GGUF tensor's values (dequantized) and directory entry. */
function ggufTensor(header: GgufHeader, name: string): { shape: number[]; type: GgmlType; values: Float32Array } {
  const info = header.tensors.find((t) => t.name === name);
  if (!info) throw new Error(`no tensor ${name} in ${header.path}`);
  const count = info.shape.reduce((a, b) => a * b, 1);
  return { shape: info.shape, type: info.type, values: dequantize(info.type, readBytes(header.path, info.fileOffset, info.byteLength), count) };
}

/** A safetensors tensor's values from a Hugging Face directory. */
function hfTensor(dir: string, name: string): { shape: number[]; values: Float32Array } {
  const info = readSafetensorsDirectory(dir).find((t) => t.name === name);
  if (!info) throw new Error(`no tensor ${name} in ${dir}`);
  const count = info.shape.reduce((a, b) => a * b, 1);
  return { shape: info.shape, values: dequantize(info.type, readBytes(info.path, info.fileOffset, info.byteLength), count) };
}

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
        expect(c.num_hidden_layers, preset.name).toBeLessThanOrEqual(3);
        expect(params * 4, preset.name).toBeLessThan(60e6); // F32 bytes
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
    const params = (name: string) => planTensors(getPreset(name).config).reduce((sum, t) => sum + t.shape.reduce((a, b) => a * b, 1), 0);
    expect(params("smollm2-135m")).toBe(134_515_008);
    expect(params("llama-3.2-1b")).toBe(1_235_814_400);
    expect(params("qwen3-0.6b")).toBe(596_049_920);
    expect(params("qwen2.5-0.5b")).toBe(494_032_768);
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

    const embedding = ggufTensor(header, "token_embd.weight");
    expect(embedding.shape).toEqual([128, 49152]);
    expectSameValues(embedding.values, hfTensor(dir, "model.embed_tokens.weight").values, "embedding");
    expectSameValues(ggufTensor(header, "blk.1.ffn_norm.weight").values, hfTensor(dir, "model.layers.1.post_attention_layernorm.weight").values, "ffn_norm");
    expectSameValues(ggufTensor(header, "blk.0.ffn_down.weight").values, hfTensor(dir, "model.layers.0.mlp.down_proj.weight").values, "ffn_down");

    const q = hfTensor(dir, "model.layers.1.self_attn.q_proj.weight");
    expect(q.shape).toEqual([128, 128]);
    const ggufQ = ggufTensor(header, "blk.1.attn_q.weight").values;
    expect(ggufQ[128]).not.toBe(q.values[128]);
    expectSameValues(ggufQ, permuteLikeConverter(q.values, config.num_attention_heads, 128), "attn_q");
    const k = hfTensor(dir, "model.layers.1.self_attn.k_proj.weight");
    expect(k.shape).toEqual([64, 128]);
    expectSameValues(ggufTensor(header, "blk.1.attn_k.weight").values, permuteLikeConverter(k.values, config.num_key_value_heads, 128), "attn_k");
    // v is not permuted
    expectSameValues(ggufTensor(header, "blk.1.attn_v.weight").values, hfTensor(dir, "model.layers.1.self_attn.v_proj.weight").values, "attn_v");
  });

  it("holds the same bf16 numbers in both formats, norms upcast to F32 in GGUF as the converter writes them", async () => {
    const header = readGgufHeader(await ensureTestModel("tiny-llama", "gguf", "bf16"));
    const dir = await ensureTestModel("tiny-llama", "hf", "bf16");
    const up = ggufTensor(header, "blk.0.ffn_up.weight");
    expect(up.type).toBe(GgmlType.BF16);
    expectSameValues(up.values, hfTensor(dir, "model.layers.0.mlp.up_proj.weight").values, "ffn_up");
    const norm = ggufTensor(header, "output_norm.weight");
    expect(norm.type).toBe(GgmlType.F32);
    const hfNorm = hfTensor(dir, "model.norm.weight").values;
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
    const gate = hfTensor(sharded, "model.layers.1.mlp.gate_proj.weight").values;
    const reference = hfTensor(single, "model.layers.1.mlp.gate_proj.weight").values;
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

    const scaling = getPreset("tiny-llama3").config.rope_scaling!;
    const freqs = ggufTensor(header, "rope_freqs.weight");
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
    expect(ggufTensor(header, "blk.0.attn_q_norm.weight").shape).toEqual([32]);
    expect(ggufTensor(header, "blk.0.attn_q.weight").shape).toEqual([64, 128]);
    expect(ggufTensor(header, "blk.0.attn_output.weight").shape).toEqual([128, 64]);
    const dir = await ensureTestModel("tiny-qwen3", "hf", "f32");
    expectSameValues(ggufTensor(header, "blk.1.attn_q.weight").values, hfTensor(dir, "model.layers.1.self_attn.q_proj.weight").values, "qwen3 attn_q");
    expectSameValues(ggufTensor(header, "blk.1.attn_k_norm.weight").values, hfTensor(dir, "model.layers.1.self_attn.k_norm.weight").values, "qwen3 k_norm");
    const tokenizerConfig = JSON.parse(readFileSync(join(dir, "tokenizer_config.json"), "utf8"));
    expect(tokenizerConfig.chat_template).toContain("enable_thinking");
  });

  it("tiny-qwen2 has F32 q/k/v biases, unpermuted", async () => {
    const header = readGgufHeader(await ensureTestModel("tiny-qwen2", "gguf", "q8_0"));
    expect(header.metadata.get("general.architecture")).toBe("qwen2");
    const bias = ggufTensor(header, "blk.0.attn_k.bias");
    expect(bias.type).toBe(GgmlType.F32);
    expect(bias.shape).toEqual([32]);
    const expected = [...tensorValueChunks(planTensors(getPreset("tiny-qwen2").config).find((t) => t.huggingFaceName === "model.layers.0.self_attn.k_proj.bias")!, 1)][0];
    expectSameValues(bias.values, expected, "qwen2 k bias");
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
    const exact = ggufTensor(f32, "blk.0.ffn_gate.weight").values;
    const quantized = ggufTensor(header, "blk.0.ffn_gate.weight").values;
    let error = 0;
    let signal = 0;
    exact.forEach((v, i) => {
      error += (v - quantized[i]) ** 2;
      signal += v * v;
    });
    expect(error / signal).toBeLessThan(0.01);
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
