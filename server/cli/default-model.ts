// Which model `loom serve` loads when none is named: --model, else LOOM_MODEL, else a small instruct model from the
// Hugging Face Hub (SmolLM2-135M-Instruct, safetensors) cached in ~/.cache/loom, downloaded on first use; and where
// that download fails (offline), the model shipped in the package, stories260K, with a notice saying so.
import { existsSync, mkdirSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { UsageError } from "../../engine/cli/arguments.js";
import { ProgressBar } from "../../engine/cli/progress-bar.js";
import { PACKAGE_ROOT } from "../../kernels/package-root.js";
import { describeError, downloadFile } from "./download.js";

/** The default model: a Hugging Face repository and the files a model directory needs. */
export const DEFAULT_MODEL = {
  repository: "HuggingFaceTB/SmolLM2-135M-Instruct",
  files: ["config.json", "model.safetensors", "tokenizer.json", "tokenizer_config.json"],
};

/** The model shipped in the package (models/stories260K, MIT, with its licence beside it): the offline default. */
export const BUNDLED_MODEL: BundledModel = {
  name: "stories260K",
  path: join(PACKAGE_ROOT, "models", "stories260K", "stories260K.gguf"),
  description: "a 260K-parameter model trained on children's stories: it continues stories and does not follow instructions",
};

/** A model shipped in the package. */
export interface BundledModel {
  name: string;
  path: string;
  /** What it is and what to expect of it, for the notice. */
  description: string;
}

/** The cache folder (LOOM_CACHE_DIR, else ~/.cache/loom). */
export function cacheDirectory(): string {
  return process.env.LOOM_CACHE_DIR ?? join(homedir(), ".cache", "loom");
}

/** The Hugging Face Hub's address: HF_ENDPOINT (a mirror or proxy, as Hugging Face's own tools read it), else huggingface.co. */
export function hubEndpoint(): string {
  return (process.env.HF_ENDPOINT || "https://huggingface.co").replace(/\/+$/, "");
}

/** Options of {@link defaultModelPath}; each defaults to what `loom serve` uses. */
export interface DefaultModelOptions {
  /** Where models are cached (default {@link cacheDirectory}). */
  cacheDirectory?: string;
  /** The Hub's address (default {@link hubEndpoint}). */
  endpoint?: string;
  /** Where notices go, one per call, maybe of several lines (default stderr: `loom: ` first, later lines indented). */
  notify?: (line: string) => void;
  /** Download progress per file (default a progress bar on stderr when it is a terminal). */
  onProgress?: (file: string, receivedBytes: number, totalBytes: number | undefined) => void;
  /** Fails a download whose bytes stop arriving for this long (default 30 s). */
  stallTimeoutMs?: number;
  /** The model served when the download fails (default {@link BUNDLED_MODEL}). */
  bundled?: BundledModel;
}

/** The model path to load: the flag, the environment, or the default model ({@link defaultModelPath}). */
export async function resolveModelPath(flag: string | undefined, options: DefaultModelOptions = {}): Promise<string> {
  if (flag) return flag;
  if (process.env.LOOM_MODEL) return process.env.LOOM_MODEL;
  return defaultModelPath(options);
}

/**
 * The default model's folder, downloaded once (the files it lacks) into the cache; if that download fails, the bundled
 * model's path, after a notice naming it, the download error and how to get the default or pass a model.
 * @throws UsageError when the download fails and the bundled model is missing too.
 */
export async function defaultModelPath(options: DefaultModelOptions = {}): Promise<string> {
  const cache = options.cacheDirectory ?? cacheDirectory();
  const notify = options.notify ?? ((notice: string) => process.stderr.write(`loom: ${notice.replaceAll("\n", "\n  ")}\n`));
  const directory = join(cache, "models", DEFAULT_MODEL.repository);
  const missing = DEFAULT_MODEL.files.filter((file) => !existsSync(join(directory, file)));
  if (missing.length === 0) return directory;
  const endpoint = options.endpoint ?? hubEndpoint();
  notify(`no --model given and LOOM_MODEL is unset; downloading ${DEFAULT_MODEL.repository} from ${endpoint} into ${directory}`);
  try {
    mkdirSync(directory, { recursive: true });
    for (const file of missing) {
      const bar = options.onProgress ? undefined : new ProgressBar(`downloading ${file}`);
      const onProgress = (received: number, total: number | undefined) => {
        if (options.onProgress) options.onProgress(file, received, total);
        else if (total !== undefined) bar?.update(received, total);
      };
      try {
        await downloadFile(`${endpoint}/${DEFAULT_MODEL.repository}/resolve/main/${file}`, join(directory, file), { stallTimeoutMs: options.stallTimeoutMs, onProgress });
      } finally {
        bar?.finish();
      }
    }
    return directory;
  } catch (error) {
    const reason = describeError(error);
    const bundled = options.bundled ?? BUNDLED_MODEL;
    const howToGetIt =
      `run loom again with network access (it is downloaded once into ${directory};\nHF_ENDPOINT names a Hub mirror), ` +
      "or pass a model: --model <file.gguf or Hugging Face directory>, or LOOM_MODEL";
    if (!existsSync(bundled.path)) {
      throw new UsageError(`could not download the default model ${DEFAULT_MODEL.repository} (${reason}), and the bundled model ${bundled.path} is missing.\nTo serve a model, ${howToGetIt.replace("\n", " ")}.`);
    }
    notify(`could not download ${DEFAULT_MODEL.repository}: ${reason}`);
    notify(`serving the bundled model instead: ${bundled.name} (${bundled.path}),\n${bundled.description}.\nFor the default model, ${howToGetIt}.`);
    return bundled.path;
  }
}
