// Reference gpt-oss expert activation (ggml's swiglu_oai), computed in f64 from the clamped f32 inputs.

/** out[i] = x / (1 + e^(-alpha x)) * (y + 1), x = min(gate[i], limit), y = clamp(up[i], -limit, limit). */
export function swigluOaiRef(gate: Float32Array, up: Float32Array, alpha: number, limit: number): Float32Array {
  return Float32Array.from(gate, (g, i) => {
    const x = Math.min(g, limit);
    const y = Math.min(Math.max(up[i], -limit), limit);
    return (x / (1 + Math.exp(Math.fround(alpha) * -x))) * (y + 1);
  });
}
