// Which model `loom serve` loads when none is named: --model, else LOOM_MODEL, else a cached download of a small
// instruct model from the Hugging Face Hub (SmolLM2-135M-Instruct, safetensors) into ~/.cache/loom.
import { createWriteStream, existsSync, mkdirSync, renameSync, rmSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { UsageError } from "../../engine/cli/arguments.js";
import { ProgressBar } from "../../engine/cli/progress-bar.js";

/** The default model: a Hugging Face repository and the files a model directory needs. */
export const DEFAULT_MODEL = {
  repository: "HuggingFaceTB/SmolLM2-135M-Instruct",
  files: ["config.json", "model.safetensors", "tokenizer.json", "tokenizer_config.json"],
};

/** The cache folder (LOOM_CACHE_DIR, else ~/.cache/loom). */
export function cacheDirectory(): string {
  return process.env.LOOM_CACHE_DIR ?? join(homedir(), ".cache", "loom");
}

/** The model path to load: the flag, the environment, or the default model (downloaded once). */
export async function resolveModelPath(flag: string | undefined): Promise<string> {
  if (flag) return flag;
  if (process.env.LOOM_MODEL) return process.env.LOOM_MODEL;
  const directory = join(cacheDirectory(), "models", DEFAULT_MODEL.repository);
  const missing = DEFAULT_MODEL.files.filter((file) => !existsSync(join(directory, file)));
  if (missing.length === 0) return directory;
  process.stderr.write(`loom: no --model given and LOOM_MODEL is unset; downloading ${DEFAULT_MODEL.repository} into ${directory}\n`);
  mkdirSync(directory, { recursive: true });
  try {
    for (const file of missing) await download(`https://huggingface.co/${DEFAULT_MODEL.repository}/resolve/main/${file}`, join(directory, file));
  } catch (error) {
    throw new UsageError(
      `could not download the default model (${(error as Error).message}).\n` +
        "Pass a model instead: loom serve --model <file.gguf or Hugging Face directory>, or set LOOM_MODEL;\n" +
        `or place ${DEFAULT_MODEL.files.join(", ")} of ${DEFAULT_MODEL.repository} in ${directory}.`,
    );
  }
  return directory;
}

/** Downloads to a temporary name with a progress bar, then renames (a partial file is never taken for a model). */
async function download(url: string, target: string): Promise<void> {
  const response = await fetch(url, { signal: AbortSignal.timeout(30_000) });
  if (!response.ok || !response.body) throw new Error(`GET ${url}: HTTP ${response.status}`);
  const total = Number(response.headers.get("content-length") ?? 0);
  const bar = new ProgressBar(url.split("/").at(-1) ?? "download");
  let received = 0;
  const partial = `${target}.partial`;
  const body = Readable.fromWeb(response.body as import("node:stream/web").ReadableStream);
  body.on("data", (chunk: Buffer) => {
    received += chunk.length;
    if (total > 0) bar.update(received, total);
  });
  try {
    await pipeline(body, createWriteStream(partial));
  } catch (error) {
    rmSync(partial, { force: true });
    throw error;
  } finally {
    bar.finish();
  }
  renameSync(partial, target);
}
