// Bidirectional attention over a dense batch of tokens (a vision encoder's; no mask, no cache) with an online
// softmax: one workgroup per (query tile of QUERY_TILE rows, head), workgroup (x, y) = (tile, head). Keys and values
// pass through workgroup memory KEY_TILE rows at a time; the four invocations of a query row each score a quarter of
// the tile's keys, then each runs the row's online softmax (the same arithmetic, so the same running max and sum)
// and accumulates a quarter of its dimensions (d = part, part + 4, ..). q, k, v, out: [tokens, heads, HEAD_DIM] f32.
// Workgroup memory: 4 (QUERY_TILE + 2 KEY_TILE) HEAD_DIM + 4 QUERY_TILE KEY_TILE bytes, which must stay within the
// default limit of 16384: HEAD_DIM 72 (SigLIP) or 64 takes KEY_TILE 16, 96 takes 8, 128 takes 4.
override HEAD_DIM: u32 = 72;
// Keys per step: a multiple of LANES_PER_ROW.
override KEY_TILE: u32 = 16;
const QUERY_TILE = 16u;
const LANES_PER_ROW = 4u;
const WORKGROUP_SIZE = 64u; // QUERY_TILE * LANES_PER_ROW
// HEAD_DIM <= LANES_PER_ROW * MAX_DIMS_PER_LANE.
const MAX_DIMS_PER_LANE = 32u;
// Stands in for -infinity (WGSL has no infinite literals): exp(NEGATIVE - m) is 0 for any finite score m.
const NEGATIVE = -3.0e38;

struct Params {
  tokens: u32,
  heads: u32,
  scale: f32,
}

@group(0) @binding(0) var<storage, read> q: array<f32>;
@group(0) @binding(1) var<storage, read> k: array<f32>;
@group(0) @binding(2) var<storage, read> v: array<f32>;
@group(0) @binding(3) var<storage, read_write> out: array<f32>;
@group(0) @binding(4) var<uniform> params: Params;

var<workgroup> q_tile: array<f32, QUERY_TILE * HEAD_DIM>;
var<workgroup> k_tile: array<f32, KEY_TILE * HEAD_DIM>;
var<workgroup> v_tile: array<f32, KEY_TILE * HEAD_DIM>;
var<workgroup> scores: array<f32, QUERY_TILE * KEY_TILE>;

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(@builtin(workgroup_id) group: vec3u, @builtin(local_invocation_index) lane: u32) {
  let head = group.y;
  let first_query = group.x * QUERY_TILE;
  let row = lane / LANES_PER_ROW;
  let part = lane % LANES_PER_ROW;
  let token_stride = params.heads * HEAD_DIM;
  let head_offset = head * HEAD_DIM;
  // Query rows past the last token read as zeros (their results are not stored).
  for (var i = lane; i < QUERY_TILE * HEAD_DIM; i += WORKGROUP_SIZE) {
    let t = first_query + i / HEAD_DIM;
    var value = 0.0;
    if (t < params.tokens) {
      value = q[t * token_stride + head_offset + i % HEAD_DIM];
    }
    q_tile[i] = value;
  }

  var running_max = NEGATIVE;
  var running_sum = 0.0;
  var acc: array<f32, MAX_DIMS_PER_LANE>;
  for (var i = 0u; i < MAX_DIMS_PER_LANE; i++) {
    acc[i] = 0.0; // explicitly (see matmul.wgsl)
  }
  for (var first_key = 0u; first_key < params.tokens; first_key += KEY_TILE) {
    let keys = min(KEY_TILE, params.tokens - first_key);
    workgroupBarrier(); // the last step's readers are done with the tiles (and q_tile is complete)
    for (var i = lane; i < KEY_TILE * HEAD_DIM; i += WORKGROUP_SIZE) {
      let j = i / HEAD_DIM;
      var key = 0.0;
      var value = 0.0;
      if (j < keys) {
        let at = (first_key + j) * token_stride + head_offset + i % HEAD_DIM;
        key = k[at];
        value = v[at];
      }
      k_tile[i] = key;
      v_tile[i] = value;
    }
    workgroupBarrier();
    for (var j = part; j < KEY_TILE; j += LANES_PER_ROW) {
      var dot = 0.0;
      for (var d = 0u; d < HEAD_DIM; d++) {
        dot += q_tile[row * HEAD_DIM + d] * k_tile[j * HEAD_DIM + d];
      }
      scores[row * KEY_TILE + j] = select(NEGATIVE, dot * params.scale, j < keys);
    }
    workgroupBarrier();
    var tile_max = NEGATIVE;
    for (var j = 0u; j < keys; j++) {
      tile_max = max(tile_max, scores[row * KEY_TILE + j]);
    }
    let new_max = max(running_max, tile_max);
    let correction = exp(running_max - new_max); // 0 on the first step
    running_sum *= correction;
    for (var i = 0u; i < MAX_DIMS_PER_LANE; i++) {
      acc[i] *= correction;
    }
    for (var j = 0u; j < keys; j++) {
      let p = exp(scores[row * KEY_TILE + j] - new_max);
      running_sum += p;
      for (var i = 0u; i < MAX_DIMS_PER_LANE; i++) {
        let d = part + i * LANES_PER_ROW;
        if (d < HEAD_DIM) {
          acc[i] += p * v_tile[j * HEAD_DIM + d];
        }
      }
    }
    running_max = new_max;
  }
  let t = first_query + row;
  if (t < params.tokens) {
    let base = t * token_stride + head_offset;
    for (var i = 0u; i < MAX_DIMS_PER_LANE; i++) {
      let d = part + i * LANES_PER_ROW;
      if (d < HEAD_DIM) {
        out[base + d] = acc[i] / running_sum;
      }
    }
  }
}
