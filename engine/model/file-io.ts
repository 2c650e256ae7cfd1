// Positioned file reads that loop over short reads and report failures against the file's path.
import { closeSync, openSync, readSync } from "node:fs";
import { ModelFileError } from "./errors.js";

/** Opens a file for reading, turning OS errors into a {@link ModelFileError} that names it. */
export function openForReading(path: string): number {
  try {
    return openSync(path, "r");
  } catch (error) {
    throw new ModelFileError(path, `cannot open: ${(error as Error).message}`);
  }
}

/** Reads exactly `target.length` bytes at `position` into `target`. */
export function readFully(fd: number, path: string, target: Uint8Array, position: number): void {
  let done = 0;
  while (done < target.length) {
    const n = readSync(fd, target, done, target.length - done, position + done);
    if (n === 0) throw new ModelFileError(path, `unexpected end of file at byte ${position + done}`);
    done += n;
  }
}

/** Reads `length` bytes at `offset` of a file into a fresh array. */
export function readFileRange(path: string, offset: number, length: number): Uint8Array {
  const target = new Uint8Array(length);
  const fd = openForReading(path);
  try {
    readFully(fd, path, target, offset);
  } finally {
    closeSync(fd);
  }
  return target;
}
