// Downloads one file over HTTP(S) to a temporary name and renames it once complete, so a partial file is never taken
// for a whole one; a download whose bytes stop arriving fails instead of hanging. Optionally it resumes an earlier
// interrupted download from its temporary file (an HTTP Range request) and checks the size and SHA-256 it was promised.
import { createHash } from "node:crypto";
import { createReadStream, renameSync, rmSync, statSync } from "node:fs";
import { open } from "node:fs/promises";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import type { ReadableStream } from "node:stream/web";

/** What a file must be once downloaded. */
export interface ExpectedFile {
  size: number;
  /** Hex; undefined checks the size alone (a file the Hub keeps in git rather than LFS has no SHA-256 listed). */
  sha256?: string;
  /** Who said so, for the error message ("the Hub's metadata"). */
  source: string;
}

/** Options of {@link downloadFile}. */
export interface DownloadOptions {
  /**
   * Fails the download when no byte arrives for this long (default 30 s): before the response, or between chunks.
   * NOTE: an idle limit, not a total one: a large file on a slow but live link must still finish.
   */
  stallTimeoutMs?: number;
  /** Called as bytes arrive; `totalBytes` is undefined when the server sends no Content-Length. */
  onProgress?: (receivedBytes: number, totalBytes: number | undefined) => void;
  /** Request headers (`authorization` for a gated repository). fetch drops it on a redirect to another origin. */
  headers?: Record<string, string>;
  /**
   * Keeps the `.partial` file when a download fails midway, and continues it next time from where it stopped (a
   * Range request; a server that answers with the whole file starts it over). Default false: a failure removes it.
   */
  resume?: boolean;
  /** Refuses (and deletes) a download of another size or SHA-256: the target is never put in place then. */
  expected?: ExpectedFile;
}

/** The suffix of a download in progress (`model.safetensors.partial`). */
export const PARTIAL_SUFFIX = ".partial";

/** A download that failed; `status` is the HTTP status when the server refused it. */
export class DownloadError extends Error {
  override readonly name: string = "DownloadError";
  constructor(message: string, readonly status?: number, options?: ErrorOptions) {
    super(message, options);
  }
}

/** A download whose bytes are not the ones promised (size or SHA-256): nothing of it is kept. */
export class DownloadVerificationError extends DownloadError {
  override readonly name = "DownloadVerificationError";
}

/**
 * Downloads `url` (following redirects) into `target`, through `target` + {@link PARTIAL_SUFFIX}.
 * @throws DownloadError naming the URL and what failed: the connection, the HTTP status, a stall, or a body cut short
 *   (the partial file is removed, or kept with `resume`); DownloadVerificationError when the bytes are not the
 *   `expected` ones (the partial file is removed).
 */
export async function downloadFile(url: string, target: string, options: DownloadOptions = {}): Promise<void> {
  const stallMs = options.stallTimeoutMs ?? 30_000;
  const controller = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  const armStallTimer = () => {
    clearTimeout(timer);
    timer = setTimeout(() => controller.abort(new Error(`no data for ${stallMs / 1000} s`)), stallMs);
  };
  const partial = `${target}${PARTIAL_SUFFIX}`;
  const expected = options.expected;
  let keepPartial = options.resume ?? false;
  try {
    let start = options.resume ? existingBytes(partial) : 0;
    // A partial as long as the whole file (or longer) is one whose check was cut short: fetch it again.
    if (expected !== undefined && start >= expected.size) start = 0;
    let hash = createHash("sha256");
    // Hashed before the request: a long read here must not count as the server stalling.
    if (start > 0 && expected?.sha256 !== undefined) for await (const chunk of createReadStream(partial, { end: start - 1 })) hash.update(chunk as Buffer);
    armStallTimer();
    let response = await fetch(url, { signal: controller.signal, headers: { ...options.headers, ...(start > 0 ? { range: `bytes=${start}-` } : {}) } });
    if (response.status === 416 && start > 0) {
      // The partial no longer fits the file (it changed): start over.
      await response.body?.cancel();
      start = 0;
      response = await fetch(url, { signal: controller.signal, headers: options.headers });
    }
    if (!response.ok || !response.body) throw new DownloadError(`HTTP ${response.status}${response.statusText ? ` ${response.statusText}` : ""}`, response.status);
    if (start > 0 && (response.status !== 206 || contentRangeStart(response.headers.get("content-range")) !== start)) start = 0;
    if (start === 0) hash = createHash("sha256");
    const length = response.headers.get("content-length");
    const total = length === null ? expected?.size : start + Number(length);
    if (expected !== undefined && total !== undefined && total !== expected.size) {
      throw new DownloadVerificationError(`the server sends ${total} bytes, ${expected.source} says ${expected.size}`);
    }
    let received = start;
    options.onProgress?.(received, total);
    // Opened before the first byte: a write stream opening lazily could create the file after a failure removed it.
    const file = await open(partial, start > 0 ? "a" : "w");
    await pipeline(
      Readable.fromWeb(response.body as ReadableStream<Uint8Array>),
      async function* count(chunks: AsyncIterable<Uint8Array>) {
        for await (const chunk of chunks) {
          armStallTimer();
          received += chunk.length;
          if (expected !== undefined && received > expected.size) throw new DownloadVerificationError(`more than the ${expected.size} bytes ${expected.source} gives`);
          hash.update(chunk);
          options.onProgress?.(received, total);
          yield chunk;
        }
      },
      file.createWriteStream(),
    );
    if (total !== undefined && received !== total) throw new Error(`the connection closed after ${received} of ${total} bytes`);
    if (expected?.sha256 !== undefined) {
      const sha256 = hash.digest("hex");
      if (sha256 !== expected.sha256.toLowerCase()) throw new DownloadVerificationError(`SHA-256 ${sha256} does not match ${expected.sha256} from ${expected.source}; the download was deleted`);
    }
    renameSync(partial, target);
  } catch (error) {
    if (error instanceof DownloadVerificationError) keepPartial = false;
    // A refusal is about the request, not the bytes so far: a resumable partial stays for the next try.
    if (!keepPartial) rmSync(partial, { force: true });
    const status = error instanceof DownloadError ? error.status : undefined;
    const Type = error instanceof DownloadVerificationError ? DownloadVerificationError : DownloadError;
    throw new Type(`GET ${url}: ${describeError(error)}`, status, { cause: error });
  } finally {
    clearTimeout(timer);
  }
}

/** The bytes of an earlier download's partial file, 0 when there is none. */
function existingBytes(partial: string): number {
  try {
    return statSync(partial).size;
  } catch {
    return 0;
  }
}

/** The first byte of a `Content-Range: bytes 100-199/200` header, undefined when there is none or it is malformed. */
function contentRangeStart(header: string | null): number | undefined {
  const match = header === null ? null : /^bytes (\d+)-\d+\/(\d+|\*)$/.exec(header.trim());
  return match ? Number(match[1]) : undefined;
}

/** An error's message with its causes (`fetch failed: connect ECONNREFUSED 127.0.0.1:1`), each said once. */
export function describeError(error: unknown): string {
  let text = "";
  for (let current = error, depth = 0; current !== undefined && current !== null && depth < 5; depth++) {
    const message = current instanceof Error ? current.message : String(current);
    // A wrapper's message often quotes its cause's already.
    if (message && !text.includes(message)) text = text ? `${text}: ${message}` : message;
    current = current instanceof Error ? current.cause : undefined;
  }
  return text || "unknown error";
}
