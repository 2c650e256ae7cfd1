// Reference GeGLU gate as llama.cpp's CPU backend computes it (see gelu_mul.as.ts): the gate through a half, GELU
// (tanh approximation) in f32, the result through a half, times up in f32.
import { f16ToF32, f32ToF16 } from "../formats/f16.js";

const f = Math.fround;
const GELU_COEF_A = f(0.044715);
const SQRT_2_OVER_PI = f(0.7978845608028654);

/** ggml_gelu_f32 with every step rounded to f32 (tanh in f64, rounded). */
export function geluF32(x: number): number {
  const inner = f(f(SQRT_2_OVER_PI * x) * f(1 + f(f(GELU_COEF_A * x) * x)));
  return f(f(0.5 * x) * f(1 + f(Math.tanh(inner))));
}

/** ggml's GELU table entry for x in (-10, 10): x through a half, geluF32, the result through a half. */
export function geluThroughHalves(x: number): number {
  return f16ToF32(f32ToF16(geluF32(f16ToF32(f32ToF16(x)))));
}

/** out[i] = gelu(gate[i]) * up[i], ggml's table path. */
export function geluMulRef(gate: Float32Array, up: Float32Array): Float32Array {
  return Float32Array.from(gate, (x, i) => {
    if (x <= -10) return 0;
    if (x >= 10) return x * up[i]!;
    return geluThroughHalves(x) * up[i]!;
  });
}
