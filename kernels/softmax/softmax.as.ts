// Row-wise softmax in place: x[r] = exp(x[r] - max) / sum, the sum accumulated in f64 as ggml does.
import { softmax_row } from "../assembly/math.as";

/** Softmax of rows [r0, r1) of x: [rows, n] f32, in place. */
export function softmax(x: usize, n: i32, r0: i32, r1: i32): void {
  for (let r = r0; r < r1; r++) {
    const row = x + <usize>r * (<usize>n << 2);
    softmax_row(row, n);
  }
}
