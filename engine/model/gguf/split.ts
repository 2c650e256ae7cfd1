// Split GGUF models, as llama.cpp's gguf-split writes them: `<prefix>-00001-of-0000N.gguf` ... `-0000N-of-0000N.gguf`,
// each part a whole GGUF file with its own tensor directory; the first part holds all the metadata, every part
// `split.no` (0-based), `split.count` and `split.tensors.count` (tensors in all parts). Read as one model here.
import { basename } from "node:path";
import { ModelFileError } from "../errors.js";
import type { GgufValue } from "./format.js";
import { type GgufHeader, type GgufTensorInfo, readGgufHeader } from "./reader.js";

/** The metadata keys of a split model (llama.cpp's LLM_KV_SPLIT_*). */
export const SPLIT_KEYS = { number: "split.no", count: "split.count", tensorsCount: "split.tensors.count" } as const;

/** A file name's place in a split model: `model-Q4_K_M-00002-of-00003.gguf` is part 2 of 3 of `model-Q4_K_M`. */
export interface SplitName {
  /** The path (or name) before `-0000K-of-0000N.gguf`. */
  prefix: string;
  /** 1-based, as in the name. */
  part: number;
  count: number;
}

const SPLIT_NAME = /^(.+)-(\d{5})-of-(\d{5})\.gguf$/i;

/** The split a path's name says it belongs to, or undefined for a name without `-0000K-of-0000N.gguf`. */
export function parseSplitName(path: string): SplitName | undefined {
  const match = SPLIT_NAME.exec(path);
  if (!match) return undefined;
  const part = Number(match[2]);
  const count = Number(match[3]);
  if (part < 1 || count < 1 || part > count) return undefined;
  return { prefix: match[1], part, count };
}

/** The path of part `part` (1-based) of `count`, as llama.cpp names it (`%s-%05d-of-%05d.gguf`). */
export function splitPartPath(prefix: string, part: number, count: number): string {
  return `${prefix}-${String(part).padStart(5, "0")}-of-${String(count).padStart(5, "0")}.gguf`;
}

/** A GGUF model read from one file or from all the parts of a split. */
export interface GgufModelFiles {
  /** The first file's header: all of the model's metadata. */
  header: GgufHeader;
  /** Every tensor of every part, each with the path of the file its bytes are in. */
  tensors: Array<GgufTensorInfo & { path: string }>;
  /** The files read, in order (one, unless split). */
  paths: string[];
}

/**
 * Reads a GGUF model's headers: the file's own, or, when its metadata says it is the first part of a split, every
 * part's (found beside it by llama.cpp's naming), with the tensors of all parts together.
 * @throws ModelFileError naming the part: not the first part, a part missing, a part out of place, a tensor in two
 *   parts, or fewer or more tensors than `split.tensors.count`.
 */
export function readGgufModelFiles(path: string): GgufModelFiles {
  const header = readGgufHeader(path);
  const count = integerKey(header, SPLIT_KEYS.count);
  if (count === undefined || count <= 1) {
    return { header, tensors: header.tensors.map((tensor) => ({ ...tensor, path })), paths: [path] };
  }
  const number = integerKey(header, SPLIT_KEYS.number) ?? 0;
  const name = parseSplitName(path);
  if (number !== 0) {
    const first = name ? basename(splitPartPath(name.prefix, 1, count)) : `the part with ${SPLIT_KEYS.number} 0`;
    throw new ModelFileError(path, `part ${number + 1} of a ${count}-part split model: load its first part (${first})`);
  }
  if (!name || name.count !== count) {
    throw new ModelFileError(path, `the first part of a ${count}-part split model, but its name does not end in -00001-of-${String(count).padStart(5, "0")}.gguf, so its other parts cannot be found`);
  }
  const paths = [path];
  const headers = [header];
  for (let part = 2; part <= count; part++) {
    const partPath = splitPartPath(name.prefix, part, count);
    let partHeader: GgufHeader;
    try {
      partHeader = readGgufHeader(partPath);
    } catch (error) {
      if (error instanceof ModelFileError && error.path === partPath && /cannot open/.test(error.problem)) {
        throw new ModelFileError(path, `part ${part} of this ${count}-part split model is missing: ${partPath} (${error.problem})`);
      }
      throw error;
    }
    const partNumber = integerKey(partHeader, SPLIT_KEYS.number);
    if (partNumber !== part - 1 || integerKey(partHeader, SPLIT_KEYS.count) !== count) {
      throw new ModelFileError(partPath, `expected part ${part} of ${count} (${SPLIT_KEYS.number} ${part - 1}, ${SPLIT_KEYS.count} ${count}), its metadata says ${SPLIT_KEYS.number} ${String(partNumber)}, ${SPLIT_KEYS.count} ${String(integerKey(partHeader, SPLIT_KEYS.count))}`);
    }
    paths.push(partPath);
    headers.push(partHeader);
  }
  const tensors: GgufModelFiles["tensors"] = [];
  const seen = new Map<string, string>();
  headers.forEach((partHeader, index) => {
    for (const tensor of partHeader.tensors) {
      const earlier = seen.get(tensor.name);
      if (earlier !== undefined) throw new ModelFileError(paths[index], `tensor '${tensor.name}' is in ${earlier} too`);
      seen.set(tensor.name, paths[index]);
      tensors.push({ ...tensor, path: paths[index] });
    }
  });
  const expected = integerKey(header, SPLIT_KEYS.tensorsCount);
  if (expected !== undefined && expected !== tensors.length) {
    throw new ModelFileError(path, `${SPLIT_KEYS.tensorsCount} is ${expected}, but the ${count} parts hold ${tensors.length} tensors`);
  }
  return { header, tensors, paths };
}

function integerKey(header: GgufHeader, key: string): number | undefined {
  const value: GgufValue | undefined = header.metadata.get(key);
  if (value === undefined) return undefined;
  if (typeof value !== "number" || !Number.isInteger(value) || value < 0) throw new ModelFileError(header.path, `${key} must be a non-negative integer, got ${String(value)}`);
  return value;
}
