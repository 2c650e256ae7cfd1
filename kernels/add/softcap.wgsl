// Logit soft-capping in place (Gemma 4): x[i] = tanh(x[i] * inverse) * cap, with inverse = f32(1 / cap), as ggml's
// scale, tanh, scale compute it (the GPU's tanh is not correctly rounded: the last bits may differ from the CPU's).
// One invocation per element; the grid folds into y past 65535 workgroups.
override WORKGROUP_SIZE: u32 = 256;

struct Params {
  count: u32,
  inverse: f32,
  cap: f32,
}

@group(0) @binding(0) var<storage, read_write> x: array<f32>;
@group(0) @binding(1) var<uniform> params: Params;

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(@builtin(global_invocation_id) id: vec3u, @builtin(num_workgroups) groups: vec3u) {
  let i = id.x + id.y * groups.x * WORKGROUP_SIZE;
  if (i < params.count) {
    // tanh is 1 in f32 past 9.01: the clamp changes nothing but keeps an exp-based tanh from overflowing to NaN.
    x[i] = tanh(clamp(x[i] * params.inverse, -15.0, 15.0)) * params.cap;
  }
}
