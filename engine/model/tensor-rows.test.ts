// Rows of a tensor read from its file by position: the bytes of exactly the rows asked for (quantized rows whole
// blocks), out-of-range rows and reads after close refused, and a corrupt block scale found at load naming the
// tensor and block.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { quantize } from "../../kernels/formats/quantize.js";
import { GgmlType } from "../../kernels/formats/types.js";
import { ModelFileError } from "./errors.js";
import type { TensorLocation } from "./source.js";
import { TensorRowReader } from "./tensor-rows.js";

const work = mkdtempSync(join(tmpdir(), "loom-tensor-rows-"));
afterAll(() => rmSync(work, { recursive: true, force: true }));

/** A file holding `prefix` bytes, then `data`: the tensor sits at a nonzero offset, as in a model file. */
function tensorFile(name: string, type: GgmlType, shape: number[], data: Uint8Array, prefix = 96): TensorLocation {
  const path = join(work, `${name}.bin`);
  const bytes = new Uint8Array(prefix + data.length + 16);
  bytes.fill(0xee);
  bytes.set(data, prefix);
  writeFileSync(path, bytes);
  return { name, type, shape, path, fileOffset: prefix, byteLength: data.length };
}

const values = Float32Array.from({ length: 64 * 10 }, (_, i) => Math.sin(i * 0.37) * (1 + (i % 7)));

describe("TensorRowReader", () => {
  it("reads exactly the bytes of the rows asked for, in any order, as whole Q8_0 blocks", () => {
    const data = quantize(GgmlType.Q8_0, values);
    const reader = new TensorRowReader(tensorFile("q8", GgmlType.Q8_0, [64, 10], data));
    expect(reader.rowBytes).toBe(2 * 34);
    expect(reader.rows).toBe(10);
    for (const row of [9, 0, 4, 4]) {
      const target = new Uint8Array(reader.rowBytes);
      reader.readRow(row, target);
      expect(Buffer.from(target).equals(Buffer.from(data.subarray(row * 68, (row + 1) * 68)))).toBe(true);
    }
    reader.close();
  });

  it("reads F16 rows of the tensor's width", () => {
    const data = quantize(GgmlType.F16, values);
    const reader = new TensorRowReader(tensorFile("f16", GgmlType.F16, [64, 10], data));
    const target = new Uint8Array(128);
    reader.readRow(7, target);
    expect(Buffer.from(target).equals(Buffer.from(data.subarray(7 * 128, 8 * 128)))).toBe(true);
    reader.close();
  });

  it("refuses rows outside the tensor, a target of another size, and reads after close", () => {
    const reader = new TensorRowReader(tensorFile("range", GgmlType.F32, [64, 10], quantize(GgmlType.F32, values)));
    expect(() => reader.readRow(10, new Uint8Array(256))).toThrow(/row 10 is outside tensor 'range' \(10 rows\)/);
    expect(() => reader.readRow(-1, new Uint8Array(256))).toThrow(RangeError);
    expect(() => reader.readRow(0, new Uint8Array(255))).toThrow(/a row of 'range' is 256 bytes/);
    reader.close();
    expect(() => reader.readRow(0, new Uint8Array(256))).toThrow(/closed/);
  });

  it("refuses a tensor whose bytes are not its rows, naming it", () => {
    const data = quantize(GgmlType.Q8_0, values);
    expect(() => new TensorRowReader(tensorFile("short", GgmlType.Q8_0, [64, 11], data))).toThrow(/tensor 'short' has 680 bytes, expected 11 rows of 68/);
    expect(() => new TensorRowReader(tensorFile("flat", GgmlType.Q8_0, [640], data))).toThrow(ModelFileError);
  });

  it("finds a non-finite block scale when checked, naming the tensor and block; float types need no read", () => {
    const data = quantize(GgmlType.Q8_0, values);
    const reader = new TensorRowReader(tensorFile("good", GgmlType.Q8_0, [64, 10], data));
    expect(() => reader.checkScales()).not.toThrow();
    const bad = Uint8Array.from(data);
    bad[13 * 34] = 0x00;
    bad[13 * 34 + 1] = 0x7e; // NaN in block 13
    expect(() => new TensorRowReader(tensorFile("bad", GgmlType.Q8_0, [64, 10], bad)).checkScales()).toThrow(
      /tensor 'bad' \(Q8_0\) has a non-finite scale \(f16 bits 0x7e00\) in block 13 of 20: the file is corrupt/,
    );
    // A float tensor is not read: a location past the end of its file does not fail.
    const f16 = tensorFile("f16-unread", GgmlType.F16, [64, 10], quantize(GgmlType.F16, values));
    expect(() => new TensorRowReader({ ...f16, fileOffset: 1 << 30 }).checkScales()).not.toThrow();
  });
});
