// Appends K and V rows to the paged cache: row t (k, v: [rows, kvDim]) goes to the slot of its position through
// its sequence's block table (block_tables[row_tables[t] + position / block_size] * block_size + position %
// block_size). Caches: [slots, kvDim] as f32 (KV_TYPE 0, one value per word) or IEEE half (KV_TYPE 1, two values per
// word, rounded to nearest even as the CPU backend's f16 cache). One invocation per (row, word).
override WORKGROUP_SIZE: u32 = 256;
override KV_TYPE: u32 = 0;

struct Params {
  rows: u32,
  kv_dim: u32,
  block_size: u32,
}

@group(0) @binding(0) var<storage, read> k: array<f32>;
@group(0) @binding(1) var<storage, read> v: array<f32>;
@group(0) @binding(2) var<storage, read_write> k_cache: array<u32>;
@group(0) @binding(3) var<storage, read_write> v_cache: array<u32>;
// Where each row's block table starts in block_tables.
@group(0) @binding(4) var<storage, read> row_tables: array<u32>;
@group(0) @binding(5) var<storage, read> block_tables: array<i32>;
@group(0) @binding(6) var<storage, read> positions: array<i32>;
@group(0) @binding(7) var<uniform> params: Params;

//#include halves

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(@builtin(global_invocation_id) id: vec3u, @builtin(num_workgroups) groups: vec3u) {
  let per_word = select(1u, 2u, KV_TYPE == 1u);
  let words = params.kv_dim / per_word;
  let index = id.x + id.y * groups.x * WORKGROUP_SIZE;
  if (index >= params.rows * words) {
    return;
  }
  let t = index / words;
  let word = index % words;
  let position = u32(positions[t]);
  let slot = u32(block_tables[row_tables[t] + position / params.block_size]) * params.block_size + position % params.block_size;
  let destination = slot * words + word;
  let e = t * params.kv_dim + word * per_word;
  if (KV_TYPE == 0u) {
    k_cache[destination] = bitcast<u32>(k[e]);
    v_cache[destination] = bitcast<u32>(v[e]);
  } else {
    k_cache[destination] = f16_bits(k[e]) | (f16_bits(k[e + 1u]) << 16u);
    v_cache[destination] = f16_bits(v[e]) | (f16_bits(v[e + 1u]) << 16u);
  }
}
