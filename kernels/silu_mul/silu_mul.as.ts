// SwiGLU's gating: out = silu(gate) * up = gate / (1 + e^-gate) * up, elementwise.
import { exp_f32x4 } from "../assembly/math.as";

/** out[i] = gate[i] / (1 + exp(-gate[i])) * up[i] for i in [i0, i1). gate, up, out: [n] f32 (out may alias either). */
export function silu_mul(gate: usize, up: usize, out: usize, n: i32, i0: i32, i1: i32): void {
  let i = i0;
  const one = f32x4.splat(1);
  for (; i + 4 <= i1; i += 4) {
    const o = <usize>i << 2;
    const g = v128.load(gate + o);
    const silu = f32x4.div(g, f32x4.add(one, exp_f32x4(f32x4.neg(g))));
    v128.store(out + o, f32x4.mul(silu, v128.load(up + o)));
  }
  for (; i < i1; i++) {
    const o = <usize>i << 2;
    const g = f32x4.splat(load<f32>(gate + o));
    const silu = f32x4.div(g, f32x4.add(one, exp_f32x4(f32x4.neg(g))));
    store<f32>(out + o, f32x4.extract_lane(silu, 0) * load<f32>(up + o));
  }
}
