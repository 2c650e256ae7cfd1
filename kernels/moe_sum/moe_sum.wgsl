// The mixture-of-experts output: out[t] = sum over slots s of weights[t * k + s] * expert_out[rows[t * k + s]], the
// slots added in order from slot 0 (as the WebAssembly backend sums them), each product and sum rounded to f32.
// expert_out: [slots, width], the experts' outputs grouped by expert; rows: per slot, its row there. One invocation
// per output value.
override WORKGROUP_SIZE: u32 = 256;

struct Params {
  tokens: u32,
  k: u32,
  width: u32,
}

@group(0) @binding(0) var<storage, read> expert_out: array<f32>;
@group(0) @binding(1) var<storage, read> rows: array<i32>;
@group(0) @binding(2) var<storage, read> weights: array<f32>;
@group(0) @binding(3) var<storage, read_write> out: array<f32>;
@group(0) @binding(4) var<uniform> params: Params;

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(@builtin(global_invocation_id) id: vec3u, @builtin(num_workgroups) groups: vec3u) {
  let i = id.x + id.y * groups.x * WORKGROUP_SIZE;
  if (i >= params.tokens * params.width) {
    return;
  }
  let t = i / params.width;
  let c = i % params.width;
  var sum = 0.0;
  for (var s = 0u; s < params.k; s++) {
    let slot = t * params.k + s;
    let product = expert_out[u32(rows[slot]) * params.width + c] * weights[slot];
    sum = select(sum + product, product, s == 0u);
  }
  out[i] = sum;
}
