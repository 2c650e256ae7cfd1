// Generates random-weight models with the exact shapes of public models, as GGUF files or Hugging Face directories,
// and (Gemma 3 presets) their vision tower and projector as a llama.cpp mmproj GGUF.
// Library: generateModel(...), generateMmproj(...). CLI: node dist/scripts/generate-model.js --preset smollm2-135m
// --format gguf --dtype q8_0 writes models/smollm2-135m-q8_0.gguf (models/ is git-ignored but for the bundled
// stories260K/); --out to choose; --mmproj-out / --mmproj-only for the mmproj.
import { mkdirSync, renameSync, rmSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { parseArgs } from "node:util";
import { PACKAGE_ROOT } from "../kernels/package-root.js";
import type { GenerationProgress, ProgressListener } from "./generation-progress.js";
import { type ModelDtype, type ModelFormat, MODEL_DTYPES, checkFormatDtype, parseModelDtype } from "./model-dtypes.js";
import { PRESET_NAMES, VISION_PRESET_NAMES, getPreset, isGemma4, visionOf } from "./model-presets.js";
import { MMPROJ_DTYPES, type MmprojDtype } from "./gemma3-vision-tensors.js";
import { writeGgufMmproj } from "./write-gguf-mmproj.js";
import { writeGgufModel } from "./write-gguf-model.js";
import { writeHuggingFaceModel } from "./write-hf-model.js";

export type { GenerationProgress, ProgressListener } from "./generation-progress.js";
export type { ModelDtype, ModelFormat } from "./model-dtypes.js";
export type { MmprojDtype } from "./gemma3-vision-tensors.js";

/**
 * Version of the generated values and file layout. Bump it whenever a change alters what a (preset, format, dtype,
 * seed) produces, so cached test models are regenerated.
 */
export const GENERATOR_VERSION = 3;

/** The seed used when none is given. */
export const DEFAULT_SEED = 1;

/** What to generate and where. */
export interface GenerateModelOptions {
  /** A name from MODEL_PRESETS, e.g. "smollm2-135m" or "tiny-llama". */
  preset: string;
  /** "gguf": one .gguf file at `out`; "hf": a Hugging Face directory at `out` (safetensors, config, tokenizer). */
  format: ModelFormat;
  /** Weight dtype; "hf" takes only f32, f16 and bf16. */
  dtype: ModelDtype;
  /** Output file (gguf) or directory (hf); default defaultModelPath(preset, format, dtype, seed). */
  out?: string;
  /** Seed of the weights (default 1); the same (preset, seed) gives the same model in every format. */
  seed?: number;
  /** hf only: split the weights into shards of at most this many bytes, with model.safetensors.index.json. */
  shardBytes?: number;
  /** Called after each tensor is written (of the model, then of the mmproj). */
  onProgress?: ProgressListener;
  /**
   * Also write the preset's vision tower and projector as a llama.cpp mmproj GGUF at this path, with the same seed
   * (presets with a vision tower only: VISION_PRESET_NAMES). Checked before the model is written.
   */
  mmprojOut?: string;
  /** The mmproj's dtype: f16 (default, as llama.cpp's published mmproj-model-f16.gguf files) or f32. */
  mmprojDtype?: MmprojDtype;
}

/** What mmproj to generate and where (generateMmproj: the vision tower and projector alone, no text model). */
export interface GenerateMmprojOptions {
  /** A preset with a vision tower (VISION_PRESET_NAMES), e.g. "tiny-gemma3" or "gemma3-27b". */
  preset: string;
  /** Output file; default defaultMmprojPath(preset, dtype, seed). */
  out?: string;
  /** Seed of the weights (default 1): the same as the text model's, so a pair generated together or apart matches. */
  seed?: number;
  /** f16 (default) or f32; mm.input_projection is F16 and the embeddings F32 in both, as the converter writes them. */
  dtype?: MmprojDtype;
  /** Called after each tensor is written. */
  onProgress?: ProgressListener;
}

/** The folder generated models go to by default: the package's models/, which git ignores but for stories260K/. */
export const GENERATED_MODELS_DIR = join(PACKAGE_ROOT, "models");

/** Where a model goes without --out: models/<preset>-<dtype>[-seed<N>][.gguf] (a directory for hf). */
export function defaultModelPath(preset: string, format: ModelFormat, dtype: ModelDtype, seed = DEFAULT_SEED): string {
  return join(GENERATED_MODELS_DIR, `${preset}-${dtype}${seed === DEFAULT_SEED ? "" : `-seed${seed}`}${format === "gguf" ? ".gguf" : ""}`);
}

/** Where an mmproj goes without an explicit path: models/mmproj-<preset>-<dtype>[-seed<N>].gguf, llama.cpp's naming. */
export function defaultMmprojPath(preset: string, dtype: MmprojDtype = "f16", seed = DEFAULT_SEED): string {
  return join(GENERATED_MODELS_DIR, `mmproj-${preset}-${dtype}${seed === DEFAULT_SEED ? "" : `-seed${seed}`}.gguf`);
}

/** Parses an mmproj dtype name (case-insensitive); throws listing the valid ones. */
export function parseMmprojDtype(text: string): MmprojDtype {
  const dtype = text.toLowerCase() as MmprojDtype;
  if (!MMPROJ_DTYPES.includes(dtype)) throw new RangeError(`unknown mmproj dtype '${text}'; choose one of: ${MMPROJ_DTYPES.join(", ")}`);
  return dtype;
}

function checkSeed(seed: number): void {
  if (!Number.isInteger(seed) || seed < 0 || seed > 0xffffffff) throw new RangeError(`seed must be an integer in [0, 2^32), got ${seed}`);
}

/** Writes a GGUF file under a temporary name and renames it, so a failed or interrupted run leaves no truncated file. */
function writeGgufAtomically(out: string, write: (partialPath: string) => void): void {
  mkdirSync(dirname(out), { recursive: true });
  const partial = `${out}.partial-${process.pid}`;
  try {
    write(partial);
    renameSync(partial, out);
  } finally {
    rmSync(partial, { force: true });
  }
}

/**
 * Writes the model described by `options` (and its mmproj with `mmprojOut`); resolves to the model's path.
 * Synchronous work, wrapped for callers.
 */
export async function generateModel(options: GenerateModelOptions): Promise<string> {
  const preset = getPreset(options.preset);
  checkFormatDtype(options.format, options.dtype);
  if (options.format === "hf" && isGemma4(preset.config)) throw new RangeError(`preset ${preset.name} is written as GGUF only (loom reads Gemma 4 from GGUF)`);
  const seed = options.seed ?? DEFAULT_SEED;
  checkSeed(seed);
  if (options.mmprojOut !== undefined) {
    visionOf(preset);
    parseMmprojDtype(options.mmprojDtype ?? "f16");
  } else if (options.mmprojDtype !== undefined) {
    throw new RangeError("mmprojDtype applies only with mmprojOut");
  }
  if (options.shardBytes !== undefined && (options.format !== "hf" || !(options.shardBytes > 0))) {
    throw new RangeError("shardBytes applies to --format hf only and must be positive");
  }
  const out = resolve(options.out ?? defaultModelPath(options.preset, options.format, options.dtype, seed));
  const stamp = { version: GENERATOR_VERSION, seed };
  if (options.format === "gguf") {
    writeGgufAtomically(out, (partial) => writeGgufModel(preset, options.dtype, seed, partial, stamp, options.onProgress));
  } else {
    writeHuggingFaceModel(preset, options.dtype, seed, out, stamp, options.shardBytes, options.onProgress);
  }
  if (options.mmprojOut !== undefined) {
    await generateMmproj({ preset: options.preset, out: options.mmprojOut, seed, dtype: options.mmprojDtype, onProgress: options.onProgress });
  }
  return out;
}

/**
 * Writes the vision tower and projector of a preset with one as a llama.cpp mmproj GGUF (general.architecture "clip",
 * clip.projector_type "gemma3"), without its text model; resolves to the output path. The weights depend only on
 * (preset, seed): the same file whether written alone or beside the model.
 */
export async function generateMmproj(options: GenerateMmprojOptions): Promise<string> {
  const preset = getPreset(options.preset);
  const vision = visionOf(preset);
  const dtype = parseMmprojDtype(options.dtype ?? "f16");
  const seed = options.seed ?? DEFAULT_SEED;
  checkSeed(seed);
  const out = resolve(options.out ?? defaultMmprojPath(options.preset, dtype, seed));
  const stamp = { version: GENERATOR_VERSION, seed };
  writeGgufAtomically(out, (partial) => writeGgufMmproj(preset, vision, dtype, seed, partial, stamp, options.onProgress));
  return out;
}

const HELP = `Generate a random-weight model with the exact shape of a public model.

Usage: node dist/scripts/generate-model.js --preset NAME --format gguf|hf --dtype DTYPE [--out PATH] [--seed N] [--shard-mb N]
                                           [--mmproj-out PATH] [--mmproj-dtype f16|f32]
       node dist/scripts/generate-model.js --preset NAME --mmproj-only [--mmproj-out PATH] [--mmproj-dtype f16|f32] [--seed N]

  --preset    ${PRESET_NAMES.join(", ")}
  --format    gguf (one file) or hf (a Hugging Face directory: safetensors, config.json, tokenizer files)
  --dtype     ${MODEL_DTYPES.join(", ")} (hf: f32, f16, bf16 only; q4_k_m / q5_k_m = Q4_K / Q5_K with
              Q6_K for ffn_down/embeddings/output; q6_k = Q6_K throughout; mxfp4 = llama.cpp's MXFP4_MOE: MXFP4
              expert stacks, Q8_0 for the other matrices)
  --out       output file (gguf) or directory (hf); default ${join(GENERATED_MODELS_DIR, "<preset>-<dtype>.gguf")}
              (hf: a directory, without .gguf; a seed other than ${DEFAULT_SEED} adds -seed<N>): git ignores models/ but
              for the bundled stories260K/
  --seed      weight seed, default ${DEFAULT_SEED}; the same preset and seed give the same model in every format
  --shard-mb  hf only: shard the safetensors at this many MiB (writes model.safetensors.index.json)
  --mmproj-out    also write the preset's vision tower and projector at PATH as a llama.cpp mmproj GGUF
                  (clip, projector gemma3; llama-mtmd-cli --mmproj), same seed; presets with one:
                  ${VISION_PRESET_NAMES.join(", ")}
  --mmproj-only   write the mmproj alone, no text model (so no --format, --dtype, --out); to --mmproj-out, default
                  ${join(GENERATED_MODELS_DIR, "mmproj-<preset>-<mmproj dtype>.gguf")} (-seed<N> as above)
  --mmproj-dtype  f16 (default, as llama.cpp's mmproj-model-f16.gguf files) or f32; mm.input_projection is F16 and
                  the patch and position embeddings F32 either way, as convert_hf_to_gguf.py writes them
  --help      this text
`;

function formatProgress(p: GenerationProgress): string {
  const mib = (bytes: number) => (bytes / 1048576).toFixed(0);
  const percent = p.totalBytes > 0 ? Math.floor((100 * p.bytesDone) / p.totalBytes) : 100;
  return `[${String(percent).padStart(3)}%] ${p.tensorsDone}/${p.tensorCount} tensors, ${mib(p.bytesDone)}/${mib(p.totalBytes)} MiB  ${p.tensorName}`;
}

/** Runs the CLI with `argv` (arguments after the script); returns the exit code. */
export async function main(argv: readonly string[]): Promise<number> {
  let values;
  try {
    ({ values } = parseArgs({
      args: [...argv],
      options: {
        preset: { type: "string" }, format: { type: "string" }, dtype: { type: "string" }, out: { type: "string" },
        seed: { type: "string" }, "shard-mb": { type: "string" }, help: { type: "boolean", short: "h" },
        "mmproj-out": { type: "string" }, "mmproj-only": { type: "boolean" }, "mmproj-dtype": { type: "string" },
      },
    }));
  } catch (error) {
    process.stderr.write(`${(error as Error).message}\n\n${HELP}`);
    return 2;
  }
  if (values.help) {
    process.stdout.write(HELP);
    return 0;
  }
  const mmprojOnly = values["mmproj-only"] === true;
  if (!values.preset || (!mmprojOnly && (!values.format || !values.dtype))) {
    process.stderr.write(`${mmprojOnly ? "--preset is" : "--preset, --format and --dtype are"} required\n\n${HELP}`);
    return 2;
  }
  if (mmprojOnly && (values.format !== undefined || values.dtype !== undefined || values.out !== undefined || values["shard-mb"] !== undefined)) {
    process.stderr.write("--mmproj-only writes no text model: drop --format, --dtype, --out and --shard-mb (--mmproj-out and --mmproj-dtype set the mmproj's path and dtype)\n");
    return 2;
  }
  if (!mmprojOnly && values["mmproj-dtype"] !== undefined && values["mmproj-out"] === undefined) {
    process.stderr.write("--mmproj-dtype needs --mmproj-out (or --mmproj-only)\n");
    return 2;
  }
  const started = performance.now();
  const interactive = process.stderr.isTTY === true;
  let lastLine = 0;
  const onProgress = (p: GenerationProgress) => {
    const now = performance.now();
    if (p.tensorsDone < p.tensorCount && now - lastLine < (interactive ? 100 : 2000)) return;
    lastLine = now;
    process.stderr.write(interactive ? `\r${formatProgress(p)}\x1b[K` : `${formatProgress(p)}\n`);
  };
  try {
    const seed = values.seed === undefined ? undefined : Number(values.seed);
    const mmprojDtype = values["mmproj-dtype"] === undefined ? undefined : parseMmprojDtype(values["mmproj-dtype"]);
    const written: string[] = [];
    if (mmprojOnly) {
      written.push(await generateMmproj({ preset: values.preset, out: values["mmproj-out"], seed, dtype: mmprojDtype, onProgress }));
    } else {
      if (values.format !== "gguf" && values.format !== "hf") throw new RangeError(`--format must be gguf or hf, got '${values.format}'`);
      written.push(await generateModel({
        preset: values.preset,
        format: values.format,
        dtype: parseModelDtype(values.dtype!),
        out: values.out,
        seed,
        shardBytes: values["shard-mb"] === undefined ? undefined : Number(values["shard-mb"]) * 1048576,
        mmprojOut: values["mmproj-out"],
        mmprojDtype,
        onProgress,
      }));
      if (values["mmproj-out"] !== undefined) written.push(resolve(values["mmproj-out"]));
    }
    if (interactive) process.stderr.write("\n");
    process.stderr.write(`wrote ${written.join(" and ")} in ${((performance.now() - started) / 1000).toFixed(1)} s\n`);
    return 0;
  } catch (error) {
    if (interactive) process.stderr.write("\n");
    process.stderr.write(`generate-model: ${(error as Error).message}\n`);
    return 1;
  }
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) {
  main(process.argv.slice(2)).then((code) => {
    process.exitCode = code;
  });
}
