// The mixture-of-experts output: out[t] = sum over slots s of weights[t * k + s] * expertOut[rows[t * k + s]], the
// slots added in order from slot 0 (as llama.cpp adds them), each product and sum rounded to f32 (moe_sum.ref.ts).
// expertOut: [slots, width] f32, the experts' outputs grouped by expert; rows: per slot (i32), its row there;
// weights: per slot (f32). Threads split the tokens.

/** Output rows of tokens [t0, t1) (see the file comment); width a multiple of 4 or not. */
export function moe_sum(expertOut: usize, rows: usize, weights: usize, out: usize, k: i32, width: i32, t0: i32, t1: i32): void {
  const rowBytes = <usize>width << 2;
  for (let t = t0; t < t1; t++) {
    const slots = <usize>(t * k) << 2;
    const target = out + <usize>t * rowBytes;
    // Slot 0's product starts the sum (not 0 + it: a -0 product stays -0, as the reference keeps it).
    const first = expertOut + <usize>load<i32>(rows + slots) * rowBytes;
    const w0 = load<f32>(weights + slots);
    let c = 0;
    for (; c + 4 <= width; c += 4) {
      const o = <usize>c << 2;
      let sum = f32x4.mul(v128.load(first + o), f32x4.splat(w0));
      for (let s = 1; s < k; s++) {
        const row = expertOut + <usize>load<i32>(rows + slots + (<usize>s << 2)) * rowBytes;
        sum = f32x4.add(sum, f32x4.mul(v128.load(row + o), f32x4.splat(load<f32>(weights + slots + (<usize>s << 2)))));
      }
      v128.store(target + o, sum);
    }
    for (; c < width; c++) {
      const o = <usize>c << 2;
      let sum = load<f32>(first + o) * w0;
      for (let s = 1; s < k; s++) {
        const row = expertOut + <usize>load<i32>(rows + slots + (<usize>s << 2)) * rowBytes;
        sum += load<f32>(row + o) * load<f32>(weights + slots + (<usize>s << 2));
      }
      store<f32>(target + o, sum);
    }
  }
}
