// Reads the regular files of a gzipped tar (as `npm pack` writes it) so that the manifest hashes the bytes the
// package really holds, not the files on disk that npm chose from.
import { createHash } from "node:crypto";
import { gunzipSync } from "node:zlib";

/** One file of the archive. */
export interface TarFileEntry {
  /** Its path inside the archive. */
  path: string;
  size: number;
  sha256: string;
}

const BLOCK = 512;

/** A file of the archive with its bytes. */
export interface TarFile extends TarFileEntry {
  body: Buffer;
}

/** The regular files of a .tgz, in archive order. @throws Error naming `where` when the archive is not a readable tar. */
export function listTgzFiles(tgz: Uint8Array, where: string): TarFileEntry[] {
  return readTgzFiles(tgz, where).map(({ path, size, sha256 }) => ({ path, size, sha256 }));
}

/** The regular files of a .tgz with their bytes (views into one buffer), in archive order. @throws as listTgzFiles. */
export function readTgzFiles(tgz: Uint8Array, where: string): TarFile[] {
  let tar: Buffer;
  try {
    tar = gunzipSync(tgz);
  } catch (error) {
    throw new Error(`${where}: not a gzip file (${(error as Error).message})`);
  }
  const files: TarFile[] = [];
  let paxPath: string | undefined;
  let longName: string | undefined;
  for (let offset = 0; offset + BLOCK <= tar.length; ) {
    const header = tar.subarray(offset, offset + BLOCK);
    if (header.every((byte) => byte === 0)) break;
    const size = parseInt(text(header, 124, 12).trim() || "0", 8);
    if (!Number.isSafeInteger(size) || size < 0) throw new Error(`${where}: a tar header at byte ${offset} has no valid size`);
    const type = String.fromCharCode(header[156]!);
    const body = tar.subarray(offset + BLOCK, offset + BLOCK + size);
    if (body.length < size) throw new Error(`${where}: truncated at byte ${offset}`);
    const prefix = text(header, 345, 155);
    const name = paxPath ?? longName ?? (prefix ? `${prefix}/${text(header, 0, 100)}` : text(header, 0, 100));
    if (type === "x") paxPath = paxRecord(body, "path");
    else if (type === "L") longName = body.toString("utf8").replace(/\0.*$/s, "");
    else {
      if (type === "0" || type === "\0") files.push({ path: name, size, sha256: createHash("sha256").update(body).digest("hex"), body });
      paxPath = undefined;
      longName = undefined;
    }
    offset += BLOCK + Math.ceil(size / BLOCK) * BLOCK;
  }
  return files;
}

function text(header: Buffer, start: number, length: number): string {
  return header.subarray(start, start + length).toString("utf8").replace(/\0.*$/s, "");
}

/** A pax extended header's value for `key` ("LEN key=value\n" records). */
function paxRecord(body: Buffer, key: string): string | undefined {
  for (const line of body.toString("utf8").split("\n")) {
    const match = /^\d+ ([^=]+)=(.*)$/s.exec(line);
    if (match?.[1] === key) return match[2];
  }
  return undefined;
}
