// RMS normalisation: y = x * (1 / sqrt(mean(x^2) + eps)) * weight, one workgroup per row of `width` values.
// Each invocation sums the squares of a strided slice; a tree in workgroup memory adds the partial sums.
override WORKGROUP_SIZE: u32 = 256;

struct Params {
  width: u32,
  eps: f32,
}

@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read> weight: array<f32>;
@group(0) @binding(2) var<storage, read_write> y: array<f32>;
@group(0) @binding(3) var<uniform> params: Params;

var<workgroup> partial: array<f32, WORKGROUP_SIZE>;

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(@builtin(workgroup_id) group: vec3u, @builtin(num_workgroups) groups: vec3u, @builtin(local_invocation_index) lane: u32) {
  let row = group.x + group.y * groups.x;
  let base = row * params.width;
  var sum = 0.0;
  for (var i = lane; i < params.width; i += WORKGROUP_SIZE) {
    let v = x[base + i];
    sum += v * v;
  }
  partial[lane] = sum;
  workgroupBarrier();
  for (var stride = WORKGROUP_SIZE / 2u; stride > 0u; stride /= 2u) {
    if (lane < stride) {
      partial[lane] += partial[lane + stride];
    }
    workgroupBarrier();
  }
  let scale = 1.0 / sqrt(partial[0] / f32(params.width) + params.eps);
  for (var i = lane; i < params.width; i += WORKGROUP_SIZE) {
    y[base + i] = (x[base + i] * scale) * weight[i];
  }
}
