enable subgroups;
// matmul_quant.wgsl for adapters with subgroups: y = x W^T for Q8_0 or Q4_0 weights (WEIGHT_TYPE) against Q8_0
// activations, with each block's quants read as 16-byte vec4 loads (Q8_0: two per block, Q4_0: one) and the partial
// sums of a column added by subgroup shuffles instead of a tree in workgroup memory. Needs subgroups made of
// consecutive invocations (the runner checks that with subgroup_layout.wgsl before using this). Layouts as in
// matmul_quant.wgsl; a workgroup computes WORKGROUP_SIZE / THREADS_PER_COLUMN columns, up to ROW_TILE rows per
// weight read.
override WORKGROUP_SIZE: u32 = 64;
// A power of two from ROW_TILE (8) to WORKGROUP_SIZE.
override THREADS_PER_COLUMN: u32 = 64;
// 0: Q8_0, 1: Q4_0.
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

@group(0) @binding(0) var<storage, read> x_quants: array<vec4u>;
@group(0) @binding(1) var<storage, read> x_scales: array<f32>;
@group(0) @binding(2) var<storage, read> w_quants: array<vec4u>;
@group(0) @binding(3) var<storage, read> w_scales: array<f32>;
@group(0) @binding(4) var<storage, read_write> y: array<f32>;
@group(0) @binding(5) var<uniform> params: Params;

// One sum per subgroup and row, for columns wider than a subgroup.
var<workgroup> partial: array<f32, ROW_TILE * WORKGROUP_SIZE>;

/** Four nibbles (one per byte, in the low four bits) minus 8, as four packed int8. */
fn centered(nibbles: vec4u) -> vec4u {
  // n ^ 8 is n - 8 as a 4-bit two's complement number; bit 3 set means negative: fill the byte's high bits.
  let t = nibbles ^ vec4u(0x08080808u);
  return t | (((t >> vec4u(3u)) & vec4u(0x01010101u)) * 0xf0u);
}

/** The exact integer dot of a block's 32 int8 quants (two vec4 each). */
fn block_dot(w_low: vec4u, w_high: vec4u, x_low: vec4u, x_high: vec4u) -> i32 {
  return dot4I8Packed(w_low.x, x_low.x) + dot4I8Packed(w_low.y, x_low.y) + dot4I8Packed(w_low.z, x_low.z) + dot4I8Packed(w_low.w, x_low.w)
    + dot4I8Packed(w_high.x, x_high.x) + dot4I8Packed(w_high.y, x_high.y) + dot4I8Packed(w_high.z, x_high.z) + dot4I8Packed(w_high.w, x_high.w);
}

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(@builtin(workgroup_id) group: vec3u, @builtin(num_workgroups) groups: vec3u, @builtin(local_invocation_index) lane: u32,
  @builtin(subgroup_invocation_id) lane_in_subgroup: u32, @builtin(subgroup_size) subgroup_size: u32) {
  let columns = WORKGROUP_SIZE / THREADS_PER_COLUMN;
  let j = (group.x + group.y * groups.x) * columns + lane / THREADS_PER_COLUMN;
  let sub = lane % THREADS_PER_COLUMN;
  let in_range = j < params.n;
  let blocks = params.k / 32u;
  // Lanes of one column that share a subgroup; a column wider than a subgroup spans several.
  let width = min(THREADS_PER_COLUMN, subgroup_size);
  for (var first = 0u; first < params.rows; first += ROW_TILE) {
    let count = min(ROW_TILE, params.rows - first);
    var acc: array<f32, ROW_TILE>;
    for (var r = 0u; r < ROW_TILE; r++) {
      acc[r] = 0.0; // explicitly: each row tile starts from zero
    }
    if (in_range) {
      for (var b = sub; b < blocks; b += THREADS_PER_COLUMN) {
        let wb = j * blocks + b;
        let ws = w_scales[wb];
        var w_low: vec4u;
        var w_high: vec4u;
        if (WEIGHT_TYPE == 0u) {
          w_low = w_quants[wb * 2u];
          w_high = w_quants[wb * 2u + 1u];
        } else {
          // Byte j of a Q4_0 block holds element j (low nibble) and element j + 16 (high nibble).
          let packed = w_quants[wb];
          w_low = centered(packed & vec4u(0x0f0f0f0fu));
          w_high = centered((packed >> vec4u(4u)) & vec4u(0x0f0f0f0fu));
        }
        for (var r = 0u; r < count; r++) {
          let xb = (first + r) * blocks + b;
          acc[r] += f32(block_dot(w_low, w_high, x_quants[xb * 2u], x_quants[xb * 2u + 1u])) * ws * x_scales[xb];
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
