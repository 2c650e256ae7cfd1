// NeoX rotary embedding in place on x: [rows, heads, headDim]: the pair (i, i + rotaryDim/2) of every head turns by
// the angle of (position, i). The angles' cosines and sines come from a table computed on the host for every
// position (ropeRotations in kernels/webgpu/layouts.ts), exactly as the reference computes them, so no GPU sin/cos
// approximation enters. One invocation per (row, head, pair).
override WORKGROUP_SIZE: u32 = 256;

struct Params {
  rows: u32,
  heads: u32,
  head_dim: u32,
  rotary_dim: u32,
}

@group(0) @binding(0) var<storage, read_write> x: array<f32>;
@group(0) @binding(1) var<storage, read> positions: array<i32>;
// [position][rotary_dim / 2] of (cos, sin).
@group(0) @binding(2) var<storage, read> rotations: array<vec2f>;
@group(0) @binding(3) var<uniform> params: Params;

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(@builtin(global_invocation_id) id: vec3u, @builtin(num_workgroups) groups: vec3u) {
  let half = params.rotary_dim / 2u;
  let index = id.x + id.y * groups.x * WORKGROUP_SIZE;
  if (index >= params.rows * params.heads * half) {
    return;
  }
  let i = index % half;
  let head = index / half; // row * heads + head
  let row = head / params.heads;
  let rotation = rotations[u32(positions[row]) * half + i];
  let base = head * params.head_dim;
  let x0 = x[base + i];
  let x1 = x[base + i + half];
  x[base + i] = x0 * rotation.x - x1 * rotation.y;
  x[base + i + half] = x0 * rotation.y + x1 * rotation.x;
}
