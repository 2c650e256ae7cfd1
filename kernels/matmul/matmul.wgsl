// y = x W^T for float weights (F32, F16 or BF16, chosen by WEIGHT_TYPE), with the dequantization fused into the
// loads. W: [n, k] row-major as raw 32-bit words; x: [rows, k] f32; y: [rows, n] f32.
// A workgroup computes WORKGROUP_SIZE / THREADS_PER_COLUMN output columns; the invocations of a column split k and
// accumulate up to ROW_TILE rows at once, so a decode step of up to ROW_TILE sequences reads each weight once. A tree
// in workgroup memory adds each column's partial sums. Short rows (small k) use few threads per column.
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
  // y's row stride and the column of y that W's row 0 writes: a weight split over several bindings (over the
  // adapter's maxStorageBufferBindingSize) is one dispatch per part, each filling its columns of the full y.
  y_stride: u32,
  y_offset: u32,
}

@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read> w: array<u32>;
@group(0) @binding(2) var<storage, read_write> y: array<f32>;
@group(0) @binding(3) var<uniform> params: Params;

var<workgroup> partial: array<f32, ROW_TILE * WORKGROUP_SIZE>;

/** Element e of W as f32. */
fn weight(e: u32) -> f32 {
  if (WEIGHT_TYPE == 0u) {
    return bitcast<f32>(w[e]);
  }
  let word = w[e / 2u];
  let half = select(word & 0xffffu, word >> 16u, (e & 1u) == 1u);
  if (WEIGHT_TYPE == 1u) {
    return unpack2x16float(half).x;
  }
  return bitcast<f32>(half << 16u);
}

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(@builtin(workgroup_id) group: vec3u, @builtin(num_workgroups) groups: vec3u, @builtin(local_invocation_index) lane: u32) {
  let columns = WORKGROUP_SIZE / THREADS_PER_COLUMN;
  let j = (group.x + group.y * groups.x) * columns + lane / THREADS_PER_COLUMN;
  let sub = lane % THREADS_PER_COLUMN;
  let k = params.k;
  // Invocations past the last column still take part in every barrier; they only skip loads and stores.
  let in_range = j < params.n;
  let row_base = j * k;
  for (var first = 0u; first < params.rows; first += ROW_TILE) {
    let count = min(ROW_TILE, params.rows - first);
    var acc: array<f32, ROW_TILE>;
    for (var r = 0u; r < ROW_TILE; r++) {
      acc[r] = 0.0; // explicitly: each row tile starts from zero
    }
    if (in_range) {
      for (var i = sub; i < k; i += THREADS_PER_COLUMN) {
        let wv = weight(row_base + i);
        for (var r = 0u; r < count; r++) {
          acc[r] += wv * x[(first + r) * k + i];
        }
      }
    }
    for (var r = 0u; r < ROW_TILE; r++) {
      partial[r * WORKGROUP_SIZE + lane] = acc[r];
    }
    workgroupBarrier();
    for (var stride = THREADS_PER_COLUMN / 2u; stride > 0u; stride /= 2u) {
      if (sub < stride) {
        for (var r = 0u; r < count; r++) {
          partial[r * WORKGROUP_SIZE + lane] += partial[r * WORKGROUP_SIZE + lane + stride];
        }
      }
      workgroupBarrier();
    }
    if (in_range && sub < count) {
      y[(first + sub) * params.y_stride + params.y_offset + j] = partial[sub * WORKGROUP_SIZE + lane - sub];
    }
    workgroupBarrier();
  }
}
