// Conformance cases for sum_rows (also the benchmarks' memory-bandwidth probe).
import { type KernelCase, randomF32 } from "../case.js";
import { sumRowsRef } from "./sum_rows.ref.js";

function sumCase(rows: number, n: number): KernelCase {
  return {
    name: `sum_rows rows=${rows} n=${n}`,
    tolerance: 1e-11,
    build() {
      const x = randomF32(rows * n, rows + n);
      return { kernel: "sum_rows", buffers: { x, out: { bytes: rows * 4 } }, args: ["x", "out", n], count: rows, expected: { out: sumRowsRef(x, rows, n) } };
    },
  };
}

export const cases: KernelCase[] = [sumCase(1, 1), sumCase(3, 15), sumCase(17, 1000), sumCase(4, 65536)];
