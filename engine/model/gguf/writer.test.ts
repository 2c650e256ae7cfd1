import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { GgmlType } from "../../../kernels/formats/types.js";
import { readGgufHeader } from "./reader.js";
import { gguf, writeGguf } from "./writer.js";

const work = mkdtempSync(join(tmpdir(), "loom-gguf-"));
afterAll(() => rmSync(work, { recursive: true, force: true }));

describe("GGUF writer and reader", () => {
  it("round-trip metadata of every type and tensor data, across header buffer growth", () => {
    const path = join(work, "roundtrip.gguf");
    // A leading U+FEFF is part of a string (Gemma's vocabulary has "\uFEFF//" beside "//"), not a byte-order mark.
    const tokens = ["\uFEFF//", "//", ...Array.from({ length: 20000 }, (_, i) => `token-${i}-ü🎉`)];
    const data = new Uint8Array(34 * 2).map((_, i) => i);
    writeGguf(path, [
      ["general.architecture", gguf.string("llama")],
      ["a.u32", gguf.u32(4_000_000_000)],
      ["a.i32", gguf.i32(-5)],
      ["a.f32", gguf.f32(0.5)],
      ["a.bool", gguf.bool(true)],
      ["a.u64", { type: "u64", value: 2n ** 40n }],
      ["a.tokens", gguf.strings(tokens)],
      ["a.scores", gguf.f32s([1.5, -2])],
    ], [{ name: "w", shape: [64], type: GgmlType.Q8_0, data }]);
    const header = readGgufHeader(path);
    expect(header.metadata.get("a.u32")).toBe(4_000_000_000);
    expect(header.metadata.get("a.i32")).toBe(-5);
    expect(header.metadata.get("a.f32")).toBe(0.5);
    expect(header.metadata.get("a.bool")).toBe(true);
    expect(header.metadata.get("a.u64")).toBe(2 ** 40);
    expect(header.metadata.get("a.tokens")).toEqual(tokens);
    expect(Array.from(header.metadata.get("a.scores") as Float32Array)).toEqual([1.5, -2]);
    expect(header.tensors).toEqual([{ name: "w", shape: [64], type: GgmlType.Q8_0, byteLength: 68, fileOffset: header.dataOffset }]);
  });

  it("reads MXFP4 (type 39) tensors: 17 bytes per 32 values, a 3-D expert stack included", () => {
    const path = join(work, "mxfp4.gguf");
    const data = new Uint8Array(17 * (64 / 32) * 3 * 4).map((_, i) => i);
    writeGguf(path, [["general.architecture", gguf.string("llama")]], [{ name: "blk.0.ffn_up_exps.weight", shape: [64, 3, 4], type: GgmlType.MXFP4, data }]);
    const header = readGgufHeader(path);
    expect(header.tensors).toEqual([{ name: "blk.0.ffn_up_exps.weight", shape: [64, 3, 4], type: 39, byteLength: 408, fileOffset: header.dataOffset }]);
  });
});
