// Several matrix multiplications in one dispatch: a mixture-of-experts step's experts (each its own weights, input
// rows and output), run by the kernels that would run them one by one. The dispatch's range counts the weight rows of
// every segment one after another, so the threads split all of the step's rows at once, where one dispatch per
// expert and projection made every thread wait for the slowest at each of them. A row's result is the segment's
// kernel's, bit for bit (each kernel computes a weight row the same way whatever range it is given), plus the
// segment's bias where it has one.
import { add } from "../add/add.as";
import { matmul_bf16, matmul_f16, matmul_f32 } from "./matmul.as";
import { matmul_q4_k, matmul_q5_k, matmul_q6_k, matmul_q6_k_bytes } from "./matmul_kquant.as";
import { matmul_q4_1, matmul_q5_0, matmul_q5_1 } from "./matmul_legacy.as";
import { matmul_mxfp4 } from "./matmul_mxfp4.as";
import { matmul_q4_0, matmul_q8_0 } from "./matmul_quant.as";

/** Bytes of one segment descriptor: nine i32 (see matmul_segments). */
const DESCRIPTOR_BYTES: usize = 36;

/** Runs the kernel numbered `kind` (the order of SEGMENT_KERNELS in segments.ts) on weight rows [j0, j1). */
function run(kind: i32, x: usize, w: usize, y: usize, rows: i32, k: i32, n: i32, j0: i32, j1: i32): void {
  switch (kind) {
    case 0: matmul_f32(x, w, y, rows, k, n, j0, j1); break;
    case 1: matmul_f16(x, w, y, rows, k, n, j0, j1); break;
    case 2: matmul_bf16(x, w, y, rows, k, n, j0, j1); break;
    case 3: matmul_q8_0(x, w, y, rows, k, n, j0, j1); break;
    case 4: matmul_q4_0(x, w, y, rows, k, n, j0, j1); break;
    case 5: matmul_q4_1(x, w, y, rows, k, n, j0, j1); break;
    case 6: matmul_q5_0(x, w, y, rows, k, n, j0, j1); break;
    case 7: matmul_q5_1(x, w, y, rows, k, n, j0, j1); break;
    case 8: matmul_q4_k(x, w, y, rows, k, n, j0, j1); break;
    case 9: matmul_q5_k(x, w, y, rows, k, n, j0, j1); break;
    case 10: matmul_q6_k(x, w, y, rows, k, n, j0, j1); break;
    case 11: matmul_q6_k_bytes(x, w, y, rows, k, n, j0, j1); break;
    case 12: matmul_mxfp4(x, w, y, rows, k, n, j0, j1); break;
    default: unreachable();
  }
}

/**
 * Weight rows [j0, j1) of the concatenation of `count` segments, each a descriptor of nine i32 at `segments`:
 * kind (the kernel, see run), x, w, y, rows, k, n as that kernel takes them, start, the segment's first row in the
 * concatenation (the sum of the n before it), and bias, an f32 [n] added to every output row (0: none).
 */
export function matmul_segments(segments: usize, count: i32, j0: i32, j1: i32): void {
  for (let s = 0; s < count; s++) {
    const d = segments + <usize>s * DESCRIPTOR_BYTES;
    const n = load<i32>(d, 24);
    const start = load<i32>(d, 28);
    const lo = max(j0, start);
    const hi = min(j1, start + n);
    if (lo >= hi) continue;
    const y = <usize>load<u32>(d, 12);
    const rows = load<i32>(d, 16);
    run(load<i32>(d), <usize>load<u32>(d, 4), <usize>load<u32>(d, 8), y, rows, load<i32>(d, 20), n, lo - start, hi - start);
    const bias = <usize>load<u32>(d, 32);
    if (bias == 0) continue;
    for (let t = 0; t < rows; t++) {
      const row = y + ((<usize>t * <usize>n) << 2);
      add(row, bias, row, lo - start, hi - start);
    }
  }
}
