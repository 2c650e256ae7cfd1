// `--model hf:<org>/<repo>[:<quant>]`: the repository's GGUF for that quantization (every part of a split one),
// downloaded once into the model cache (<cache>/models/<org>/<repo>/<file>) with the first run's downloader: progress
// bar, `.partial` resumed after an interruption, HF_TOKEN, HF_ENDPOINT, size and SHA-256 checked against the Hub's
// listing. A later start that cannot reach the Hub serves what the cache holds, and says so.
import { existsSync, mkdirSync, readFileSync, renameSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { ProgressBar } from "../../engine/cli/progress-bar.js";
import { DownloadError, describeError, downloadFile } from "./download.js";
import { type HubAccess, HubError, describeRefusal, hubFileUrl, hubHeaders, listHubFiles } from "./hub-api.js";
import { type HubFile, type HubModelName, pickModelFiles } from "./hub-files.js";

/** Options of {@link hubModelPath}; each defaults to what `loom serve` uses. */
export interface HubModelOptions {
  /** Where models are cached: files go under `<cacheDirectory>/models/<org>/<repo>/`. */
  cacheDirectory: string;
  /** The Hub's address (HF_ENDPOINT, else https://huggingface.co), and the token (HF_TOKEN). */
  access: HubAccess;
  /** Where notices go (default stderr, `loom: ` first, later lines indented). */
  notify?: (line: string) => void;
  /** Download progress per file (default a progress bar on stderr when it is a terminal). */
  onProgress?: (file: string, receivedBytes: number, totalBytes: number | undefined) => void;
  /** Fails a download whose bytes stop arriving for this long (default 30 s). */
  stallTimeoutMs?: number;
}

/** The record of a repository's verified downloads, beside them: what a start without the Hub may serve. */
export const HUB_RECORD_FILE = ".loom-hub.json";

/** One verified file in the record. */
interface RecordedFile extends HubFile {
  /** The commit it was downloaded at. */
  revision: string;
}

/** The folder a repository's files are cached in. */
export function hubModelDirectory(cacheDirectory: string, repository: string): string {
  return join(cacheDirectory, "models", ...repository.split("/"));
}

/**
 * The local path of the model `name` names (a split model's first part), downloading what the cache lacks.
 * @throws HubError (the repository missing, gated or private, the Hub unreachable with nothing cached), a
 *   MissingQuantError listing the repository's quantizations, or a DownloadError (a refused, cut or mismatched
 *   download: a mismatch deletes it).
 */
export async function hubModelPath(name: HubModelName, options: HubModelOptions): Promise<string> {
  const notify = options.notify ?? ((notice: string) => process.stderr.write(`loom: ${notice.replaceAll("\n", "\n  ")}\n`));
  const { access } = options;
  const directory = hubModelDirectory(options.cacheDirectory, name.repository);
  const record = readRecord(directory);
  let listing;
  try {
    listing = await listHubFiles(access, name.repository);
  } catch (error) {
    if (!(error instanceof HubError)) throw error;
    return cachedModel(name, directory, record, error, notify);
  }
  const files = pickModelFiles(name, listing.files);
  const missing = files.filter((file) => !isCached(directory, record, file));
  if (missing.length > 0) {
    const bytes = missing.reduce((sum, file) => sum + file.size, 0);
    notify(`downloading ${name.text} (${missing.map((file) => file.path).join(", ")}, ${formatBytes(bytes)}) from ${access.endpoint} into ${directory}`);
  }
  for (const file of missing) {
    const target = join(directory, file.path);
    mkdirSync(join(target, ".."), { recursive: true });
    const bar = options.onProgress ? undefined : new ProgressBar(`downloading ${file.path}`);
    try {
      await downloadFile(hubFileUrl(access, name.repository, listing.revision, file.path), target, {
        headers: hubHeaders(access),
        resume: true,
        expected: { size: file.size, sha256: file.sha256, source: `the Hub's listing of ${name.repository}` },
        stallTimeoutMs: options.stallTimeoutMs,
        onProgress: (received, total) => {
          if (options.onProgress) options.onProgress(file.path, received, total);
          else bar?.update(received, total ?? file.size);
        },
      });
    } catch (error) {
      if (error instanceof DownloadError && (error.status === 401 || error.status === 403)) {
        throw new HubError(`${describeRefusal(access, name.repository, error.status, "")} (GET ${file.path})`, error.status, { cause: error });
      }
      throw error;
    } finally {
      bar?.finish();
    }
    record.set(file.path, { ...file, revision: listing.revision });
    writeRecord(directory, record);
  }
  return join(directory, files[0].path);
}

/** The cached model for `name` when the Hub could not be listed; else the Hub's error, saying nothing is cached. */
function cachedModel(name: HubModelName, directory: string, record: Map<string, RecordedFile>, hubError: HubError, notify: (line: string) => void): string {
  const cached = [...record.values()].filter((file) => isCached(directory, record, file));
  let files: HubFile[];
  try {
    files = pickModelFiles(name, cached);
  } catch {
    throw new HubError(`${hubError.message}; and the cache (${directory}) holds no ${name.quant} GGUF of ${name.repository}`, hubError.status, { cause: hubError });
  }
  notify(`could not list ${name.repository} on the Hub (${describeError(hubError)});\nserving the cached ${files.map((file) => file.path).join(", ")} from ${directory}`);
  return join(directory, files[0].path);
}

/** Whether `file` is in the cache as verified: recorded with the same size and SHA-256, and that size on disk. */
function isCached(directory: string, record: Map<string, RecordedFile>, file: HubFile): boolean {
  const recorded = record.get(file.path);
  if (!recorded || recorded.size !== file.size || recorded.sha256 !== file.sha256) return false;
  const path = join(directory, file.path);
  return existsSync(path) && statSync(path).size === file.size;
}

function readRecord(directory: string): Map<string, RecordedFile> {
  const path = join(directory, HUB_RECORD_FILE);
  if (!existsSync(path)) return new Map();
  try {
    const files = (JSON.parse(readFileSync(path, "utf8")) as { files?: RecordedFile[] }).files ?? [];
    return new Map(files.filter((file) => typeof file?.path === "string" && typeof file.size === "number").map((file) => [file.path, file]));
  } catch {
    // An unreadable record only costs a download: the files are checked again against the Hub.
    return new Map();
  }
}

function writeRecord(directory: string, record: Map<string, RecordedFile>): void {
  const path = join(directory, HUB_RECORD_FILE);
  // Through a temporary name: a record cut short would otherwise vouch for nothing, or fail to parse.
  writeFileSync(`${path}.${process.pid}.tmp`, `${JSON.stringify({ files: [...record.values()] }, null, 1)}\n`);
  renameSync(`${path}.${process.pid}.tmp`, path);
}

/** `1.23 GB`, `45.6 MB`, `789 kB`. */
function formatBytes(bytes: number): string {
  if (bytes >= 1e9) return `${(bytes / 1e9).toFixed(2)} GB`;
  if (bytes >= 1e6) return `${(bytes / 1e6).toFixed(1)} MB`;
  return `${Math.ceil(bytes / 1e3)} kB`;
}
