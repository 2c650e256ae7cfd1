// Reading a feed: a folder, or an HTTPS URL serving that folder (plain http:// only for this machine, for tests and
// a local mirror). Loom reads a feed only when the operator runs a command; every read is bounded in size and time.
import { readFile, stat } from "node:fs/promises";
import { join, resolve } from "node:path";

/** Where a feed's files come from. */
export interface FeedSource {
  /** The feed as the operator named it. */
  readonly location: string;
  /** A file's bytes, at most `maxBytes`. @throws Error naming the file or URL. */
  read(path: string, maxBytes: number): Promise<Buffer>;
  /** How a file is named in messages: its path or URL. */
  describe(path: string): string;
}

/** Index and manifest files are small; this bounds what a hostile feed can make loom hold. */
export const MAX_METADATA_BYTES = 4 * 1024 ** 2;
/** The largest package file read. */
export const MAX_PACKAGE_BYTES = 2 * 1024 ** 3;
const FETCH_TIMEOUT_MS = 60_000;
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
  };
}

function allowedUrl(url: URL): boolean {
  return url.protocol === "https:" || (url.protocol === "http:" && LOOPBACK.has(url.hostname));
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
