// Which model `loom serve` loads: --model, else LOOM_MODEL (a path, or `hf:<org>/<repo>[:<quant>]` downloaded into the
// cache, see hub-model.ts), else a small instruct model from the Hugging Face Hub (SmolLM2-135M-Instruct, safetensors)
// cached in ~/.cache/loom, downloaded on first use; and where that download fails (offline), the model shipped in the
// package, stories260K, with a notice saying so.
import { existsSync, mkdirSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { UsageError } from "../../engine/cli/arguments.js";
import { ProgressBar } from "../../engine/cli/progress-bar.js";
import { PACKAGE_ROOT } from "../../kernels/package-root.js";
import { describeError, downloadFile } from "./download.js";
import { isHubModelName, parseHubModelName } from "./hub-files.js";
import { hubModelPath } from "./hub-model.js";

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

/** A Hugging Face token for gated and private repositories: HF_TOKEN, as Hugging Face's own tools read it. */
export function hubToken(): string | undefined {
  return process.env.HF_TOKEN || undefined;
}

/** Options of {@link defaultModelPath} and {@link modelPath}; each defaults to what `loom serve` uses. */
export interface DefaultModelOptions {
  /** Where models are cached (default {@link cacheDirectory}). */
  cacheDirectory?: string;
  /** The Hub's address (default {@link hubEndpoint}). */
  endpoint?: string;
  /** The Hub token for `hf:` models (default {@link hubToken}). */
  token?: string;
  /** Where notices go, one per call, maybe of several lines (default stderr: `loom: ` first, later lines indented). */
  notify?: (line: string) => void;
  /** Download progress per file (default a progress bar on stderr when it is a terminal). */
  onProgress?: (file: string, receivedBytes: number, totalBytes: number | undefined) => void;
  /** Fails a download whose bytes stop arriving for this long (default 30 s). */
  stallTimeoutMs?: number;
  /** The model served when the download fails (default {@link BUNDLED_MODEL}). */
  bundled?: BundledModel;
}

/** The model path to load: the flag, the environment ({@link modelPath} of either), or the default model ({@link defaultModelPath}). */
export async function resolveModelPath(flag: string | undefined, options: DefaultModelOptions = {}): Promise<string> {
  if (flag) return modelPath(flag, options);
  if (process.env.LOOM_MODEL) return modelPath(process.env.LOOM_MODEL, options);
  return defaultModelPath(options);
}

/**
 * The local path of a named model: a path as it is; `hf:<org>/<repo>[:<quant>]` the repository's GGUF for that
 * quantization in the cache, downloaded first if needed (hub-model.ts).
 * @throws UsageError for a malformed `hf:` name or a quantization the repository lacks; HubError or DownloadError
 *   when the download fails.
 */
export async function modelPath(model: string, options: DefaultModelOptions = {}): Promise<string> {
  if (!isHubModelName(model)) return model;
  return hubModelPath(parseHubModelName(model), {
    cacheDirectory: options.cacheDirectory ?? cacheDirectory(),
    access: { endpoint: options.endpoint ?? hubEndpoint(), token: options.token ?? hubToken() },
    ...(options.notify ? { notify: options.notify } : {}),
    ...(options.onProgress ? { onProgress: options.onProgress } : {}),
    ...(options.stallTimeoutMs !== undefined ? { stallTimeoutMs: options.stallTimeoutMs } : {}),
  });
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
