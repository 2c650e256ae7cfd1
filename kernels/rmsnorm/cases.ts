// Conformance cases for rmsnorm: head-sized rows (QK-norm), odd widths, model widths.
import { type CaseSetup, type KernelCase, randomF32 } from "../case.js";
import { rmsnormRef } from "./rmsnorm.ref.js";

function rmsnormCase(rows: number, d: number, eps: number, inPlace = false): KernelCase {
  return {
    name: `rmsnorm rows=${rows} d=${d} eps=${eps}${inPlace ? " in place" : ""}`,
    tolerance: 1e-13,
    build(): CaseSetup {
      const x = randomF32(rows * d, rows + d, 4);
      const weight = randomF32(d, 3 * d, 2);
      const expected = rmsnormRef(x, weight, rows, d, eps);
      return {
        kernel: "rmsnorm",
        buffers: inPlace ? { x, weight } : { x, weight, y: { bytes: rows * d * 4 } },
        args: ["x", "weight", inPlace ? "x" : "y", d, eps],
        count: rows,
        expected: inPlace ? { x: expected } : { y: expected },
      };
    },
  };
}

export const cases: KernelCase[] = [
  rmsnormCase(1, 8, 1e-5), rmsnormCase(3, 13, 1e-6), rmsnormCase(5, 172, 1e-5), rmsnormCase(16, 128, 1e-6, true),
  rmsnormCase(1, 576, 1e-5), rmsnormCase(7, 1024, 1e-6), rmsnormCase(2, 2048, 1e-5, true), rmsnormCase(64, 1024, 1e-6),
];
