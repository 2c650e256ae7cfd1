// Embedding lookup from a Q8_0 or Q4_0 matrix (WEIGHT_TYPE 0 or 1) in the GPU layout of matmul_quant.wgsl:
// out[t][i] = scale * quant (Q4_0: scale * (nibble - 8)), as ggml dequantizes. One invocation per output value.
override WORKGROUP_SIZE: u32 = 256;
override WEIGHT_TYPE: u32 = 0;

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
  if (WEIGHT_TYPE == 0u) {
    out[index] = scales[e / 32u] * f32(extractBits(bitcast<i32>(quants[e / 4u]), (e % 4u) * 8u, 8u));
    return;
  }
  // Element i of a Q4_0 block is the low nibble of byte i % 16 for i < 16, the high nibble for i >= 16.
  let i = e % 32u;
  let byte = (e / 32u) * 16u + i % 16u;
  let nibble = extractBits(quants[byte / 4u], (byte % 4u) * 8u + select(0u, 4u, i >= 16u), 4u);
  out[index] = scales[e / 32u] * (f32(nibble) - 8.0);
}
