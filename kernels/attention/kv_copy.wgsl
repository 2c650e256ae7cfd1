// Section-pruning relocation: copies `count` positions of K and V from one block table's span (from source_start)
// to another's (from target_start) and re-rotates the copied keys by the RoPE position delta target_start -
// source_start, so they read as if computed at their new positions. The rotation of a delta d is the table's
// rotation of |d| with the sine negated for d < 0 (angles are odd in d). Sources and targets never share a block.
// Caches: [slots, kv_heads * head_dim] f32. One invocation per (position, value).
override WORKGROUP_SIZE: u32 = 256;

struct Params {
  count: u32,
  kv_heads: u32,
  head_dim: u32,
  rotary_dim: u32,
  block_size: u32,
  source_start: u32,
  target_start: u32,
  delta: i32,
}

@group(0) @binding(0) var<storage, read_write> k_cache: array<f32>;
@group(0) @binding(1) var<storage, read_write> v_cache: array<f32>;
@group(0) @binding(2) var<storage, read> source_table: array<i32>;
@group(0) @binding(3) var<storage, read> target_table: array<i32>;
// [position][rotary_dim / 2] of (cos, sin), as rope_neox reads it.
@group(0) @binding(4) var<storage, read> rotations: array<vec2f>;
@group(0) @binding(5) var<uniform> params: Params;

fn slot(in_target: bool, position: u32) -> u32 {
  let block = select(source_table[position / params.block_size], target_table[position / params.block_size], in_target);
  return u32(block) * params.block_size + position % params.block_size;
}

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(@builtin(global_invocation_id) id: vec3u, @builtin(num_workgroups) groups: vec3u) {
  let kv_dim = params.kv_heads * params.head_dim;
  let index = id.x + id.y * groups.x * WORKGROUP_SIZE;
  if (index >= params.count * kv_dim) {
    return;
  }
  let r = index / kv_dim;
  let e = index % kv_dim;
  let source = slot(false, params.source_start + r) * kv_dim;
  let destination = slot(true, params.target_start + r) * kv_dim;
  v_cache[destination + e] = v_cache[source + e];
  let i = e % params.head_dim;
  let half = params.rotary_dim / 2u;
  if (params.delta == 0 || i >= params.rotary_dim) {
    k_cache[destination + e] = k_cache[source + e];
    return;
  }
  let pair = i % half;
  var rotation = rotations[u32(abs(params.delta)) * half + pair];
  if (params.delta < 0) {
    rotation.y = -rotation.y;
  }
  let head = source + e - i;
  let x0 = k_cache[head + pair];
  let x1 = k_cache[head + pair + half];
  k_cache[destination + e] = select(x0 * rotation.y + x1 * rotation.x, x0 * rotation.x - x1 * rotation.y, i < half);
}
