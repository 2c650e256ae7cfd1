// Embedding lookup from a Q8_0 matrix in the GPU layout (quants four to a word, block scales as f32):
// out[t][i] = scale * quant, as ggml dequantizes. One invocation per output value.
override WORKGROUP_SIZE: u32 = 256;

struct Params {
  rows: u32,
  width: u32,
  // The ids this table part holds (a table split over the adapter's maxStorageBufferBindingSize is one dispatch per
  // part): rows whose id is outside [first_id, first_id + id_count) are left to another part's dispatch.
  first_id: u32,
  id_count: u32,
}

@group(0) @binding(0) var<storage, read> quants: array<u32>;
@group(0) @binding(1) var<storage, read> scales: array<f32>;
@group(0) @binding(2) var<storage, read> ids: array<i32>;
@group(0) @binding(3) var<storage, read_write> out: array<f32>;
@group(0) @binding(4) var<uniform> params: Params;

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(@builtin(global_invocation_id) id: vec3u, @builtin(num_workgroups) groups: vec3u) {
  let index = id.x + id.y * groups.x * WORKGROUP_SIZE;
  if (index >= params.rows * params.width) {
    return;
  }
  let t = index / params.width;
  let row = u32(ids[t]) - params.first_id;
  if (row >= params.id_count) {
    return;
  }
  let e = row * params.width + index % params.width;
  let q = extractBits(bitcast<i32>(quants[e / 4u]), (e % 4u) * 8u, 8u);
  out[index] = scales[e / 32u] * f32(q);
}
