import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readGgufHeader } from "../engine/model/gguf/reader.js";
import { GgmlType } from "../kernels/formats/types.js";
import { f16ToF32, f32ToF16 } from "../kernels/formats/f16.js";
import { defaultMmprojPath, generateMmproj, generateModel, main } from "./generate-model.js";
import { type VisionTensorSource, gemma3VisionForward, normalisePixels } from "./gemma3-vision-forward.js";
import { mmprojTensorType, planVisionTensors, projectorScaleFactor } from "./gemma3-vision-tensors.js";
import { type Gemma3VisionConfig, VISION_PRESET_NAMES, getPreset } from "./model-presets.js";
import { readGgufTensor } from "./model-file-readers.js";
import { mmprojValueChunks } from "./write-gguf-mmproj.js";

const scratch = mkdtempSync(join(tmpdir(), "loom-mmproj-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

const TINY = getPreset("tiny-gemma3");
const TINY_VISION = TINY.vision!;
const TINY_F16 = join(scratch, "tiny-f16.gguf");
beforeAll(async () => {
  await generateMmproj({ preset: "tiny-gemma3", out: TINY_F16 });
});

/** The GGUF (ne) shapes and types of the tiny mmproj's tensors, in file order, as llama.cpp's clip graph uses them. */
function expectedTinyTensors(dtype: "f16" | "f32"): Array<[string, number[], GgmlType]> {
  const matrix = dtype === "f16" ? GgmlType.F16 : GgmlType.F32;
  const F32 = GgmlType.F32;
  const tensors: Array<[string, number[], GgmlType]> = [
    ["v.patch_embd.weight", [14, 14, 3, 32], F32], // conv kernel [KW, KH, IC, OC] (ggml_conv_2d)
    ["v.patch_embd.bias", [32], F32],
    ["v.position_embd.weight", [32, 64], F32], // [n_embd, n_patches], added to the patch embeddings
  ];
  for (let layer = 0; layer < 2; layer++) {
    const b = `v.blk.${layer}.`;
    tensors.push([`${b}ln1.weight`, [32], F32], [`${b}ln1.bias`, [32], F32]);
    for (const name of ["attn_q", "attn_k", "attn_v", "attn_out"]) tensors.push([`${b}${name}.weight`, [32, 32], matrix], [`${b}${name}.bias`, [32], F32]);
    tensors.push([`${b}ln2.weight`, [32], F32], [`${b}ln2.bias`, [32], F32]);
    // ffn_up maps n_embd -> n_ff and ffn_down back (clip.cpp swaps them if ffn_down's ne[0] is n_embd)
    tensors.push([`${b}ffn_up.weight`, [32, 64], matrix], [`${b}ffn_up.bias`, [64], F32]);
    tensors.push([`${b}ffn_down.weight`, [64, 32], matrix], [`${b}ffn_down.bias`, [32], F32]);
  }
  tensors.push(["v.post_ln.weight", [32], F32], ["v.post_ln.bias", [32], F32]);
  // ne[0] is the text model's hidden size (clip_n_mmproj_embd); F16 in every converted file
  tensors.push(["mm.input_projection.weight", [64, 32], GgmlType.F16], ["mm.soft_emb_norm.weight", [32], F32]);
  return tensors;
}

/** An RGB test image in [0, 1], planar [3][size][size]: smooth gradients and stripes, or 14 px blocks of hashed colours. */
function testImage(size: number, kind: "gradient" | "blocks"): Float32Array {
  const out = new Float32Array(3 * size * size);
  for (let y = 0; y < size; y++) {
    for (let x = 0; x < size; x++) {
      for (let c = 0; c < 3; c++) {
        let value: number;
        if (kind === "gradient") {
          value = c === 0 ? x / size : c === 1 ? y / size : 0.5 + 0.5 * Math.sin((2 * Math.PI * (x + 2 * y)) / 37);
        } else {
          const hash = Math.imul(Math.floor(x / 14) * 73856093 ^ Math.floor(y / 14) * 19349663 ^ (c + 1) * 83492791, 0x9e3779b1) >>> 0;
          value = (hash % 1000) / 999;
        }
        out[(c * size + y) * size + x] = value;
      }
    }
  }
  return out;
}

/** A tensor source over the planned values (no file), for tower shapes not worth writing. */
function plannedSource(vision: Gemma3VisionConfig, textHidden: number, seed: number): VisionTensorSource {
  const tensors = new Map(planVisionTensors(vision, textHidden).map((t) => [t.ggufName, t]));
  return (name) => {
    const tensor = tensors.get(name)!;
    const parts = [...mmprojValueChunks(tensor, seed)];
    const out = new Float32Array(parts.reduce((n, part) => n + part.length, 0));
    parts.reduce((offset, part) => (out.set(part, offset), offset + part.length), 0);
    if (mmprojTensorType(tensor, "f16") === GgmlType.F16) for (let i = 0; i < out.length; i++) out[i] = f16ToF32(f32ToF16(out[i]));
    return out;
  };
}

function rms(values: Float32Array): number {
  return Math.sqrt(values.reduce((s, v) => s + v * v, 0) / values.length);
}

/** Statistics of projected image tokens that say whether the tower is finite and not degenerate. */
function tokenStats(embeddings: Float32Array, tokens: number) {
  const width = embeddings.length / tokens;
  const mean = new Float32Array(width);
  for (let t = 0; t < tokens; t++) for (let i = 0; i < width; i++) mean[i] += embeddings[t * width + i] / tokens;
  const spread = embeddings.map((v, i) => v - mean[i % width]);
  return { finite: embeddings.every(Number.isFinite), rms: rms(embeddings), spread: rms(spread) / rms(embeddings) };
}

describe("presets with a vision tower", () => {
  it("are tiny-gemma3 (8 x 8 patches pooled by 2 to 16 tokens) and gemma3-27b (SigLIP so400m, 64 x 64 pooled by 4 to 256) with its bench partner", () => {
    expect(VISION_PRESET_NAMES).toEqual(["gemma3-27b", "gemma3-27b-vision-bench", "tiny-gemma3"]);
    // The bench partner's projector is the 27B's: the same tower, projected to the same 5376.
    expect(getPreset("gemma3-27b-vision-bench").vision).toEqual(getPreset("gemma3-27b").vision);
    expect(projectorScaleFactor(TINY_VISION)).toBe(2);
    const big = getPreset("gemma3-27b").vision!;
    const v = big.vision_config;
    expect([v.image_size, v.patch_size, v.hidden_size, v.intermediate_size, v.num_hidden_layers, v.num_attention_heads, v.layer_norm_eps]).toEqual([896, 14, 1152, 4304, 27, 16, 1e-6]);
    expect(projectorScaleFactor(big)).toBe(4);
    // 0.42B parameters: the published tower and projector
    const params = planVisionTensors(big, 5376).reduce((n, t) => n + t.shape.reduce((a, b) => a * b, 1), 0);
    expect(params).toBe(423_060_336);
  });
});

describe("tiny-gemma3 mmproj", () => {
  it("holds the keys and tensors llama.cpp's clip.cpp reads for a gemma3 projector (f16)", async () => {
    const header = readGgufHeader(TINY_F16);
    const meta = Object.fromEntries(header.metadata);
    expect(meta).toMatchObject({
      "general.architecture": "clip", "general.type": "mmproj", "general.file_type": 1,
      "clip.projector_type": "gemma3", "clip.has_vision_encoder": true, "clip.use_gelu": true,
      "clip.vision.image_size": 112, "clip.vision.patch_size": 14, "clip.vision.embedding_length": 32,
      "clip.vision.feed_forward_length": 64, "clip.vision.block_count": 2, "clip.vision.attention.head_count": 2,
      "clip.vision.projection_dim": 64, "clip.vision.projector.scale_factor": 2,
      "loom.generator.preset": "tiny-gemma3", "loom.generator.seed": 1,
    });
    expect(meta["clip.vision.attention.layer_norm_epsilon"]).toBeCloseTo(1e-6, 12);
    expect(Array.from(meta["clip.vision.image_mean"] as ArrayLike<number>)).toEqual([0.5, 0.5, 0.5]);
    expect(Array.from(meta["clip.vision.image_std"] as ArrayLike<number>)).toEqual([0.5, 0.5, 0.5]);
    expect(header.tensors.map((t) => [t.name, t.shape, t.type])).toEqual(expectedTinyTensors("f16"));
    // Norm weights are about 1, biases about 0, soft_emb_norm as the file's w + 1 (Gemma3RMSNorm's 1 + w)
    for (const name of ["v.blk.0.ln1.weight", "v.post_ln.weight", "mm.soft_emb_norm.weight"]) {
      const { values } = readGgufTensor(header, name);
      expect(values.every((v) => v > 0.79 && v < 1.21), name).toBe(true);
    }
    expect(rms(readGgufTensor(header, "v.blk.1.ln2.bias").values)).toBeLessThan(0.1);
  });

  it("keeps every matrix F32 but mm.input_projection (F16 as the converter forces it) when written as f32", async () => {
    const path = await generateMmproj({ preset: "tiny-gemma3", out: join(scratch, "tiny-f32.gguf"), dtype: "f32" });
    const header = readGgufHeader(path);
    expect(header.metadata.get("general.file_type")).toBe(0);
    expect(header.tensors.map((t) => [t.name, t.shape, t.type])).toEqual(expectedTinyTensors("f32"));
    // The same draws as the f16 file, before rounding
    const f16 = readGgufHeader(TINY_F16);
    const a = readGgufTensor(header, "v.blk.0.attn_q.weight").values;
    const b = readGgufTensor(f16, "v.blk.0.attn_q.weight").values;
    expect(a.every((v, i) => Math.abs(v - b[i]) <= Math.abs(v) * 1e-3 + 1e-6)).toBe(true);
  });

  it("depends only on the preset and seed: alone, beside the model, or through the CLI", async () => {
    const alone = readFileSync(TINY_F16);
    const cli = join(scratch, "cli.gguf");
    expect(await main(["--preset", "tiny-gemma3", "--mmproj-only", "--mmproj-out", cli])).toBe(0);
    expect(readFileSync(cli).equals(alone)).toBe(true);
    const beside = join(scratch, "beside.gguf");
    const model = join(scratch, "tiny-gemma3-q8_0.gguf");
    expect(await main(["--preset", "tiny-gemma3", "--format", "gguf", "--dtype", "q8_0", "--out", model, "--mmproj-out", beside])).toBe(0);
    expect(readFileSync(beside).equals(alone)).toBe(true);
    expect(readGgufHeader(model).metadata.get("general.architecture")).toBe("gemma3");
    const seeded = await generateMmproj({ preset: "tiny-gemma3", out: join(scratch, "seed2.gguf"), seed: 2 });
    expect(readFileSync(seeded).equals(alone)).toBe(false);
    expect(readGgufHeader(seeded).metadata.get("loom.generator.seed")).toBe(2);
    // tiny-llama has no tower: refused before the model is written
    await expect(generateModel({ preset: "tiny-llama", format: "gguf", dtype: "f32", out: join(scratch, "x.gguf"), mmprojOut: join(scratch, "y.gguf") }))
      .rejects.toThrow(/no vision tower.*gemma3-27b, gemma3-27b-vision-bench, tiny-gemma3/);
    expect(existsSync(join(scratch, "x.gguf"))).toBe(false);
    expect(defaultMmprojPath("gemma3-27b")).toMatch(/models[/\\]mmproj-gemma3-27b-f16\.gguf$/);
    expect(defaultMmprojPath("tiny-gemma3", "f32", 3)).toMatch(/mmproj-tiny-gemma3-f32-seed3\.gguf$/);
  });

  it("rejects CLI flag mixes that would not do what they say", async () => {
    expect(await main(["--preset", "tiny-gemma3", "--mmproj-only", "--dtype", "f16"])).toBe(2);
    expect(await main(["--preset", "tiny-gemma3", "--format", "gguf", "--dtype", "f32", "--mmproj-dtype", "f32"])).toBe(2);
    expect(await main(["--preset", "tiny-llama", "--mmproj-only", "--mmproj-out", join(scratch, "none.gguf")])).toBe(1);
  });
});

describe("vision weight scales", () => {
  const forward = (vision: Gemma3VisionConfig, source: VisionTensorSource, kind: "gradient" | "blocks") =>
    gemma3VisionForward(vision, TINY.config.hidden_size, source, normalisePixels(vision, testImage(vision.vision_config.image_size, kind)));

  it("give finite, distinct image tokens at the text embeddings' scale (tiny-gemma3, read back from the file)", () => {
    const header = readGgufHeader(TINY_F16);
    const source: VisionTensorSource = (name) => readGgufTensor(header, name).values;
    const a = forward(TINY_VISION, source, "gradient");
    const b = forward(TINY_VISION, source, "blocks");
    expect(a.tokens).toBe(16);
    expect(a.embeddings.length).toBe(16 * 64);
    for (const result of [a, b]) {
      const stats = tokenStats(result.embeddings, result.tokens);
      expect(stats.finite).toBe(true);
      expect(stats.rms).toBeGreaterThan(0.7);
      expect(stats.rms).toBeLessThan(1.4);
      expect(stats.spread).toBeGreaterThan(0.6);
      expect(Math.max(...result.residualRms)).toBeLessThan(3);
    }
    expect(rms(a.embeddings.map((v, i) => v - b.embeddings[i])) / rms(a.embeddings)).toBeGreaterThan(0.6);
  });

  it("stay finite and distinct through 27 layers (the 27B tower's depth at tiny width)", () => {
    const deep: Gemma3VisionConfig = { ...TINY_VISION, vision_config: { ...TINY_VISION.vision_config, num_hidden_layers: 27 } };
    const source = plannedSource(deep, TINY.config.hidden_size, 1);
    const a = forward(deep, source, "gradient");
    const b = forward(deep, source, "blocks");
    for (const result of [a, b]) {
      const stats = tokenStats(result.embeddings, result.tokens);
      expect(stats.finite).toBe(true);
      expect(stats.rms).toBeGreaterThan(0.7);
      expect(stats.rms).toBeLessThan(1.4);
      expect(Math.max(...result.residualRms)).toBeLessThan(8);
      expect(stats.spread).toBeGreaterThan(0.35);
    }
    expect(rms(a.embeddings.map((v, i) => v - b.embeddings[i])) / rms(a.embeddings)).toBeGreaterThan(0.5);
  });
});
