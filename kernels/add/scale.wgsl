// Scale in place: x[i] *= s (Gemma's embedding scale and query scale). One invocation per element; the grid folds
// into y past 65535 workgroups.
override WORKGROUP_SIZE: u32 = 256;

struct Params {
  count: u32,
  scale: f32,
}

@group(0) @binding(0) var<storage, read_write> x: array<f32>;
@group(0) @binding(1) var<uniform> params: Params;

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(@builtin(global_invocation_id) id: vec3u, @builtin(num_workgroups) groups: vec3u) {
  let i = id.x + id.y * groups.x * WORKGROUP_SIZE;
  if (i < params.count) {
    x[i] = x[i] * params.scale;
  }
}
