// GeGLU gate in place: gate[i] = gelu(gate[i]) * up[i], GELU with the tanh approximation, the gate and the GELU
// passed through halves rounded to nearest even as llama.cpp's table does (as gelu_mul.as.ts; pack2x16float's
// rounding is the adapter's choice, lavapipe's truncates); gate <= -10 gives 0 and gate >= 10 gives gate * up. `up` is
// read from up_offset (Gemma 4's per-layer inputs: one layer's rows of a [layers, rows, width] buffer). One
// invocation per element.
override WORKGROUP_SIZE: u32 = 256;

struct Params {
  count: u32,
  up_offset: u32,
}

@group(0) @binding(0) var<storage, read_write> gate: array<f32>;
@group(0) @binding(1) var<storage, read> up: array<f32>;
@group(0) @binding(2) var<uniform> params: Params;

//#include halves

fn through_half(v: f32) -> f32 {
  return half_to_f32(f16_bits(v));
}

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(@builtin(global_invocation_id) id: vec3u, @builtin(num_workgroups) groups: vec3u) {
  let i = id.x + id.y * groups.x * WORKGROUP_SIZE;
  if (i < params.count) {
    let x = gate[i];
    let u = up[params.up_offset + i];
    var y = x * u;
    if (x <= -10.0) {
      y = 0.0;
    } else if (x < 10.0) {
      let h = through_half(x);
      let gelu = 0.5 * h * (1.0 + tanh(0.7978845608028654 * h * (1.0 + 0.044715 * h * h)));
      y = through_half(gelu) * u;
    }
    gate[i] = y;
  }
}
