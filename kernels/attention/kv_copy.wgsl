// Section-pruning relocation: copies `count` positions of K and V from one block table's span (from source_start)
// to another's (from target_start) and re-rotates the copied keys by the RoPE position delta target_start -
// source_start, so they read as if computed at their new positions. The rotation of a delta d is the table's
// rotation of |d| with the sine negated for d < 0 (angles are odd in d). Sources and targets never share a block.
// Caches: [slots, kv_heads * head_dim] as f32 (KV_TYPE 0) or IEEE half (KV_TYPE 1, two per word: rotated keys are
// computed in f32 and rounded to nearest even, as the CPU backend's f16 cache). One invocation per (position, word).
override WORKGROUP_SIZE: u32 = 256;
override KV_TYPE: u32 = 0;

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

@group(0) @binding(0) var<storage, read_write> k_cache: array<u32>;
@group(0) @binding(1) var<storage, read_write> v_cache: array<u32>;
@group(0) @binding(2) var<storage, read> source_table: array<i32>;
@group(0) @binding(3) var<storage, read> target_table: array<i32>;
// [position][rotary_dim / 2] of (cos, sin), as rope_neox reads it.
@group(0) @binding(4) var<storage, read> rotations: array<vec2f>;
@group(0) @binding(5) var<uniform> params: Params;

fn slot(in_target: bool, position: u32) -> u32 {
  let block = select(source_table[position / params.block_size], target_table[position / params.block_size], in_target);
  return u32(block) * params.block_size + position % params.block_size;
}

//#include halves

fn key_at(e: u32) -> f32 {
  if (KV_TYPE == 0u) {
    return bitcast<f32>(k_cache[e]);
  }
  let word = k_cache[e / 2u];
  return half_to_f32(select(word & 0xffffu, word >> 16u, (e & 1u) == 1u));
}

/** Element i of a head whose first element is at `head`, re-rotated by the delta (or as it was). */
fn moved_key(head: u32, i: u32, rotation: vec2f) -> f32 {
  let half = params.rotary_dim / 2u;
  if (params.delta == 0 || i >= params.rotary_dim) {
    return key_at(head + i);
  }
  let pair = i % half;
  let x0 = key_at(head + pair);
  let x1 = key_at(head + pair + half);
  return select(x0 * rotation.y + x1 * rotation.x, x0 * rotation.x - x1 * rotation.y, i < half);
}

fn rotation_of(i: u32) -> vec2f {
  let half = params.rotary_dim / 2u;
  if (params.delta == 0 || i >= params.rotary_dim) {
    return vec2f(1.0, 0.0);
  }
  var rotation = rotations[u32(abs(params.delta)) * half + i % half];
  if (params.delta < 0) {
    rotation.y = -rotation.y;
  }
  return rotation;
}

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(@builtin(global_invocation_id) id: vec3u, @builtin(num_workgroups) groups: vec3u) {
  let kv_dim = params.kv_heads * params.head_dim;
  let per_word = select(1u, 2u, KV_TYPE == 1u);
  let words = kv_dim / per_word;
  let index = id.x + id.y * groups.x * WORKGROUP_SIZE;
  if (index >= params.count * words) {
    return;
  }
  let r = index / words;
  let word = index % words;
  let source = slot(false, params.source_start + r) * kv_dim;
  let destination = slot(true, params.target_start + r) * kv_dim;
  let e = word * per_word;
  v_cache[(destination + e) / per_word] = v_cache[(source + e) / per_word];
  let i = e % params.head_dim;
  let head = source + e - i;
  if (KV_TYPE == 0u) {
    k_cache[destination + e] = bitcast<u32>(moved_key(head, i, rotation_of(i)));
  } else {
    // head_dim is even, so both halves of the word belong to the same head.
    let low = moved_key(head, i, rotation_of(i));
    let high = moved_key(head, i + 1u, rotation_of(i + 1u));
    k_cache[(destination + e) / 2u] = f16_bits(low) | (f16_bits(high) << 16u);
  }
}
