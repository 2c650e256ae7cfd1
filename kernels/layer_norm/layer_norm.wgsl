// Layer normalisation: y = ((x - mean) / sqrt(variance + eps)) * weight + bias, one workgroup per row of `width`
// values; the mean, then the centred variance, each a strided partial sum per invocation and a tree in workgroup memory.
override WORKGROUP_SIZE: u32 = 256;

struct Params {
  width: u32,
  eps: f32,
}

@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read> weight: array<f32>;
@group(0) @binding(2) var<storage, read> bias: array<f32>;
@group(0) @binding(3) var<storage, read_write> y: array<f32>;
@group(0) @binding(4) var<uniform> params: Params;

var<workgroup> partial: array<f32, WORKGROUP_SIZE>;

/** The workgroup's sum of `value`; every invocation gets it. */
fn workgroup_sum(lane: u32, value: f32) -> f32 {
  partial[lane] = value;
  workgroupBarrier();
  for (var stride = WORKGROUP_SIZE / 2u; stride > 0u; stride /= 2u) {
    if (lane < stride) {
      partial[lane] += partial[lane + stride];
    }
    workgroupBarrier();
  }
  let result = partial[0];
  workgroupBarrier(); // before the next sum overwrites partial
  return result;
}

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(@builtin(workgroup_id) group: vec3u, @builtin(num_workgroups) groups: vec3u, @builtin(local_invocation_index) lane: u32) {
  let row = group.x + group.y * groups.x;
  let base = row * params.width;
  var sum = 0.0;
  for (var i = lane; i < params.width; i += WORKGROUP_SIZE) {
    sum += x[base + i];
  }
  let mean = workgroup_sum(lane, sum) / f32(params.width);
  var squares = 0.0;
  for (var i = lane; i < params.width; i += WORKGROUP_SIZE) {
    let d = x[base + i] - mean;
    squares += d * d;
  }
  let scale = 1.0 / sqrt(workgroup_sum(lane, squares) / f32(params.width) + params.eps);
  for (var i = lane; i < params.width; i += WORKGROUP_SIZE) {
    y[base + i] = ((x[base + i] - mean) * scale) * weight[i] + bias[i];
  }
}
