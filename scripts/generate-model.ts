// Generates random-weight models with the exact shapes of public models, as GGUF files or Hugging Face directories.
// Library: generateModel(...). CLI: node dist/scripts/generate-model.js --preset smollm2-135m --format gguf --dtype q8_0
// writes models/smollm2-135m-q8_0.gguf (models/ is git-ignored but for the bundled stories260K/); --out to choose.
import { mkdirSync, renameSync, rmSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { parseArgs } from "node:util";
import { PACKAGE_ROOT } from "../kernels/package-root.js";
import type { GenerationProgress, ProgressListener } from "./generation-progress.js";
import { type ModelDtype, type ModelFormat, MODEL_DTYPES, checkFormatDtype, parseModelDtype } from "./model-dtypes.js";
import { PRESET_NAMES, getPreset, isGemma4 } from "./model-presets.js";
import { writeGgufModel } from "./write-gguf-model.js";
import { writeHuggingFaceModel } from "./write-hf-model.js";

export type { GenerationProgress, ProgressListener } from "./generation-progress.js";
export type { ModelDtype, ModelFormat } from "./model-dtypes.js";

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
  /** Called after each tensor is written. */
  onProgress?: ProgressListener;
}

/** The folder generated models go to by default: the package's models/, which git ignores but for stories260K/. */
export const GENERATED_MODELS_DIR = join(PACKAGE_ROOT, "models");

/** Where a model goes without --out: models/<preset>-<dtype>[-seed<N>][.gguf] (a directory for hf). */
export function defaultModelPath(preset: string, format: ModelFormat, dtype: ModelDtype, seed = DEFAULT_SEED): string {
  return join(GENERATED_MODELS_DIR, `${preset}-${dtype}${seed === DEFAULT_SEED ? "" : `-seed${seed}`}${format === "gguf" ? ".gguf" : ""}`);
}

/** Writes the model described by `options`; resolves to the output path. Synchronous work, wrapped for callers. */
export async function generateModel(options: GenerateModelOptions): Promise<string> {
  const preset = getPreset(options.preset);
  checkFormatDtype(options.format, options.dtype);
  if (options.format === "hf" && isGemma4(preset.config)) throw new RangeError(`preset ${preset.name} is written as GGUF only (loom reads Gemma 4 from GGUF)`);
  const seed = options.seed ?? DEFAULT_SEED;
  if (!Number.isInteger(seed) || seed < 0 || seed > 0xffffffff) throw new RangeError(`seed must be an integer in [0, 2^32), got ${seed}`);
  if (options.shardBytes !== undefined && (options.format !== "hf" || !(options.shardBytes > 0))) {
    throw new RangeError("shardBytes applies to --format hf only and must be positive");
  }
  const out = resolve(options.out ?? defaultModelPath(options.preset, options.format, options.dtype, seed));
  const stamp = { version: GENERATOR_VERSION, seed };
  if (options.format === "gguf") {
    mkdirSync(dirname(out), { recursive: true });
    // Written under a temporary name and renamed, so a failed or interrupted run leaves no truncated file.
    const partial = `${out}.partial-${process.pid}`;
    try {
      writeGgufModel(preset, options.dtype, seed, partial, stamp, options.onProgress);
      renameSync(partial, out);
    } finally {
      rmSync(partial, { force: true });
    }
  } else {
    writeHuggingFaceModel(preset, options.dtype, seed, out, stamp, options.shardBytes, options.onProgress);
  }
  return out;
}

const HELP = `Generate a random-weight model with the exact shape of a public model.

Usage: node dist/scripts/generate-model.js --preset NAME --format gguf|hf --dtype DTYPE [--out PATH] [--seed N] [--shard-mb N]

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
  if (!values.preset || !values.format || !values.dtype) {
    process.stderr.write(`--preset, --format and --dtype are required\n\n${HELP}`);
    return 2;
  }
  const started = performance.now();
  const interactive = process.stderr.isTTY === true;
  let lastLine = 0;
  try {
    if (values.format !== "gguf" && values.format !== "hf") throw new RangeError(`--format must be gguf or hf, got '${values.format}'`);
    const out = await generateModel({
      preset: values.preset,
      format: values.format,
      dtype: parseModelDtype(values.dtype),
      out: values.out,
      seed: values.seed === undefined ? undefined : Number(values.seed),
      shardBytes: values["shard-mb"] === undefined ? undefined : Number(values["shard-mb"]) * 1048576,
      onProgress: (p) => {
        const now = performance.now();
        if (p.tensorsDone < p.tensorCount && now - lastLine < (interactive ? 100 : 2000)) return;
        lastLine = now;
        process.stderr.write(interactive ? `\r${formatProgress(p)}\x1b[K` : `${formatProgress(p)}\n`);
      },
    });
    if (interactive) process.stderr.write("\n");
    process.stderr.write(`wrote ${out} in ${((performance.now() - started) / 1000).toFixed(1)} s\n`);
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
