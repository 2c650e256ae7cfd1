// SwiGLU gate in place: gate[i] = silu(gate[i]) * up[i], silu(g) = g / (1 + e^-g). One invocation per element.
override WORKGROUP_SIZE: u32 = 256;

struct Params {
  count: u32,
}

@group(0) @binding(0) var<storage, read_write> gate: array<f32>;
@group(0) @binding(1) var<storage, read> up: array<f32>;
@group(0) @binding(2) var<uniform> params: Params;

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(@builtin(global_invocation_id) id: vec3u, @builtin(num_workgroups) groups: vec3u) {
  let i = id.x + id.y * groups.x * WORKGROUP_SIZE;
  if (i < params.count) {
    let g = gate[i];
    // e^-g overflows to infinity for g < -88: g / inf = -0, the limit.
    gate[i] = g / (1.0 + exp(-g)) * up[i];
  }
}
