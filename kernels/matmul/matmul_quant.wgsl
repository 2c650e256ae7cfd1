// y = x W^T for Q8_0 or Q4_0 weights (WEIGHT_TYPE) against Q8_0-quantized activations (quantize_q8_0.wgsl), as
// llama.cpp's CPU path: per 32-value block the exact integer dot of the quants (dot4I8Packed: four int8 products per
// instruction; Q4_0 nibbles centred to nibble - 8 first) times both block scales. GPU layout: Q8_0 quants four to a
// word; Q4_0 a block's 16 nibble bytes as 4 words (byte j holds element j in its low nibble and element j + 16 in its
// high one, as GGUF); block scales as f32 (exact f16 values).
// W: [n, k]; x: [rows, k]; y: [rows, n]. A workgroup computes WORKGROUP_SIZE / THREADS_PER_COLUMN columns (as in
// matmul.wgsl), up to ROW_TILE rows per weight read.
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
  // y's row stride and the column of y that W's row 0 writes: a weight split over several bindings (over the
  // adapter's maxStorageBufferBindingSize) is one dispatch per part, each filling its columns of the full y.
  y_stride: u32,
  y_offset: u32,
}

@group(0) @binding(0) var<storage, read> x_quants: array<u32>;
@group(0) @binding(1) var<storage, read> x_scales: array<f32>;
@group(0) @binding(2) var<storage, read> w_quants: array<u32>;
@group(0) @binding(3) var<storage, read> w_scales: array<f32>;
@group(0) @binding(4) var<storage, read_write> y: array<f32>;
@group(0) @binding(5) var<uniform> params: Params;

/** Four nibbles (one per byte, in the low four bits) minus 8, as four packed int8. */
fn centered(nibbles: u32) -> u32 {
  // n ^ 8 is n - 8 as a 4-bit two's complement number; bit 3 set means negative: fill the byte's high bits.
  let t = nibbles ^ 0x08080808u;
  return t | (((t >> 3u) & 0x01010101u) * 0xf0u);
}

var<workgroup> partial: array<f32, ROW_TILE * WORKGROUP_SIZE>;

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(@builtin(workgroup_id) group: vec3u, @builtin(num_workgroups) groups: vec3u, @builtin(local_invocation_index) lane: u32) {
  let columns = WORKGROUP_SIZE / THREADS_PER_COLUMN;
  let j = (group.x + group.y * groups.x) * columns + lane / THREADS_PER_COLUMN;
  let sub = lane % THREADS_PER_COLUMN;
  // Invocations past the last column still take part in every barrier; they only skip loads and stores.
  let in_range = j < params.n;
  let blocks = params.k / 32u;
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
        var wq: array<u32, 8>;
        if (WEIGHT_TYPE == 0u) {
          for (var q = 0u; q < 8u; q++) {
            wq[q] = w_quants[wb * 8u + q];
          }
        } else {
          for (var q = 0u; q < 4u; q++) {
            let packed = w_quants[wb * 4u + q];
            wq[q] = centered(packed & 0x0f0f0f0fu);
            wq[q + 4u] = centered((packed >> 4u) & 0x0f0f0f0fu);
          }
        }
        for (var r = 0u; r < count; r++) {
          let xb = (first + r) * blocks + b;
          var dot = 0;
          for (var q = 0u; q < 8u; q++) {
            dot += dot4I8Packed(wq[q], x_quants[xb * 8u + q]);
          }
          acc[r] += f32(dot) * ws * x_scales[xb];
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
