// Average pooling of a grid of patch tokens: x [height * width, channels] to out [(height / k) * (width / k),
// channels], each output the f32 sum of its k x k window (rows outer, columns inner) divided by k * k, as ggml's CPU
// pool_2d. One invocation per output value; the grid folds into y past 65535 workgroups.
override WORKGROUP_SIZE: u32 = 256;

struct Params {
  height: u32,
  width: u32,
  channels: u32,
  k: u32,
}

@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read_write> out: array<f32>;
@group(0) @binding(2) var<uniform> params: Params;

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(@builtin(global_invocation_id) id: vec3u, @builtin(num_workgroups) groups: vec3u) {
  let i = id.x + id.y * groups.x * WORKGROUP_SIZE;
  let k = params.k;
  let out_w = params.width / k;
  let tokens = (params.height / k) * out_w;
  if (i >= tokens * params.channels) {
    return;
  }
  let token = i / params.channels;
  let c = i % params.channels;
  let oy = token / out_w;
  let ox = token % out_w;
  var sum = 0.0;
  for (var ky = 0u; ky < k; ky++) {
    let row = (oy * k + ky) * params.width + ox * k;
    for (var kx = 0u; kx < k; kx++) {
      sum += x[(row + kx) * params.channels + c];
    }
  }
  out[i] = sum / f32(k * k);
}
