// Conformance cases for log_sum_exp_rows: odd widths, vocabulary-sized rows, -Infinity and NaN entries, and rows with
// no finite max (compared byte for byte).
import { type KernelCase, randomF32 } from "../case.js";
import { logSumExpRowsRef } from "./log_sum_exp_rows.ref.js";

function lseCase(rows: number, n: number, range: number, masked = false): KernelCase {
  return {
    name: `log_sum_exp_rows rows=${rows} n=${n} range=±${range}${masked ? " masked, NaN" : ""}`,
    tolerance: 1e-13,
    build() {
      const x = randomF32(rows * n, rows * n + 7, range);
      if (masked) {
        // A third of the entries -Infinity and one NaN per row (what logprobs.ts counts as no probability), never the max.
        for (let i = 0; i < x.length; i += 3) if (i % n !== 0) x[i] = -Infinity;
        for (let r = 0; r < rows; r++) x[r * n + (r % (n - 1)) + 1] = Number.NaN;
      }
      return { kernel: "log_sum_exp_rows", buffers: { x, out: { bytes: rows * 8 } }, args: ["x", "out", n], count: rows, expected: { out: logSumExpRowsRef(x, rows, n) } };
    },
  };
}

/** Rows without a finite max (all -Infinity, all NaN, NaN and -Infinity, one +Infinity): max as found, sum 0. */
const degenerate: KernelCase = {
  name: "log_sum_exp_rows rows with no finite max",
  tolerance: 0,
  build() {
    const n = 9;
    const rows = [Array(n).fill(-Infinity), Array(n).fill(Number.NaN), Array.from({ length: n }, (_, i) => (i % 2 ? Number.NaN : -Infinity)),
      Array.from({ length: n }, (_, i) => (i === 6 ? Infinity : i === 2 ? Number.NaN : i))];
    const x = Float32Array.from(rows.flat());
    return { kernel: "log_sum_exp_rows", buffers: { x, out: { bytes: rows.length * 8 } }, args: ["x", "out", n], count: rows.length, expected: { out: logSumExpRowsRef(x, rows.length, n) } };
  },
};

export const cases: KernelCase[] = [
  lseCase(1, 1, 1), lseCase(3, 7, 5), lseCase(5, 19, 20, true), lseCase(16, 1024, 10), lseCase(7, 49152, 15, true), lseCase(2, 151936, 30), degenerate,
];
