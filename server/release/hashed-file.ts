// Model files are gigabytes: they are written and hashed chunk by chunk as they stream, never held whole in memory.
import { createHash } from "node:crypto";
import { createReadStream } from "node:fs";
import { open } from "node:fs/promises";

/** A file's size in bytes and SHA-256 (hex). */
export interface FileDigest {
  size: number;
  sha256: string;
}

/** What `writeHashed` wrote: the digest of the bytes written, and whether the source went past the limit. */
export interface WrittenDigest extends FileDigest {
  /** True when the source had more than `limit` bytes: writing stopped there, and the digest is of a prefix. */
  overLimit: boolean;
}

const READ_CHUNK_BYTES = 1024 ** 2;

/** The bytes of a local file, in 1 MiB chunks. */
export function readChunks(path: string): AsyncIterable<Buffer> {
  // Stryker disable next-line ObjectLiteral: the chunk size changes the number of reads, not the bytes read
  return createReadStream(path, { highWaterMark: READ_CHUNK_BYTES });
}

/** Hashes a local file as it streams. @throws Error from the file system (ENOENT and the like). */
export async function hashFile(path: string): Promise<FileDigest> {
  const hash = createHash("sha256");
  let size = 0;
  for await (const chunk of readChunks(path)) {
    hash.update(chunk);
    size += chunk.length;
  }
  return { size, sha256: hash.digest("hex") };
}

/**
 * Writes `chunks` to `path` (created or truncated), hashing them as they pass, and flushes the file to disk
 * (fsync) before returning, so that a rename after it never publishes a file a crash could leave half-written.
 * Stops reading once the source passes `limit` bytes (the stream is cancelled). @throws Error from the source or
 * the file system; the file is left for the caller to remove.
 */
export async function writeHashed(chunks: AsyncIterable<Uint8Array>, path: string, limit = Number.MAX_SAFE_INTEGER): Promise<WrittenDigest> {
  const hash = createHash("sha256");
  let size = 0;
  let overLimit = false;
  const file = await open(path, "w", 0o644);
  try {
    for await (const chunk of chunks) {
      if (size + chunk.length > limit) {
        overLimit = true;
        // Leaving the loop cancels the source.
        break;
      }
      hash.update(chunk);
      size += chunk.length;
      // A write may take less than the whole chunk.
      for (let offset = 0; offset < chunk.length; ) offset += (await file.write(chunk, offset, chunk.length - offset)).bytesWritten;
    }
    await file.sync();
  } finally {
    await file.close();
  }
  return { size, sha256: hash.digest("hex"), overLimit };
}
