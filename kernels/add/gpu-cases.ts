// WebGPU cases for the add: residual adds below, at and past a workgroup and one that folds the grid into y, and
// bias adds broadcast over rows; and for the scale (Gemma's embedding and query scales) and the per-row scale
// (Mistral 3's attention temperature).
import { grid } from "../webgpu/shaders.js";
import { randomF32 } from "../case.js";
import type { GpuKernelCase } from "../gpu-case.js";
import { addRef, scaleRef, scaleRowsRef } from "./add.ref.js";

function addCase(count: number, period = count): GpuKernelCase {
  return {
    name: `add n=${count}${period !== count ? ` bias width=${period}` : ""}`,
    tolerance: 0, // one correctly rounded f32 addition per element
    build() {
      const x = randomF32(count, count, 3);
      const y = randomF32(period, count + 1, 3);
      const broadcast = new Float32Array(count); // y repeated over the rows (a plain loop: 16M elements)
      for (let i = 0; i < count; i++) broadcast[i] = y[i % period];
      return {
        shader: { op: "add" },
        bindings: [{ name: "x", contents: x }, { name: "y", contents: y }],
        params: [["u32", count], ["u32", period], ["u32", 0], ["u32", 0]],
        workgroups: grid(count, 256),
        expected: { x: addRef(x, broadcast) },
      };
    },
  };
}

function scaleCase(count: number, scale: number): GpuKernelCase {
  return {
    name: `scale n=${count} by ${scale}`,
    tolerance: 0, // one correctly rounded f32 multiplication per element
    build() {
      const x = randomF32(count, count + 2, 3);
      return {
        shader: { op: "add", file: "scale" },
        bindings: [{ name: "x", contents: x }],
        params: [["u32", count], ["f32", scale]],
        workgroups: grid(count, 256),
        expected: { x: scaleRef(x, Math.fround(scale)) },
      };
    },
  };
}

function scaleRowsCase(rows: number, width: number): GpuKernelCase {
  return {
    name: `scale_rows rows=${rows} width=${width}`,
    tolerance: 0, // one correctly rounded f32 multiplication per element
    build() {
      const x = randomF32(rows * width, rows + width, 3);
      const factors = Float32Array.from({ length: rows }, (_, r) => 1 + 0.1 * Math.log(r + 1));
      return {
        shader: { op: "add", file: "scale_rows" },
        bindings: [{ name: "x", contents: x }, { name: "factors", contents: factors }],
        params: [["u32", rows], ["u32", width]],
        workgroups: grid(rows * width, 256),
        expected: { x: scaleRowsRef(x, factors, width) },
      };
    },
  };
}

/** A bias of expert `expert` (of a [experts, width] tensor) added to rows [firstRow, firstRow + rows) of x [total, width]. */
function expertBiasCase(totalRows: number, firstRow: number, rows: number, width: number, expert: number): GpuKernelCase {
  return {
    name: `add expert ${expert} bias width=${width} to rows ${firstRow}-${firstRow + rows} of ${totalRows}`,
    tolerance: 0,
    build() {
      const x = randomF32(totalRows * width, totalRows + width, 3);
      const biases = randomF32((expert + 2) * width, width + 5, 3);
      const expected = x.slice();
      for (let i = 0; i < rows * width; i++) expected[firstRow * width + i] = Math.fround(x[firstRow * width + i] + biases[expert * width + (i % width)]);
      return {
        shader: { op: "add" },
        bindings: [{ name: "x", contents: x }, { name: "y", contents: biases }],
        params: [["u32", rows * width], ["u32", width], ["u32", firstRow * width], ["u32", expert * width]],
        workgroups: grid(rows * width, 256),
        expected: { x: expected },
      };
    },
  };
}

export const cases: GpuKernelCase[] = [
  ...[1, 255, 256, 1000, 576 * 7, 65535 * 256 + 3].map((count) => addCase(count)),
  addCase(7 * 13, 13), addCase(5 * 896, 896), expertBiasCase(9, 3, 4, 24, 2), expertBiasCase(40, 0, 40, 64, 0),
  scaleCase(1000, Math.sqrt(1152)), scaleCase(65535 * 256 + 3, 0.0625),
  scaleRowsCase(1, 64), scaleRowsCase(7, 96), scaleRowsCase(300, 1024),
];
