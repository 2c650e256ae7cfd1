// GeGLU's gating (Gemma's feed-forward): out = gelu_tanh(gate) * up, elementwise, as llama.cpp's CPU backend computes
// it: gate rounded to a half, GELU of that half in f32 (tanh approximation), the result rounded to a half again
// (ggml's 64K-entry table holds exactly that), then multiplied by up in f32; gate <= -10 gives 0 and gate >= 10
// gives gate * up, as ggml_vec_geglu_f32 does.
import { f16_to_f32, f32_to_f16 } from "../assembly/convert.as";

const GELU_COEF_A: f32 = 0.044715;
const SQRT_2_OVER_PI: f32 = 0.7978845608028654;

/** ggml_gelu_f32: 0.5 x (1 + tanh(sqrt(2/pi) x (1 + 0.044715 x^2))), in f32 in ggml's order of operations. */
// @ts-ignore: decorator
@inline function gelu_f32(x: f32): f32 {
  return <f32>0.5 * x * (<f32>1 + Mathf.tanh(SQRT_2_OVER_PI * x * (<f32>1 + GELU_COEF_A * x * x)));
}

/** out[i] = gelu(gate[i]) * up[i] for i in [i0, i1). gate, up, out: [n] f32 (out may alias either). */
export function gelu_mul(gate: usize, up: usize, out: usize, n: i32, i0: i32, i1: i32): void {
  for (let i = i0; i < i1; i++) {
    const o = <usize>i << 2;
    const x = load<f32>(gate + o);
    let y: f32;
    if (x <= -10) y = 0;
    else if (x >= 10) y = x * load<f32>(up + o);
    else y = f16_to_f32(f32_to_f16(gelu_f32(f16_to_f32(f32_to_f16(x))))) * load<f32>(up + o);
    store<f32>(out + o, y);
  }
}
