// Add in place: x[x_offset + i] += y[y_offset + i % period] for i < count: the residual add (period = count) or a
// bias added to every row (period = the row width); the offsets pick rows of x and one expert's bias of a
// [experts, width] tensor. One invocation per element; the grid folds into y past 65535 workgroups.
override WORKGROUP_SIZE: u32 = 256;

struct Params {
  count: u32,
  period: u32,
  x_offset: u32,
  y_offset: u32,
}

@group(0) @binding(0) var<storage, read_write> x: array<f32>;
@group(0) @binding(1) var<storage, read> y: array<f32>;
@group(0) @binding(2) var<uniform> params: Params;

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(@builtin(global_invocation_id) id: vec3u, @builtin(num_workgroups) groups: vec3u) {
  let i = id.x + id.y * groups.x * WORKGROUP_SIZE;
  if (i < params.count) {
    x[params.x_offset + i] = x[params.x_offset + i] + y[params.y_offset + i % params.period];
  }
}
