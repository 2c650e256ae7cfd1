// gpt-oss's expert activation (ggml's swiglu_oai): the gate clamped from above and the up projection on both sides at
// `limit`, out = x * sigmoid(alpha * x) * (y + 1), elementwise.
import { exp_f32x4 } from "../assembly/math.as";

/**
 * out[i] = x / (1 + exp(alpha * -x)) * (y + 1) with x = min(gate[i], limit), y = clamp(up[i], -limit, limit), for i
 * in [i0, i1), each step in f32 as ggml computes it. gate, up, out: [n] f32 (out may alias either).
 */
export function swiglu_oai(gate: usize, up: usize, out: usize, n: i32, alpha: f32, limit: f32, i0: i32, i1: i32): void {
  const one = f32x4.splat(1);
  const a = f32x4.splat(alpha);
  const high = f32x4.splat(limit);
  const low = f32x4.splat(-limit);
  let i = i0;
  for (; i + 4 <= i1; i += 4) {
    const o = <usize>i << 2;
    v128.store(out + o, activate(v128.load(gate + o), v128.load(up + o), a, low, high, one));
  }
  for (; i < i1; i++) {
    const o = <usize>i << 2;
    store<f32>(out + o, f32x4.extract_lane(activate(f32x4.splat(load<f32>(gate + o)), f32x4.splat(load<f32>(up + o)), a, low, high, one), 0));
  }
}

// @ts-ignore: decorator
@inline function activate(g: v128, u: v128, alpha: v128, low: v128, high: v128, one: v128): v128 {
  const x = f32x4.min(g, high);
  const y = f32x4.min(f32x4.max(u, low), high);
  const glu = f32x4.div(x, f32x4.add(one, exp_f32x4(f32x4.mul(alpha, f32x4.neg(x)))));
  return f32x4.mul(glu, f32x4.add(y, one));
}
