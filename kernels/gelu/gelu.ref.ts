// Reference GELU as llama.cpp's CPU backend computes ggml_gelu (ggml_vec_gelu_f32's table path, see gelu.as.ts).
import { geluThroughHalves } from "../gelu_mul/gelu_mul.ref.js";

/** gelu(x) elementwise: 0 at x <= -10, x at x >= 10, the half-table value between. */
export function geluRef(x: Float32Array): Float32Array {
  return Float32Array.from(x, (v) => (v <= -10 ? 0 : v >= 10 ? v : geluThroughHalves(v)));
}
