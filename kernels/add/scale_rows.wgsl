// Scale rows in place: x[r, i] *= factors[r] for `rows` rows of `width` (Mistral 3's attention temperature: each
// query row times its position's factor). One invocation per element; the grid folds into y past 65535 workgroups.
override WORKGROUP_SIZE: u32 = 256;

struct Params {
  rows: u32,
  width: u32,
}

@group(0) @binding(0) var<storage, read_write> x: array<f32>;
@group(0) @binding(1) var<storage, read> factors: array<f32>;
@group(0) @binding(2) var<uniform> params: Params;

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(@builtin(global_invocation_id) id: vec3u, @builtin(num_workgroups) groups: vec3u) {
  let i = id.x + id.y * groups.x * WORKGROUP_SIZE;
  if (i < params.rows * params.width) {
    x[i] = x[i] * factors[i / params.width];
  }
}
