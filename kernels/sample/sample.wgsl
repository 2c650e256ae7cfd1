// Picks one token per row of logits on the GPU, so that a decode step reads back token ids instead of logits.
// One workgroup per sampled row. Temperature 0 is greedy: the argmax, lowest id on ties, NaN never winning (as
// kernels/sample/argmax.ts). Otherwise the CPU sampler's chain (engine/sample/sampler.ts) as thresholds on the
// logits, found by bisection over the logits' bits instead of sorting the vocabulary:
//   top_k: the k-th largest logit (ties with it are kept); top_p: the largest logit t such that the logits >= t hold
//   top_p of the probability (softmax at temperature 1 over the top_k survivors); min_p: max + ln(min_p).
// The survivors (logit >= every threshold) get weight exp((logit - max) / temperature), and `random` (a uniform draw
// in [0, 1) from the request's seeded stream) picks one by inverse CDF in token id order. The distribution is the
// CPU sampler's; which token a given draw lands on is not (the CPU walks candidates best first), and the sums are
// f32. Writes the token id, -1 when every logit is NaN, -2 when no survivor has a finite weight.
override WORKGROUP_SIZE: u32 = 256;

struct Params {
  vocab: u32,
}

struct RowSampling {
  temperature: f32,
  top_k: u32,
  top_p: f32,
  min_p: f32,
  random: f32,
  // The row of `logits` to sample.
  row: u32,
}

@group(0) @binding(0) var<storage, read> logits: array<f32>;
@group(0) @binding(1) var<storage, read> sampling: array<RowSampling>;
@group(0) @binding(2) var<storage, read_write> tokens: array<i32>;
@group(0) @binding(3) var<uniform> params: Params;

var<workgroup> sums: array<f32, WORKGROUP_SIZE>;
var<workgroup> counts: array<u32, WORKGROUP_SIZE>;
var<workgroup> best_ids: array<i32, WORKGROUP_SIZE>;
var<workgroup> shared_f32: f32;
var<workgroup> shared_u32: u32;
var<workgroup> last_live_lane: atomic<u32>;

// NaN and infinities are tested on the bits: WGSL lets an implementation assume arithmetic produces neither.
fn is_nan(x: f32) -> bool {
  return (bitcast<u32>(x) & 0x7fffffffu) > 0x7f800000u;
}

fn is_finite(x: f32) -> bool {
  return (bitcast<u32>(x) & 0x7fffffffu) < 0x7f800000u;
}

// A u32 that orders as the float does: a >= b exactly when key(a) >= key(b) (for non-NaN values).
fn key(x: f32) -> u32 {
  let bits = bitcast<u32>(x);
  return select(~bits, bits | 0x80000000u, (bits & 0x80000000u) == 0u);
}

fn sum_all(lane: u32, value: f32) -> f32 {
  sums[lane] = value;
  workgroupBarrier();
  for (var stride = WORKGROUP_SIZE / 2u; stride > 0u; stride /= 2u) {
    if (lane < stride) {
      sums[lane] += sums[lane + stride];
    }
    workgroupBarrier();
  }
  if (lane == 0u) {
    shared_f32 = sums[0];
  }
  return workgroupUniformLoad(&shared_f32);
}

/** The workgroup's sum (is_max false) or maximum (is_max true) of `value`; every invocation gets it. */
fn combine_u32(lane: u32, value: u32, is_max: bool) -> u32 {
  counts[lane] = value;
  workgroupBarrier();
  for (var stride = WORKGROUP_SIZE / 2u; stride > 0u; stride /= 2u) {
    if (lane < stride) {
      let other = counts[lane + stride];
      counts[lane] = select(counts[lane] + other, max(counts[lane], other), is_max);
    }
    workgroupBarrier();
  }
  if (lane == 0u) {
    shared_u32 = counts[0];
  }
  return workgroupUniformLoad(&shared_u32);
}

// Greedy: each lane scans its ids in increasing order, then a tree keeps the larger value, the lower id on ties.
fn argmax(lane: u32, base: u32) -> i32 {
  var best = -1;
  var best_value = 0.0;
  for (var i = lane; i < params.vocab; i += WORKGROUP_SIZE) {
    let value = logits[base + i];
    // As argmax.ts: NaN never wins; an all -Infinity row still has a winner (its lowest id).
    if (!is_nan(value) && (best < 0 || key(value) > key(best_value))) {
      best = i32(i);
      best_value = value;
    }
  }
  best_ids[lane] = best;
  sums[lane] = best_value;
  workgroupBarrier();
  for (var stride = WORKGROUP_SIZE / 2u; stride > 0u; stride /= 2u) {
    if (lane < stride) {
      let other = best_ids[lane + stride];
      let mine = best_ids[lane];
      let other_value = sums[lane + stride];
      let mine_value = sums[lane];
      if (other >= 0 && (mine < 0 || key(other_value) > key(mine_value) || (key(other_value) == key(mine_value) && other < mine))) {
        best_ids[lane] = other;
        sums[lane] = other_value;
      }
    }
    workgroupBarrier();
  }
  return best_ids[0];
}

// The largest key t with count(logits >= t) >= k: the k-th largest logit's key.
fn top_k_key(lane: u32, base: u32, k: u32) -> u32 {
  var threshold = 0u;
  for (var bit = 31i; bit >= 0i; bit--) {
    let candidate = threshold | (1u << u32(bit));
    var count = 0u;
    for (var i = lane; i < params.vocab; i += WORKGROUP_SIZE) {
      let value = logits[base + i];
      count += select(0u, 1u, !is_nan(value) && key(value) >= candidate);
    }
    if (combine_u32(lane, count, false) >= k) {
      threshold = candidate;
    }
  }
  return threshold;
}

// Sum of exp(logit - top) over the finite logits whose key is at least `floor_key` and `at_least`.
fn mass(lane: u32, base: u32, top: f32, floor_key: u32, at_least: u32) -> f32 {
  var total = 0.0;
  for (var i = lane; i < params.vocab; i += WORKGROUP_SIZE) {
    let value = logits[base + i];
    if (is_finite(value) && key(value) >= floor_key && key(value) >= at_least) {
      total += exp(value - top);
    }
  }
  return sum_all(lane, total);
}

// The largest key t such that the survivors (key >= floor_key) at or above t hold top_p of the survivors' mass
// (never below floor_key: there the mass is the whole, which always reaches top_p of itself).
fn top_p_key(lane: u32, base: u32, top: f32, floor_key: u32, top_p: f32) -> u32 {
  let goal = top_p * mass(lane, base, top, floor_key, 0u);
  var threshold = 0u;
  for (var bit = 31i; bit >= 0i; bit--) {
    let candidate = threshold | (1u << u32(bit));
    if (mass(lane, base, top, floor_key, candidate) >= goal) {
      threshold = candidate;
    }
  }
  return max(threshold, floor_key);
}

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(@builtin(workgroup_id) group: vec3u, @builtin(local_invocation_index) lane: u32) {
  let s = sampling[group.x];
  let base = s.row * params.vocab;
  if (s.temperature == 0.0) {
    let best = argmax(lane, base);
    if (lane == 0u) {
      tokens[group.x] = best;
    }
    return;
  }

  // The largest live logit (as a key; NaN excluded).
  var top_key_local = 0u;
  var live = 0u;
  for (var i = lane; i < params.vocab; i += WORKGROUP_SIZE) {
    let value = logits[base + i];
    if (!is_nan(value)) {
      top_key_local = max(top_key_local, key(value));
      live += 1u;
    }
  }
  let live_count = combine_u32(lane, live, false);
  let top_key = combine_u32(lane, top_key_local, true);
  if (live_count == 0u) {
    if (lane == 0u) {
      tokens[group.x] = -1;
    }
    return;
  }
  // Back from key to value: the inverse of key().
  let top = bitcast<f32>(select(~top_key, top_key & 0x7fffffffu, (top_key & 0x80000000u) != 0u));

  var threshold = 0u;
  if (s.top_k > 0u && s.top_k < params.vocab) {
    threshold = top_k_key(lane, base, s.top_k);
  }
  if (s.top_p < 1.0) {
    threshold = top_p_key(lane, base, top, threshold, s.top_p);
  }
  if (s.min_p > 0.0) {
    threshold = max(threshold, key(top + log(s.min_p)));
  }

  // Inverse CDF over token ids: each lane owns a contiguous span, a scan of the spans' masses finds the lane whose
  // span holds the draw, and that lane walks its span.
  let span = (params.vocab + WORKGROUP_SIZE - 1u) / WORKGROUP_SIZE;
  let start = min(lane * span, params.vocab);
  let end = min(start + span, params.vocab);
  var own = 0.0;
  for (var i = start; i < end; i++) {
    let value = logits[base + i];
    if (is_finite(value) && key(value) >= threshold) {
      own += exp((value - top) / s.temperature);
    }
  }
  if (lane == 0u) {
    atomicStore(&last_live_lane, 0u);
  }
  sums[lane] = own;
  workgroupBarrier();
  if (own > 0.0) {
    atomicMax(&last_live_lane, lane + 1u);
  }
  for (var offset = 1u; offset < WORKGROUP_SIZE; offset *= 2u) {
    let add = select(0.0, sums[max(lane, offset) - offset], lane >= offset);
    workgroupBarrier();
    sums[lane] += add;
    workgroupBarrier();
  }
  let total = sums[WORKGROUP_SIZE - 1u];
  let before = select(0.0, sums[max(lane, 1u) - 1u], lane > 0u);
  let after = sums[lane];
  let last_live = atomicLoad(&last_live_lane);
  if (!(total > 0.0) || (bitcast<u32>(total) & 0x7fffffffu) >= 0x7f800000u) {
    if (lane == 0u) {
      tokens[group.x] = -2;
    }
    return;
  }
  let goal = s.random * total;
  // The draw can round up to the total: then the last lane with mass takes it.
  let mine = (own > 0.0 && goal >= before && goal < after) || (goal >= total && lane + 1u == last_live);
  if (!mine) {
    return;
  }
  var cumulative = 0.0;
  var chosen = -1;
  var last_positive = -1;
  for (var i = start; i < end; i++) {
    let value = logits[base + i];
    if (is_finite(value) && key(value) >= threshold) {
      let weight = exp((value - top) / s.temperature);
      if (weight > 0.0) {
        cumulative += weight;
        last_positive = i32(i);
        if (chosen < 0 && goal - before < cumulative) {
          chosen = i32(i);
        }
      }
    }
  }
  tokens[group.x] = select(last_positive, chosen, chosen >= 0);
}
