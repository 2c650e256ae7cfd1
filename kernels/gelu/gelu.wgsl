// GELU in place: x[i] = gelu(x[i]) with the tanh approximation, x and the GELU passed through halves rounded to
// nearest even (halves.wgsl's exact conversion) as llama.cpp's table does (as gelu.as.ts); x <= -10 gives 0 and
// x >= 10 gives x. One invocation per element; the grid folds into y past 65535 workgroups (SigLIP's 4096 x 4304).
override WORKGROUP_SIZE: u32 = 256;

struct Params {
  count: u32,
}

@group(0) @binding(0) var<storage, read_write> x: array<f32>;
@group(0) @binding(1) var<uniform> params: Params;

//#include halves

fn through_half(v: f32) -> f32 {
  return half_to_f32(f16_bits(v));
}

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(@builtin(global_invocation_id) id: vec3u, @builtin(num_workgroups) groups: vec3u) {
  let i = id.x + id.y * groups.x * WORKGROUP_SIZE;
  if (i < params.count) {
    let v = x[i];
    var y = v;
    if (v <= -10.0) {
      y = 0.0;
    } else if (v < 10.0) {
      let h = through_half(v);
      y = through_half(0.5 * h * (1.0 + tanh(0.7978845608028654 * h * (1.0 + 0.044715 * h * h))));
    }
    x[i] = y;
  }
}
