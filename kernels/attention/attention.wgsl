// Paged causal attention for a batch of token rows from any number of sequences, with an online softmax: one
// workgroup per (head, row). Row t attends to positions 0..positions[t] (or up to its key end) of its sequence through the block table at
// row_tables[t]; keys are taken a tile of WORKGROUP_SIZE at a time (one score per invocation), the running maximum
// and sum are rescaled per tile, and each invocation accumulates its share of the head's dimensions.
// Split-K (flash-decoding): with splits > 1, workgroup (head * splits + split, row) takes only keys [split *
// split_keys, (split + 1) * split_keys) and writes its unnormalised accumulators, running maximum and sum to
// `partials` ([rows, heads, splits] records of head_dim + 2 floats); attention_combine.wgsl merges them. A decode
// step of few rows then spreads a long context over many workgroups instead of one per head.
// q, out: [rows, heads, head_dim]; caches: [slots, kv_heads, head_dim] as f32 (KV_TYPE 0) or IEEE half (KV_TYPE 1, two
// per word, see kv_store.wgsl). Grouped-query heads share a kv head.
// Attention sinks (gpt-oss): with has_sinks, head h's sink logit, an f32 at word sinks_offset + h of k_cache (after
// its slots: no extra binding past the 8 storage buffers every adapter allows), counts in the softmax's maximum and
// sum like a key whose value is zero. Split 0 folds it into its partial, so attention_combine.wgsl needs no change.
override WORKGROUP_SIZE: u32 = 64;
override KV_TYPE: u32 = 0;
// head_dim <= DIMS_PER_LANE * WORKGROUP_SIZE.
const DIMS_PER_LANE = 4u;
const MAX_HEAD_DIM = 256u;
// Stands in for -infinity (WGSL has no infinite literals): exp(NEGATIVE - m) is 0 for any finite score m.
const NEGATIVE = -3.0e38;

struct Params {
  heads: u32,
  kv_heads: u32,
  head_dim: u32,
  block_size: u32,
  scale: f32,
  splits: u32,
  // Keys per split: a multiple of WORKGROUP_SIZE.
  split_keys: u32,
  // A sliding window: each row sees only the last `window` positions, its own included (0: all).
  window: u32,
  has_sinks: u32,
  // Words into k_cache.
  sinks_offset: u32,
  // 0: causal. Else row t sees the keys below positions[key_ends_offset + t] (an image's rows see the whole image;
  // a window still starts from positions[t]): the ends ride in the positions buffer, past every binding's limit.
  key_ends_offset: u32,
}

@group(0) @binding(0) var<storage, read> q: array<f32>;
@group(0) @binding(1) var<storage, read> k_cache: array<u32>;
@group(0) @binding(2) var<storage, read> v_cache: array<u32>;
@group(0) @binding(3) var<storage, read> row_tables: array<u32>;
@group(0) @binding(4) var<storage, read> block_tables: array<i32>;
@group(0) @binding(5) var<storage, read> positions: array<i32>;
@group(0) @binding(6) var<storage, read_write> out: array<f32>;
@group(0) @binding(7) var<storage, read_write> partials: array<f32>;
@group(0) @binding(8) var<uniform> params: Params;

var<workgroup> query: array<f32, MAX_HEAD_DIM>;
var<workgroup> probabilities: array<f32, WORKGROUP_SIZE>;
var<workgroup> key_offsets: array<u32, WORKGROUP_SIZE>;
var<workgroup> reduction: array<f32, WORKGROUP_SIZE>;

//#include halves

fn key_at(e: u32) -> f32 {
  if (KV_TYPE == 0u) {
    return bitcast<f32>(k_cache[e]);
  }
  let word = k_cache[e / 2u];
  return half_to_f32(select(word & 0xffffu, word >> 16u, (e & 1u) == 1u));
}

fn value_at(e: u32) -> f32 {
  if (KV_TYPE == 0u) {
    return bitcast<f32>(v_cache[e]);
  }
  let word = v_cache[e / 2u];
  return half_to_f32(select(word & 0xffffu, word >> 16u, (e & 1u) == 1u));
}

/** The workgroup's maximum (is_max) or sum of `value`; every invocation gets it. */
fn reduce(lane: u32, value: f32, is_max: bool) -> f32 {
  reduction[lane] = value;
  workgroupBarrier();
  for (var stride = WORKGROUP_SIZE / 2u; stride > 0u; stride /= 2u) {
    if (lane < stride) {
      let other = reduction[lane + stride];
      reduction[lane] = select(reduction[lane] + other, max(reduction[lane], other), is_max);
    }
    workgroupBarrier();
  }
  let result = reduction[0];
  workgroupBarrier();
  return result;
}

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(@builtin(workgroup_id) group: vec3u, @builtin(local_invocation_index) lane: u32) {
  let head = group.x / params.splits;
  let split = group.x % params.splits;
  let t = group.y;
  let head_dim = params.head_dim;
  let kv_head = head / (params.heads / params.kv_heads);
  let q_base = (t * params.heads + head) * head_dim;
  for (var d = lane; d < head_dim; d += WORKGROUP_SIZE) {
    query[d] = q[q_base + d];
  }
  workgroupBarrier();

  let own_end = u32(positions[t]) + 1u;
  let end = select(own_end, u32(positions[params.key_ends_offset + t]), params.key_ends_offset > 0u);
  let first_key = select(0u, own_end - min(own_end, params.window), params.window > 0u);
  let begin = select(first_key, min(first_key + split * params.split_keys, end), params.splits > 1u);
  let count = select(end, min(begin + params.split_keys, end), params.splits > 1u);
  let table = row_tables[t];
  var running_max = NEGATIVE;
  var running_sum = 0.0;
  var acc: array<f32, DIMS_PER_LANE>;
  for (var i = 0u; i < DIMS_PER_LANE; i++) {
    acc[i] = 0.0; // explicitly (see matmul.wgsl)
  }
  for (var first = begin; first < count; first += WORKGROUP_SIZE) {
    let p = first + lane;
    var score = NEGATIVE;
    if (p < count) {
      let slot = u32(block_tables[table + p / params.block_size]) * params.block_size + p % params.block_size;
      let offset = (slot * params.kv_heads + kv_head) * head_dim;
      key_offsets[lane] = offset;
      var dot = 0.0;
      for (var d = 0u; d < head_dim; d++) {
        dot += query[d] * key_at(offset + d);
      }
      score = dot * params.scale;
    }
    let new_max = max(running_max, reduce(lane, score, true));
    let probability = select(0.0, exp(score - new_max), p < count);
    probabilities[lane] = probability;
    let correction = exp(running_max - new_max);
    running_sum = running_sum * correction + reduce(lane, probability, false);
    running_max = new_max;
    // reduce() ended on a barrier: every probability and key offset of the tile is visible.
    let keys = min(WORKGROUP_SIZE, count - first);
    for (var i = 0u; i < DIMS_PER_LANE; i++) {
      let d = lane + i * WORKGROUP_SIZE;
      if (d < head_dim) {
        var a = acc[i] * correction;
        for (var j = 0u; j < keys; j++) {
          a += probabilities[j] * value_at(key_offsets[j] + d);
        }
        acc[i] = a;
      }
    }
    workgroupBarrier(); // before the next tile overwrites probabilities and key offsets
  }
  if (params.has_sinks != 0u && split == 0u) {
    let sink = bitcast<f32>(k_cache[params.sinks_offset + head]);
    let new_max = max(running_max, sink);
    let correction = exp(running_max - new_max);
    running_sum = running_sum * correction + exp(sink - new_max);
    running_max = new_max;
    for (var i = 0u; i < DIMS_PER_LANE; i++) {
      acc[i] *= correction;
    }
  }
  if (params.splits > 1u) {
    let record = ((t * params.heads + head) * params.splits + split) * (head_dim + 2u);
    for (var i = 0u; i < DIMS_PER_LANE; i++) {
      let d = lane + i * WORKGROUP_SIZE;
      if (d < head_dim) {
        partials[record + d] = acc[i];
      }
    }
    if (lane == 0u) {
      partials[record + head_dim] = running_max;
      partials[record + head_dim + 1u] = running_sum;
    }
    return;
  }
  for (var i = 0u; i < DIMS_PER_LANE; i++) {
    let d = lane + i * WORKGROUP_SIZE;
    if (d < head_dim) {
      out[q_base + d] = acc[i] / running_sum;
    }
  }
}
