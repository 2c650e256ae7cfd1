// y = x W^T for many rows at once, Q8_0 or Q4_0 weights (WEIGHT_TYPE) against Q8_0-quantized activations, with the
// numerics of matmul_quant.wgsl (an exact integer dot per 32-value block times both block scales): a workgroup
// computes a 64 x 64 tile of y, staging BLOCKS blocks of 64 activation rows and 64 weight rows in workgroup memory
// per step; each invocation accumulates a 4 x 4 block (rows ty + 16 i, columns tx + 16 j) in registers.
// Layouts as matmul_quant.wgsl; y indexed with y_stride and y_offset as there.
override WEIGHT_TYPE: u32 = 0; // 0: Q8_0 (8 quant words per block), 1: Q4_0 (4 words of nibbles per block)
const TILE = 64u;
const BLOCKS = 2u;

struct Params {
  rows: u32,
  k: u32,
  n: u32,
  y_stride: u32,
  y_offset: u32,
}

@group(0) @binding(0) var<storage, read> x_quants: array<u32>;
@group(0) @binding(1) var<storage, read> x_scales: array<f32>;
@group(0) @binding(2) var<storage, read> w_quants: array<u32>;
@group(0) @binding(3) var<storage, read> w_scales: array<f32>;
@group(0) @binding(4) var<storage, read_write> y: array<f32>;
@group(0) @binding(5) var<uniform> params: Params;

// [block][word][row]: the invocations of a row of the tile read consecutive words.
var<workgroup> xq: array<u32, BLOCKS * 8u * TILE>;
var<workgroup> wq: array<u32, BLOCKS * 8u * TILE>;
var<workgroup> xs: array<f32, BLOCKS * TILE>;
var<workgroup> ws: array<f32, BLOCKS * TILE>;

/** Four nibbles (one per byte, in the low four bits) minus 8, as four packed int8 (as matmul_quant.wgsl). */
fn centered(nibbles: u32) -> u32 {
  let t = nibbles ^ 0x08080808u;
  return t | (((t >> 3u) & 0x01010101u) * 0xf0u);
}

@compute @workgroup_size(16, 16)
fn main(@builtin(workgroup_id) group: vec3u, @builtin(local_invocation_id) local: vec3u, @builtin(local_invocation_index) lane: u32) {
  let row0 = group.y * TILE;
  let col0 = group.x * TILE;
  let blocks = params.k / 32u;
  var acc: array<f32, 16>;
  for (var i = 0u; i < 16u; i++) {
    acc[i] = 0.0;
  }
  for (var b0 = 0u; b0 < blocks; b0 += BLOCKS) {
    // BLOCKS x 8 words x 64 rows of each operand: 4 words per invocation each.
    for (var i = 0u; i < 4u; i++) {
      let e = lane + 256u * i; // = (block * 64 + row) * 8 + word
      let word = e % 8u;
      let r = (e / 8u) % TILE;
      let blk = e / (8u * TILE);
      let b = b0 + blk;
      let slot = (blk * 8u + word) * TILE + r;
      let xr = row0 + r;
      var xv = 0u;
      if (xr < params.rows && b < blocks) {
        xv = x_quants[(xr * blocks + b) * 8u + word];
      }
      xq[slot] = xv;
      let wc = col0 + r;
      var wv = 0u;
      if (wc < params.n && b < blocks) {
        if (WEIGHT_TYPE == 0u) {
          wv = w_quants[(wc * blocks + b) * 8u + word];
        } else {
          // Words 0-3: low nibbles of the block's 4 packed words; words 4-7: their high nibbles.
          let packed = w_quants[(wc * blocks + b) * 4u + word % 4u];
          wv = centered(select(packed & 0x0f0f0f0fu, (packed >> 4u) & 0x0f0f0f0fu, word >= 4u));
        }
      }
      wq[slot] = wv;
    }
    if (lane < BLOCKS * TILE) {
      let r = lane % TILE;
      let b = b0 + lane / TILE;
      xs[lane] = select(0.0, x_scales[min(row0 + r, params.rows - 1u) * blocks + min(b, blocks - 1u)], row0 + r < params.rows && b < blocks);
      ws[lane] = select(0.0, w_scales[min(col0 + r, params.n - 1u) * blocks + min(b, blocks - 1u)], col0 + r < params.n && b < blocks);
    }
    workgroupBarrier();
    for (var blk = 0u; blk < BLOCKS; blk++) {
      var dots: array<i32, 16>;
      for (var i = 0u; i < 16u; i++) {
        dots[i] = 0;
      }
      for (var word = 0u; word < 8u; word++) {
        let base = (blk * 8u + word) * TILE;
        var a: array<u32, 4>;
        var c: array<u32, 4>;
        for (var i = 0u; i < 4u; i++) {
          a[i] = xq[base + local.y + 16u * i];
          c[i] = wq[base + local.x + 16u * i];
        }
        for (var i = 0u; i < 4u; i++) {
          for (var j = 0u; j < 4u; j++) {
            dots[i * 4u + j] += dot4I8Packed(a[i], c[j]);
          }
        }
      }
      for (var i = 0u; i < 4u; i++) {
        let sx = xs[blk * TILE + local.y + 16u * i];
        for (var j = 0u; j < 4u; j++) {
          acc[i * 4u + j] += f32(dots[i * 4u + j]) * ws[blk * TILE + local.x + 16u * j] * sx;
        }
      }
    }
    workgroupBarrier();
  }
  for (var i = 0u; i < 4u; i++) {
    let r = row0 + local.y + 16u * i;
    for (var j = 0u; j < 4u; j++) {
      let c = col0 + local.x + 16u * j;
      if (r < params.rows && c < params.n) {
        y[r * params.y_stride + params.y_offset + c] = acc[i * 4u + j];
      }
    }
  }
}
