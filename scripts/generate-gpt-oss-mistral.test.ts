// The gpt-oss and Ministral 3 presets: GGUF keys and tensors as llama.cpp's converter writes gpt-oss and mistral3,
// gpt-oss's fused experts cut into llama.cpp's tensors, the same numbers in both formats, and the real tokenizers.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { readGgufHeader } from "../engine/model/gguf/reader.js";
import { failIfMissing, skipOutsideCi, titled } from "../engine/testing/fixtures.js";
import { TokenType } from "../engine/tokenizer/index.js";
import { bf16ToF32, f32ToBf16 } from "../kernels/formats/bf16.js";
import { GgmlType } from "../kernels/formats/types.js";
import { gptOssChatTemplatePath, mistralNemoTokenizerDir } from "./fixture-paths.js";
import { GENERATOR_VERSION } from "./generate-model.js";
import { ggufArchitectureMetadata } from "./gguf-model-metadata.js";
import { ggufTensorType } from "./model-dtypes.js";
import { readGgufTensor, readHuggingFaceTensor } from "./model-file-readers.js";
import { getPreset } from "./model-presets.js";
import { type PlannedTensor, cutValueChunks, ggufTensorGroups, planTensors, tensorValueChunks } from "./model-tensors.js";
import { ensureTestModel, testModelSkipReason } from "./test-models.js";

/** A group that needs `preset` generated: skipped outside CI when a fixture is missing (saying which), failing under CI. */
function describeWithPreset(title: string, preset: string, body: () => void): void {
  const reason = testModelSkipReason(preset);
  describe.skipIf(skipOutsideCi(reason))(titled(title, reason), () => {
    beforeAll(() => failIfMissing(reason));
    body();
  });
}

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

/** Whether two arrays hold the same floats bit for bit (vitest's deep equality is slow on large arrays). */
function sameValues(a: Float32Array, b: Float32Array): boolean {
  return a.length === b.length && Buffer.from(a.buffer, a.byteOffset, a.byteLength).equals(Buffer.from(b.buffer, b.byteOffset, b.byteLength));
}

/**
 * What conversion/gpt_oss.py makes of a fused experts tensor [experts, a, b] (or a bias [experts, n]): transposed per
 * expert if asked, then the rows (bias entries) of one parity, or all of them.
 */
function convertLikeLlamaCpp(values: Float32Array, shape: readonly number[], transpose: boolean, parity?: 0 | 1): Float32Array {
  const [experts, a, b = 1] = shape;
  const out: number[] = [];
  for (let e = 0; e < experts; e++) {
    const at = (i: number, j: number) => values[e * a * b + i * b + j];
    const [rows, columns] = transpose ? [b, a] : [a, b];
    for (let r = 0; r < rows; r++) {
      if (parity !== undefined && r % 2 !== parity) continue;
      for (let c = 0; c < columns; c++) out.push(transpose ? at(c, r) : at(r, c));
    }
  }
  return Float32Array.from(out);
}

/** Rows of `values` ([rows, rowLength]) as LlamaModel.permute orders them: reshape(heads, 2, hd/2, in).swapaxes(1, 2). */
function permuteLikeConverter(values: Float32Array, heads: number, rowLength: number): Float32Array {
  const rows = values.length / rowLength;
  const headDim = rows / heads;
  const out = new Float32Array(values.length);
  for (let row = 0; row < rows; row++) {
    const head = Math.floor(row / headDim);
    const source = head * headDim + (row % 2) * (headDim / 2) + Math.floor((row % headDim) / 2);
    out.set(values.subarray(source * rowLength, (source + 1) * rowLength), row * rowLength);
  }
  return out;
}

const metadataOf = (preset: string) =>
  ggufArchitectureMetadata(getPreset(preset), "f32", { version: GENERATOR_VERSION, seed: 1 }).filter(([key]) => !key.startsWith("general.") && !key.startsWith("loom."));

describe("gpt-oss presets", () => {
  it("gpt-oss-20b has openai/gpt-oss-20b's shape: 20.9B parameters, 3.6B active besides the embedding", () => {
    const c = getPreset("gpt-oss-20b").config;
    expect([c.hidden_size, c.num_hidden_layers, c.num_attention_heads, c.num_key_value_heads, c.head_dim, c.intermediate_size, c.vocab_size]).toEqual([2880, 24, 64, 8, 64, 2880, 201088]);
    expect([c.num_local_experts, c.num_experts_per_tok, c.sliding_window, c.rope_theta, c.max_position_embeddings, c.swiglu_limit, c.tie_word_embeddings]).toEqual([32, 4, 128, 150000, 131072, 7, false]);
    expect(c.rope_scaling).toMatchObject({ rope_type: "yarn", factor: 32, original_max_position_embeddings: 4096, beta_fast: 32, beta_slow: 1 });
    expect((c.layer_types as string[]).slice(0, 3)).toEqual(["sliding_attention", "full_attention", "sliding_attention"]);
    const planned = planTensors(c);
    const size = (t: PlannedTensor) => t.shape.reduce((a, b) => a * b, 1);
    const total = planned.reduce((sum, t) => sum + size(t), 0);
    expect(total).toBe(20_914_757_184);
    const experts = planned.filter((t) => t.huggingFaceName.includes(".mlp.experts.")).reduce((sum, t) => sum + size(t), 0);
    expect(total - (experts * 28) / 32 - 201088 * 2880).toBe(3_608_307_264);
  });

  it("gpt-oss-20b gets GptOssModel's keys, in the converter's order", () => {
    expect(metadataOf("gpt-oss-20b").map(([key, value]) => [key, value.value])).toEqual([
      ["gpt-oss.block_count", 24], ["gpt-oss.context_length", 131072], ["gpt-oss.embedding_length", 2880], ["gpt-oss.feed_forward_length", 2880],
      ["gpt-oss.attention.head_count", 64], ["gpt-oss.attention.head_count_kv", 8], ["gpt-oss.rope.scaling.type", "yarn"],
      ["gpt-oss.rope.scaling.factor", 32], ["gpt-oss.rope.scaling.original_context_length", 4096], ["gpt-oss.rope.scaling.yarn_beta_fast", 32],
      ["gpt-oss.rope.scaling.yarn_beta_slow", 1], ["gpt-oss.rope.freq_base", 150000], ["gpt-oss.attention.layer_norm_rms_epsilon", 1e-5],
      ["gpt-oss.expert_count", 32], ["gpt-oss.expert_used_count", 4], ["gpt-oss.attention.key_length", 64], ["gpt-oss.attention.value_length", 64],
      ["gpt-oss.attention.sliding_window", 128], ["gpt-oss.expert_feed_forward_length", 2880],
    ]);
  });

  it("cut the fused experts into llama.cpp's tensors: gate/up {n_embd, n_ff_exp, n_expert}, down {n_ff_exp, n_embd, n_expert}, biases 2-D", () => {
    // An expert width other than hidden, so that a transposition shows in the shapes.
    const config = { ...getPreset("tiny-gpt-oss").config, intermediate_size: 96 };
    const groups = ggufTensorGroups(planTensors(config));
    expect(groups).toHaveLength(1 + 2 * 19 + 2);
    const ggml = Object.fromEntries(groups.filter((g) => g.ggufName.startsWith("blk.1.")).map((g) => [g.ggufName, [...g.shape].reverse()]));
    expect(ggml).toEqual({
      "blk.1.attn_norm.weight": [64], "blk.1.attn_q.weight": [64, 128], "blk.1.attn_q.bias": [128], "blk.1.attn_k.weight": [64, 64],
      "blk.1.attn_k.bias": [64], "blk.1.attn_v.weight": [64, 64], "blk.1.attn_v.bias": [64], "blk.1.attn_output.weight": [128, 64],
      "blk.1.attn_output.bias": [64], "blk.1.attn_sinks.weight": [4], "blk.1.post_attention_norm.weight": [64],
      "blk.1.ffn_gate_inp.weight": [64, 8], "blk.1.ffn_gate_inp.bias": [8], "blk.1.ffn_gate_exps.weight": [64, 96, 8],
      "blk.1.ffn_up_exps.weight": [64, 96, 8], "blk.1.ffn_gate_exps.bias": [96, 8], "blk.1.ffn_up_exps.bias": [96, 8],
      "blk.1.ffn_down_exps.weight": [96, 64, 8], "blk.1.ffn_down_exps.bias": [64, 8],
    });
    // The values of each cut are the fused tensor's, transposed and split as the converter does.
    for (const group of groups.filter((g) => g.cut && g.ggufName.startsWith("blk.0."))) {
      const fused = group.parts[0];
      const converted = convertLikeLlamaCpp(concat(tensorValueChunks(fused, 7)), fused.shape, group.cut!.transpose, group.cut!.everyOther);
      expect(sameValues(concat(cutValueChunks(fused, group.cut!, 7)), converted), group.ggufName).toBe(true);
    }
    // Types: biases and the router F32 in every dtype; experts as their dense counterparts (Q6_K -> Q8_0 for down on short rows).
    const type = (name: string, dtype: "q8_0" | "q4_k_m") => {
      const group = groups.find((g) => g.ggufName === name)!;
      return ggufTensorType({ ...group.parts[0], shape: group.shape, role: group.cut?.role ?? group.parts[0].role }, dtype);
    };
    for (const name of ["blk.0.ffn_gate_exps.bias", "blk.0.ffn_down_exps.bias", "blk.0.ffn_gate_inp.weight", "blk.0.ffn_gate_inp.bias", "blk.0.attn_sinks.weight"]) {
      expect(type(name, "q8_0"), name).toBe(GgmlType.F32);
    }
    expect(type("blk.0.ffn_up_exps.weight", "q8_0")).toBe(GgmlType.Q8_0);
    expect([type("blk.0.ffn_gate_exps.weight", "q4_k_m"), type("blk.0.ffn_down_exps.weight", "q4_k_m"), type("output.weight", "q4_k_m")]).toEqual([GgmlType.Q5_0, GgmlType.Q8_0, GgmlType.Q8_0]);
  });

  it("refuse shapes llama.cpp's gpt-oss does not load", () => {
    const config = getPreset("tiny-gpt-oss").config;
    expect(() => planTensors({ ...config, tie_word_embeddings: true })).toThrow(/untied lm_head/);
    const preset = { ...getPreset("tiny-gpt-oss"), config: { ...config, layer_types: ["full_attention", "sliding_attention"] } };
    expect(() => ggufArchitectureMetadata(preset, "f32", { version: GENERATOR_VERSION, seed: 1 })).toThrow(/layer_types\[0\]/);
  });
});

describeWithPreset("tiny-gpt-oss files", "tiny-gpt-oss", () => {
  it("has llama.cpp's gpt-oss keys and tensors, and the o200k_harmony vocabulary with the harmony template (f32)", async () => {
    const header = readGgufHeader(await ensureTestModel("tiny-gpt-oss", "gguf", "f32"));
    const m = header.metadata;
    expect(m.get("general.architecture")).toBe("gpt-oss");
    expect(m.get("gpt-oss.attention.sliding_window")).toBe(8);
    expect(m.get("gpt-oss.expert_count")).toBe(8);
    expect(m.get("gpt-oss.expert_used_count")).toBe(4);
    expect(m.get("gpt-oss.rope.scaling.type")).toBe("yarn");
    for (const absent of ["gpt-oss.vocab_size", "gpt-oss.rope.dimension_count", "tokenizer.ggml.add_bos_token"]) expect(m.has(absent), absent).toBe(false);
    expect(m.get("tokenizer.ggml.model")).toBe("gpt2");
    expect(m.get("tokenizer.ggml.pre")).toBe("gpt-4o");
    const tokens = m.get("tokenizer.ggml.tokens") as string[];
    const types = m.get("tokenizer.ggml.token_type") as Int32Array;
    expect(tokens).toHaveLength(201088);
    expect([tokens[200002], tokens[200006], tokens[200005], tokens[200008], tokens[200007], tokens[200012], tokens[200003]]).toEqual([
      "<|return|>", "<|start|>", "<|channel|>", "<|message|>", "<|end|>", "<|call|>", "<|constrain|>",
    ]);
    expect([types[200006], tokens[200019], types[200019], tokens[201087]]).toEqual([TokenType.CONTROL, "[PAD200019]", TokenType.UNUSED, "[PAD201087]"]);
    expect([m.get("tokenizer.ggml.bos_token_id"), m.get("tokenizer.ggml.eos_token_id"), m.get("tokenizer.ggml.padding_token_id")]).toEqual([199998, 200002, 199999]);
    expect(m.get("tokenizer.chat_template")).toBe(readFileSync(gptOssChatTemplatePath(), "utf8"));
    expect(header.tensors).toHaveLength(1 + 2 * 19 + 2);
    for (const tensor of header.tensors) expect(tensor.type, tensor.name).toBe(GgmlType.F32);
    const sinks = readGgufTensor(header, "blk.0.attn_sinks.weight").values;
    expect(Math.max(...sinks) - Math.min(...sinks)).toBeGreaterThan(0.5);
  });

  it("writes a GptOssForCausalLM folder whose fused experts are the GGUF's tensors as the converter cuts them", async () => {
    const header = readGgufHeader(await ensureTestModel("tiny-gpt-oss", "gguf", "f32"));
    const dir = await ensureTestModel("tiny-gpt-oss", "hf", "f32");
    const config = JSON.parse(readFileSync(join(dir, "config.json"), "utf8"));
    expect(config).toMatchObject({
      architectures: ["GptOssForCausalLM"], model_type: "gpt_oss", num_local_experts: 8, num_experts_per_tok: 4, intermediate_size: 64,
      layer_types: ["sliding_attention", "full_attention"], sliding_window: 8, swiglu_limit: 7, attention_bias: true, torch_dtype: "float32",
    });
    const tokenizerConfig = JSON.parse(readFileSync(join(dir, "tokenizer_config.json"), "utf8"));
    expect(tokenizerConfig.chat_template).toContain("<|channel|>");
    const fused = readHuggingFaceTensor(dir, "model.layers.1.mlp.experts.gate_up_proj");
    expect(fused.shape).toEqual([8, 64, 128]);
    const cases: Array<[string, string, boolean, 0 | 1 | undefined]> = [
      ["blk.1.ffn_gate_exps.weight", "model.layers.1.mlp.experts.gate_up_proj", true, 0],
      ["blk.1.ffn_up_exps.weight", "model.layers.1.mlp.experts.gate_up_proj", true, 1],
      ["blk.1.ffn_gate_exps.bias", "model.layers.1.mlp.experts.gate_up_proj_bias", false, 0],
      ["blk.1.ffn_up_exps.bias", "model.layers.1.mlp.experts.gate_up_proj_bias", false, 1],
      ["blk.1.ffn_down_exps.weight", "model.layers.1.mlp.experts.down_proj", true, undefined],
      ["blk.1.ffn_down_exps.bias", "model.layers.1.mlp.experts.down_proj_bias", false, undefined],
    ];
    for (const [ggufName, hfName, transpose, parity] of cases) {
      const hf = readHuggingFaceTensor(dir, hfName);
      expect(sameValues(readGgufTensor(header, ggufName).values, convertLikeLlamaCpp(hf.values, hf.shape, transpose, parity)), ggufName).toBe(true);
    }
    for (const [ggufName, hfName] of [["blk.0.attn_sinks.weight", "model.layers.0.self_attn.sinks"], ["blk.0.ffn_gate_inp.bias", "model.layers.0.mlp.router.bias"], ["blk.0.attn_q.weight", "model.layers.0.self_attn.q_proj.weight"]]) {
      expect(sameValues(readGgufTensor(header, ggufName).values, readHuggingFaceTensor(dir, hfName).values), ggufName).toBe(true);
    }
  });

  it("keeps biases, sinks and the router F32 in bf16 and quantized files, holding the checkpoint's rounded values", async () => {
    const bf16 = readGgufHeader(await ensureTestModel("tiny-gpt-oss", "gguf", "bf16"));
    const bias = readGgufTensor(bf16, "blk.0.ffn_up_exps.bias");
    expect(bias.type).toBe(GgmlType.F32);
    expect(bias.values.every((v) => v === bf16ToF32(f32ToBf16(v)))).toBe(true);
    expect(readGgufTensor(bf16, "blk.0.ffn_up_exps.weight").type).toBe(GgmlType.BF16);
    const q8 = readGgufHeader(await ensureTestModel("tiny-gpt-oss", "gguf", "q8_0"));
    for (const tensor of q8.tensors) {
      const f32 = tensor.shape.length === 1 || tensor.name.endsWith(".bias") || tensor.name.endsWith("ffn_gate_inp.weight");
      expect(tensor.type, tensor.name).toBe(f32 ? GgmlType.F32 : GgmlType.Q8_0);
    }
  });
});

describe("Ministral 3 preset", () => {
  it("tiny-mistral gets Ministral3Model's mistral3 keys, in the converter's order", () => {
    expect(metadataOf("tiny-mistral").map(([key, value]) => [key, value.value])).toEqual([
      ["mistral3.block_count", 2], ["mistral3.context_length", 1024], ["mistral3.embedding_length", 64], ["mistral3.feed_forward_length", 192],
      ["mistral3.attention.head_count", 4], ["mistral3.attention.head_count_kv", 2], ["mistral3.rope.scaling.type", "yarn"],
      ["mistral3.rope.scaling.factor", 16], ["mistral3.rope.scaling.original_context_length", 64], ["mistral3.rope.scaling.yarn_beta_fast", 32],
      ["mistral3.rope.scaling.yarn_beta_slow", 1], ["mistral3.rope.freq_base", 1e6], ["mistral3.attention.layer_norm_rms_epsilon", 1e-5],
      ["mistral3.attention.key_length", 32], ["mistral3.attention.value_length", 32], ["mistral3.vocab_size", 131072],
      ["mistral3.rope.dimension_count", 32], ["mistral3.rope.scaling.yarn_log_multiplier", 1], ["mistral3.attention.temperature_scale", 0.1],
    ]);
    const planned = planTensors(getPreset("tiny-mistral").config);
    // LlamaModel's q/k permutation, and no output.weight (tied)
    expect(planned.find((t) => t.ggufName === "blk.0.attn_q.weight")!.ggufPermuteHeads).toBe(4);
    expect(planned.find((t) => t.ggufName === "blk.0.attn_k.weight")!.ggufPermuteHeads).toBe(2);
    expect(planned.map((t) => t.ggufName)).not.toContain("output.weight");
  });
});

describeWithPreset("tiny-mistral files", "tiny-mistral", () => {
  it("has the Tekken vocabulary, its flags and Mistral Nemo's chat template (f32)", async () => {
    const header = readGgufHeader(await ensureTestModel("tiny-mistral", "gguf", "f32"));
    const m = header.metadata;
    expect(m.get("general.architecture")).toBe("mistral3");
    expect(m.get("tokenizer.ggml.pre")).toBe("tekken");
    expect((m.get("tokenizer.ggml.tokens") as string[]).length).toBe(131072);
    expect([m.get("tokenizer.ggml.bos_token_id"), m.get("tokenizer.ggml.eos_token_id"), m.get("tokenizer.ggml.unknown_token_id")]).toEqual([1, 2, 0]);
    expect([m.get("tokenizer.ggml.add_bos_token"), m.get("tokenizer.ggml.add_eos_token")]).toEqual([true, false]);
    const packageConfig = JSON.parse(readFileSync(join(mistralNemoTokenizerDir(), "tokenizer_config.json"), "utf8"));
    expect(m.get("tokenizer.chat_template")).toBe(packageConfig.chat_template);
    expect(header.tensors.map((t) => t.name)).not.toContain("output.weight");
  });

  it("writes a Ministral3ForCausalLM folder whose q/k the GGUF holds permuted as the converter permutes them", async () => {
    const header = readGgufHeader(await ensureTestModel("tiny-mistral", "gguf", "f32"));
    const dir = await ensureTestModel("tiny-mistral", "hf", "f32");
    const config = JSON.parse(readFileSync(join(dir, "config.json"), "utf8"));
    expect(config).toMatchObject({ architectures: ["Ministral3ForCausalLM"], model_type: "ministral3", head_dim: 32, tie_word_embeddings: true });
    expect(config.rope_parameters).toMatchObject({ rope_type: "yarn", factor: 16, original_max_position_embeddings: 64, llama_4_scaling_beta: 0.1, mscale_all_dim: 1 });
    const q = readHuggingFaceTensor(dir, "model.layers.1.self_attn.q_proj.weight");
    const k = readHuggingFaceTensor(dir, "model.layers.1.self_attn.k_proj.weight");
    expect(sameValues(readGgufTensor(header, "blk.1.attn_q.weight").values, permuteLikeConverter(q.values, 4, 64))).toBe(true);
    expect(sameValues(readGgufTensor(header, "blk.1.attn_k.weight").values, permuteLikeConverter(k.values, 2, 64))).toBe(true);
    expect(sameValues(readGgufTensor(header, "blk.1.attn_q.weight").values, q.values)).toBe(false);
    expect(sameValues(readGgufTensor(header, "blk.1.ffn_norm.weight").values, readHuggingFaceTensor(dir, "model.layers.1.post_attention_layernorm.weight").values)).toBe(true);
  });
});
