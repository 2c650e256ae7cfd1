// Reading a feed: a folder, or an HTTPS URL serving that folder (plain http:// only for this machine, for tests and
// a local mirror). Loom reads a feed only when the operator runs a command; every read is bounded in size and time.
import { createReadStream } from "node:fs";
import { readFile, stat } from "node:fs/promises";
import { join, resolve } from "node:path";

/** Where a feed's files come from. */
export interface FeedSource {
  /** The feed as the operator named it. */
  readonly location: string;
  /** A file's bytes, at most `maxBytes`. @throws Error naming the file or URL. */
  read(path: string, maxBytes: number): Promise<Buffer>;
  /**
   * A file's bytes as they arrive, for files too large to hold (models): at most `maxBytes`, and over a URL at most
   * a minute without a byte (not a minute in all: a large model takes longer). Leaving the loop early stops the
   * read. @throws Error naming the file or URL, from the loop.
   */
  stream(path: string, maxBytes: number): AsyncIterable<Buffer>;
  /** How a file is named in messages: its path or URL. */
  describe(path: string): string;
}

/** Index and manifest files are small; this bounds what a hostile feed can make loom hold. */
export const MAX_METADATA_BYTES = 4 * 1024 ** 2;
/** The largest package file read. */
export const MAX_PACKAGE_BYTES = 2 * 1024 ** 3;
/** The largest model file streamed (a hostile feed can still make loom write this much before the hash is known). */
export const MAX_MODEL_BYTES = 1024 ** 4;
const FETCH_TIMEOUT_MS = 60_000;
const STREAM_CHUNK_BYTES = 1024 ** 2;
const LOOPBACK = new Set(["127.0.0.1", "localhost", "[::1]"]);

/** The source for `location`: http(s) URLs by fetch, anything else a folder. @throws Error for a refused URL. */
export function openFeed(location: string, timeoutMs = FETCH_TIMEOUT_MS): FeedSource {
  if (/^[a-z]+:\/\//i.test(location)) return urlFeed(location, timeoutMs);
  return folderFeed(location);
}

function folderFeed(folder: string): FeedSource {
  const root = resolve(folder);
  const describe = (path: string) => join(root, path);
  return {
    location: folder,
    describe,
    async read(path, maxBytes) {
      try {
        const info = await stat(describe(path));
        if (info.size > maxBytes) throw new Error(`${info.size} bytes, more than the ${maxBytes} allowed`);
        return await readFile(describe(path));
      } catch (error) {
        throw new Error(`cannot read ${describe(path)}: ${(error as Error).message}`);
      }
    },
    async *stream(path, maxBytes) {
      try {
        const info = await stat(describe(path));
        if (info.size > maxBytes) throw new Error(`${info.size} bytes, more than the ${maxBytes} allowed`);
        yield* bounded(createReadStream(describe(path), { highWaterMark: STREAM_CHUNK_BYTES }), maxBytes);
      } catch (error) {
        throw new Error(`cannot read ${describe(path)}: ${(error as Error).message}`);
      }
    },
  };
}

function urlFeed(location: string, timeoutMs: number): FeedSource {
  const base = new URL(location.endsWith("/") ? location : `${location}/`);
  if (!allowedUrl(base)) throw new Error(`feed ${location}: only https:// feeds are read (http:// only for 127.0.0.1, localhost or [::1])`);
  const describe = (path: string) => new URL(path, base).href;
  return {
    location,
    describe,
    async read(path, maxBytes) {
      const url = describe(path);
      try {
        const response = await fetch(url, { signal: AbortSignal.timeout(timeoutMs) });
        // Redirects are followed (release files often live on a CDN), but never down to plain http elsewhere.
        if (!allowedUrl(new URL(response.url))) throw new Error(`redirected to ${response.url}, which is not https://`);
        if (!response.ok) throw new Error(`HTTP ${response.status}`);
        return await readBounded(response, maxBytes);
      } catch (error) {
        const e = error as Error;
        throw new Error(`cannot read ${url}: ${e.name === "TimeoutError" ? `no answer within ${timeoutMs / 1000} s` : e.message}`);
      }
    },
    async *stream(path, maxBytes) {
      const url = describe(path);
      // An idle timeout, re-armed by every chunk.
      const controller = new AbortController();
      let idle = false;
      let timer: NodeJS.Timeout | undefined;
      const arm = () => {
        clearTimeout(timer);
        timer = setTimeout(() => {
          idle = true;
          controller.abort();
        }, timeoutMs);
      };
      try {
        arm();
        const response = await fetch(url, { signal: controller.signal });
        if (!allowedUrl(new URL(response.url))) throw new Error(`redirected to ${response.url}, which is not https://`);
        if (!response.ok) throw new Error(`HTTP ${response.status}`);
        const length = Number(response.headers.get("content-length") ?? Number.NaN);
        if (length > maxBytes) throw new Error(`${length} bytes, more than the ${maxBytes} allowed`);
        for await (const chunk of bounded(response.body as unknown as AsyncIterable<Uint8Array>, maxBytes)) {
          arm();
          yield chunk;
        }
      } catch (error) {
        throw new Error(`cannot read ${url}: ${idle ? `no data for ${timeoutMs / 1000} s` : (error as Error).message}`);
      } finally {
        clearTimeout(timer);
      }
    },
  };
}

function allowedUrl(url: URL): boolean {
  return url.protocol === "https:" || (url.protocol === "http:" && LOOPBACK.has(url.hostname));
}

/** The chunks of `source` as Buffers, refused once they pass `maxBytes` (a file that grows, a lying Content-Length). */
async function* bounded(source: AsyncIterable<Uint8Array>, maxBytes: number): AsyncIterable<Buffer> {
  let total = 0;
  for await (const chunk of source) {
    total += chunk.length;
    if (total > maxBytes) throw new Error(`more than the ${maxBytes} bytes allowed`);
    yield Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
  }
}

/** The body, refused once it passes `maxBytes` (whatever Content-Length claimed). */
async function readBounded(response: Response, maxBytes: number): Promise<Buffer> {
  const chunks: Uint8Array[] = [];
  let total = 0;
  for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
    total += chunk.length;
    // Leaving the loop cancels the stream.
    if (total > maxBytes) throw new Error(`more than the ${maxBytes} bytes allowed`);
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}
