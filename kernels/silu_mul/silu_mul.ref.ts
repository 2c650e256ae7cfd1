// Reference SwiGLU gate: out = gate / (1 + e^-gate) * up, computed in f64 and rounded once.

/** out[i] = silu(gate[i]) * up[i]. */
export function siluMulRef(gate: Float32Array, up: Float32Array): Float32Array {
  return Float32Array.from(gate, (g, i) => (g / (1 + Math.exp(-g))) * up[i]);
}
