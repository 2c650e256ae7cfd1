// gpt-oss's expert activation (ggml's swiglu_oai) in place: gate[i] = x / (1 + e^(-alpha x)) * (y + 1), with
// x = min(gate[i], limit) and y = clamp(up[i], -limit, limit). One invocation per element.
override WORKGROUP_SIZE: u32 = 256;

struct Params {
  count: u32,
  alpha: f32,
  limit: f32,
}

@group(0) @binding(0) var<storage, read_write> gate: array<f32>;
@group(0) @binding(1) var<storage, read> up: array<f32>;
@group(0) @binding(2) var<uniform> params: Params;

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(@builtin(global_invocation_id) id: vec3u, @builtin(num_workgroups) groups: vec3u) {
  let i = id.x + id.y * groups.x * WORKGROUP_SIZE;
  if (i < params.count) {
    let x = min(gate[i], params.limit);
    let y = clamp(up[i], -params.limit, params.limit);
    // e^(-alpha x) overflows to infinity for very negative x: x / inf = -0, the limit.
    gate[i] = x / (1.0 + exp(params.alpha * -x)) * (y + 1.0);
  }
}
