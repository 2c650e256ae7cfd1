// Row sums: out[r] = sum_i x[r][i]. Also the streaming probe the benchmarks use to measure memory read bandwidth.
import { horizontal_sum } from "../assembly/convert.as";

/** out[r] = sum of x[r] for rows [r0, r1). x: [rows, n] f32, out: [rows] f32. */
export function sum_rows(x: usize, out: usize, n: i32, r0: i32, r1: i32): void {
  for (let r = r0; r < r1; r++) {
    const row = x + <usize>r * (<usize>n << 2);
    let a0 = f32x4.splat(0), a1 = f32x4.splat(0), a2 = f32x4.splat(0), a3 = f32x4.splat(0);
    let i = 0;
    for (; i + 16 <= n; i += 16) {
      const p = row + (<usize>i << 2);
      a0 = f32x4.add(a0, v128.load(p));
      a1 = f32x4.add(a1, v128.load(p, 16));
      a2 = f32x4.add(a2, v128.load(p, 32));
      a3 = f32x4.add(a3, v128.load(p, 48));
    }
    let s = horizontal_sum(f32x4.add(f32x4.add(a0, a1), f32x4.add(a2, a3)));
    for (; i < n; i++) s += load<f32>(row + (<usize>i << 2));
    store<f32>(out + (<usize>r << 2), s);
  }
}
