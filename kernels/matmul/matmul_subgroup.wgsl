enable subgroups;
// matmul.wgsl for adapters with subgroups: y = x W^T for float weights (F32, F16 or BF16, chosen by WEIGHT_TYPE), with
// 16-byte loads (a vec4 of words: 4 f32 or 8 halves of W, 4 values of x) and the partial sums of a column added by
// subgroup shuffles instead of a tree in workgroup memory. Needs k a multiple of 4 (F32) or 8 (F16, BF16), and
// subgroups made of consecutive invocations (the runner checks that with subgroup_layout.wgsl before using this).
// W: [n, k] row-major; x: [rows, k] f32; y: [rows, n] f32. As matmul.wgsl, a workgroup computes
// WORKGROUP_SIZE / THREADS_PER_COLUMN columns, each for up to ROW_TILE rows per weight read.
override WORKGROUP_SIZE: u32 = 64;
// A power of two from ROW_TILE (8) to WORKGROUP_SIZE.
override THREADS_PER_COLUMN: u32 = 64;
// 0: F32, 1: F16 (two halves per word), 2: BF16 (two per word).
override WEIGHT_TYPE: u32 = 0;
const ROW_TILE = 8u;

struct Params {
  rows: u32,
  k: u32,
  n: u32,
  // y's row stride and the column of y that W's row 0 writes (a part of a weight split over several bindings).
  y_stride: u32,
  y_offset: u32,
}

@group(0) @binding(0) var<storage, read> x: array<vec4f>;
@group(0) @binding(1) var<storage, read> w: array<vec4u>;
@group(0) @binding(2) var<storage, read_write> y: array<f32>;
@group(0) @binding(3) var<uniform> params: Params;

// One sum per subgroup and row, for columns wider than a subgroup.
var<workgroup> partial: array<f32, ROW_TILE * WORKGROUP_SIZE>;

/** The two 16-bit values of a word as f32 (F16 or BF16), low half first. */
fn halves(word: u32) -> vec2f {
  if (WEIGHT_TYPE == 1u) {
    return unpack2x16float(word);
  }
  return vec2f(bitcast<f32>(word << 16u), bitcast<f32>(word & 0xffff0000u));
}

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(@builtin(workgroup_id) group: vec3u, @builtin(num_workgroups) groups: vec3u, @builtin(local_invocation_index) lane: u32,
  @builtin(subgroup_invocation_id) lane_in_subgroup: u32, @builtin(subgroup_size) subgroup_size: u32) {
  let columns = WORKGROUP_SIZE / THREADS_PER_COLUMN;
  let j = (group.x + group.y * groups.x) * columns + lane / THREADS_PER_COLUMN;
  let sub = lane % THREADS_PER_COLUMN;
  let in_range = j < params.n;
  // A unit is one vec4 of W: 4 values (F32) or 8 (halves); x has k / 4 vec4s per row.
  let units = params.k / select(8u, 4u, WEIGHT_TYPE == 0u);
  let x_width = params.k / 4u;
  // Lanes of one column that share a subgroup; a column wider than a subgroup spans several.
  let width = min(THREADS_PER_COLUMN, subgroup_size);
  for (var first = 0u; first < params.rows; first += ROW_TILE) {
    let count = min(ROW_TILE, params.rows - first);
    var acc: array<f32, ROW_TILE>;
    for (var r = 0u; r < ROW_TILE; r++) {
      acc[r] = 0.0; // explicitly: each row tile starts from zero
    }
    if (in_range) {
      for (var u = sub; u < units; u += THREADS_PER_COLUMN) {
        let wv = w[j * units + u];
        if (WEIGHT_TYPE == 0u) {
          let wf = bitcast<vec4f>(wv);
          for (var r = 0u; r < count; r++) {
            acc[r] += dot(wf, x[(first + r) * x_width + u]);
          }
        } else {
          let low = vec4f(halves(wv.x), halves(wv.y));
          let high = vec4f(halves(wv.z), halves(wv.w));
          for (var r = 0u; r < count; r++) {
            let xi = (first + r) * x_width + 2u * u;
            acc[r] += dot(low, x[xi]) + dot(high, x[xi + 1u]);
          }
        }
      }
    }
    // Butterfly within the subgroup: afterwards every lane holds its column's (or its subgroup's share's) sums.
    for (var r = 0u; r < count; r++) {
      var sum = acc[r];
      for (var mask = width / 2u; mask > 0u; mask /= 2u) {
        sum += subgroupShuffleXor(sum, mask);
      }
      acc[r] = sum;
    }
    let spans = THREADS_PER_COLUMN / width; // subgroups per column
    if (spans > 1u && lane_in_subgroup == 0u) {
      for (var r = 0u; r < count; r++) {
        partial[r * WORKGROUP_SIZE + lane / width] = acc[r];
      }
    }
    workgroupBarrier();
    if (in_range && sub < count) {
      var total = acc[sub];
      if (spans > 1u) {
        total = 0.0;
        let first_span = (lane / THREADS_PER_COLUMN) * spans;
        for (var s = 0u; s < spans; s++) {
          total += partial[sub * WORKGROUP_SIZE + first_span + s];
        }
      }
      y[(first + sub) * params.y_stride + params.y_offset + j] = total;
    }
    workgroupBarrier();
  }
}
