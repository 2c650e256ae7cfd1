// Downloads one file over HTTP(S) to a temporary name and renames it once complete, so a partial file is never taken
// for a whole one; a download whose bytes stop arriving fails instead of hanging.
import { renameSync, rmSync } from "node:fs";
import { open } from "node:fs/promises";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import type { ReadableStream } from "node:stream/web";

/** Options of {@link downloadFile}. */
export interface DownloadOptions {
  /**
   * Fails the download when no byte arrives for this long (default 30 s): before the response, or between chunks.
   * NOTE: an idle limit, not a total one: a large file on a slow but live link must still finish.
   */
  stallTimeoutMs?: number;
  /** Called as bytes arrive; `totalBytes` is undefined when the server sends no Content-Length. */
  onProgress?: (receivedBytes: number, totalBytes: number | undefined) => void;
}

/** The suffix of a download in progress (`model.safetensors.partial`). */
export const PARTIAL_SUFFIX = ".partial";

/**
 * Downloads `url` (following redirects) into `target`, through `target` + {@link PARTIAL_SUFFIX}.
 * @throws Error naming the URL and what failed: the connection, the HTTP status, a stall, or a body cut short; the
 *   partial file is removed.
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
  armStallTimer();
  try {
    const response = await fetch(url, { signal: controller.signal });
    if (!response.ok || !response.body) throw new Error(`HTTP ${response.status}${response.statusText ? ` ${response.statusText}` : ""}`);
    const length = response.headers.get("content-length");
    const total = length === null ? undefined : Number(length);
    let received = 0;
    options.onProgress?.(0, total);
    // Opened before the first byte: a write stream opening lazily could create the file after a failure removed it.
    const file = await open(partial, "w");
    await pipeline(
      Readable.fromWeb(response.body as ReadableStream<Uint8Array>),
      async function* count(chunks: AsyncIterable<Uint8Array>) {
        for await (const chunk of chunks) {
          armStallTimer();
          received += chunk.length;
          options.onProgress?.(received, total);
          yield chunk;
        }
      },
      file.createWriteStream(),
    );
    if (total !== undefined && received !== total) throw new Error(`the connection closed after ${received} of ${total} bytes`);
    renameSync(partial, target);
  } catch (error) {
    rmSync(partial, { force: true });
    throw new Error(`GET ${url}: ${describeError(error)}`, { cause: error });
  } finally {
    clearTimeout(timer);
  }
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
