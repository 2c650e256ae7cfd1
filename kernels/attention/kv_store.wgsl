// Appends K and V rows to the paged cache: row t (k, v: [rows, kvDim]) goes to the slot of its position through
// its sequence's block table (block_tables[row_tables[t] + position / block_size] * block_size + position %
// block_size). Caches: [slots, kvDim] f32. One invocation per (row, value).
override WORKGROUP_SIZE: u32 = 256;

struct Params {
  rows: u32,
  kv_dim: u32,
  block_size: u32,
}

@group(0) @binding(0) var<storage, read> k: array<f32>;
@group(0) @binding(1) var<storage, read> v: array<f32>;
@group(0) @binding(2) var<storage, read_write> k_cache: array<f32>;
@group(0) @binding(3) var<storage, read_write> v_cache: array<f32>;
// Where each row's block table starts in block_tables.
@group(0) @binding(4) var<storage, read> row_tables: array<u32>;
@group(0) @binding(5) var<storage, read> block_tables: array<i32>;
@group(0) @binding(6) var<storage, read> positions: array<i32>;
@group(0) @binding(7) var<uniform> params: Params;

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(@builtin(global_invocation_id) id: vec3u, @builtin(num_workgroups) groups: vec3u) {
  let index = id.x + id.y * groups.x * WORKGROUP_SIZE;
  if (index >= params.rows * params.kv_dim) {
    return;
  }
  let t = index / params.kv_dim;
  let position = u32(positions[t]);
  let slot = u32(block_tables[row_tables[t] + position / params.block_size]) * params.block_size + position % params.block_size;
  let destination = slot * params.kv_dim + index % params.kv_dim;
  k_cache[destination] = k[index];
  v_cache[destination] = v[index];
}
