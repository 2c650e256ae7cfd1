// Embedding lookup: out[t] = row ids[t] of a [vocab, width] float matrix (F32, F16 or BF16 by WEIGHT_TYPE, as raw
// 32-bit words), as f32. One invocation per output value.
override WORKGROUP_SIZE: u32 = 256;
// 0: F32, 1: F16 (two halves per word), 2: BF16 (two per word).
override WEIGHT_TYPE: u32 = 0;

struct Params {
  rows: u32,
  width: u32,
  // The ids this table part holds (a table split over the adapter's maxStorageBufferBindingSize is one dispatch per
  // part): rows whose id is outside [first_id, first_id + id_count) are left to another part's dispatch.
  first_id: u32,
  id_count: u32,
}

@group(0) @binding(0) var<storage, read> table: array<u32>;
@group(0) @binding(1) var<storage, read> ids: array<i32>;
@group(0) @binding(2) var<storage, read_write> out: array<f32>;
@group(0) @binding(3) var<uniform> params: Params;

//#include halves

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
    out[index] = bitcast<f32>(table[e]);
    return;
  }
  let word = table[e / 2u];
  let half = select(word & 0xffffu, word >> 16u, (e & 1u) == 1u);
  out[index] = select(bitcast<f32>(half << 16u), half_to_f32(half), WEIGHT_TYPE == 1u);
}
