// Split GGUF models (llama.cpp's gguf-split layout) open as one model: the parts' tensors together, each read from its
// own file; a part missing, out of place or loaded instead of the first is an error naming the file.
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ensureTestModel, testModelSkipReason } from "../../../scripts/test-models.js";
import { splitGguf } from "../../../scripts/split-gguf.js";
import { ModelFileError } from "../errors.js";
import { openModelSource } from "../source.js";
import { readGgufHeader } from "./reader.js";
import { SPLIT_KEYS, parseSplitName, readGgufModelFiles, splitPartPath } from "./split.js";

const work = mkdtempSync(join(tmpdir(), "loom-split-"));
afterAll(() => rmSync(work, { recursive: true, force: true }));

describe("split names", () => {
  it("reads and writes llama.cpp's -0000K-of-0000N.gguf", () => {
    expect(parseSplitName("/m/Qwen3-8B-Q4_K_M-00002-of-00003.gguf")).toEqual({ prefix: "/m/Qwen3-8B-Q4_K_M", part: 2, count: 3 });
    expect(parseSplitName("model-Q4_K_M.gguf")).toBeUndefined();
    expect(parseSplitName("model-00004-of-00003.gguf")).toBeUndefined();
    expect(parseSplitName("model-1-of-3.gguf")).toBeUndefined();
    expect(splitPartPath("/m/x", 1, 12)).toBe("/m/x-00001-of-00012.gguf");
  });
});

const reason = testModelSkipReason("tiny-llama");
describe.skipIf(reason !== undefined)("a split model", () => {
  let whole = "";
  let parts: string[] = [];
  beforeAll(async () => {
    whole = await ensureTestModel("tiny-llama", "gguf", "q8_0");
    parts = splitGguf(whole, join(work, "tiny-llama-Q8_0"), 3);
  });

  it("is written as gguf-split writes it: all metadata in the first part, split keys in every part", () => {
    expect(parts.map((path) => basename(path))).toEqual(["tiny-llama-Q8_0-00001-of-00003.gguf", "tiny-llama-Q8_0-00002-of-00003.gguf", "tiny-llama-Q8_0-00003-of-00003.gguf"]);
    const original = readGgufHeader(whole);
    const headers = parts.map((path) => readGgufHeader(path));
    for (const [key, value] of original.metadata) expect(headers[0].metadata.get(key), key).toEqual(value);
    headers.forEach((header, index) => {
      expect(header.metadata.get(SPLIT_KEYS.number)).toBe(index);
      expect(header.metadata.get(SPLIT_KEYS.count)).toBe(3);
      expect(header.metadata.get(SPLIT_KEYS.tensorsCount)).toBe(original.tensors.length);
      expect(header.tensors.length).toBeGreaterThan(0);
    });
    expect(headers[1].metadata.has("general.architecture")).toBe(false);
    expect(headers.flatMap((header) => header.tensors.map((tensor) => tensor.name))).toEqual(original.tensors.map((tensor) => tensor.name));
  });

  it("opens from its first part as the whole file does, each tensor located in its part with the same bytes", () => {
    const split = openModelSource(parts[0]);
    const single = openModelSource(whole);
    expect(split.config).toEqual(single.config);
    expect(split.totalTensorBytes).toBe(single.totalTensorBytes);
    expect([...split.tensors.keys()].sort()).toEqual([...single.tensors.keys()].sort());
    expect(new Set([...split.tensors.values()].map((tensor) => tensor.path))).toEqual(new Set(parts));
    const wholeBytes = readFileSync(whole);
    for (const [name, tensor] of split.tensors) {
      const reference = single.tensors.get(name)!;
      expect({ ...tensor, path: undefined, fileOffset: undefined }, name).toEqual({ ...reference, path: undefined, fileOffset: undefined });
      const bytes = readFileSync(tensor.path).subarray(tensor.fileOffset, tensor.fileOffset + tensor.byteLength);
      expect(bytes.equals(wholeBytes.subarray(reference.fileOffset, reference.fileOffset + reference.byteLength)), name).toBe(true);
    }
  });

  it("refuses a part other than the first, naming the first", () => {
    expect(() => openModelSource(parts[1])).toThrow(new ModelFileError(parts[1], "part 2 of a 3-part split model: load its first part (tiny-llama-Q8_0-00001-of-00003.gguf)"));
  });

  it("names a missing part", () => {
    const prefix = join(work, "missing");
    const copies = parts.map((path, index) => {
      const copy = splitPartPath(prefix, index + 1, 3);
      copyFileSync(path, copy);
      return copy;
    });
    rmSync(copies[2]);
    expect(() => readGgufModelFiles(copies[0])).toThrow(`${copies[0]}: part 3 of this 3-part split model is missing: ${copies[2]}`);
  });

  it("names a part whose metadata says it is another part, and a first part renamed so its parts cannot be found", () => {
    const prefix = join(work, "swapped");
    copyFileSync(parts[0], splitPartPath(prefix, 1, 3));
    copyFileSync(parts[2], splitPartPath(prefix, 2, 3));
    copyFileSync(parts[1], splitPartPath(prefix, 3, 3));
    expect(() => readGgufModelFiles(splitPartPath(prefix, 1, 3))).toThrow(`${splitPartPath(prefix, 2, 3)}: expected part 2 of 3 (split.no 1, split.count 3), its metadata says split.no 2, split.count 3`);
    const renamed = join(work, "renamed.gguf");
    writeFileSync(renamed, readFileSync(parts[0]));
    expect(() => readGgufModelFiles(renamed)).toThrow("its name does not end in -00001-of-00003.gguf, so its other parts cannot be found");
  });
});
