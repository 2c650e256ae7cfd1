// y = x W^T for many rows at once (prefill, large decode batches), float weights (F32, F16 or BF16 by WEIGHT_TYPE,
// dequantized on load): a workgroup computes a 64 x 64 tile of y, staging 32-wide slices of x and W in workgroup
// memory so each value loaded from memory is used 64 times; each invocation accumulates a 4 x 4 block in registers.
// W: [n, k] as raw 32-bit words; x: [rows, k] f32; y row r, column c at y[r * y_stride + y_offset + c] (as
// matmul.wgsl, so a weight split into row parts writes its columns of the full y).
// Slices are stored k-major ([32][64]) so that the invocations of a row read consecutive words.
// Invocation (tx, ty) owns rows ty + 16 i and columns tx + 16 j (i, j < 4): neighbours write neighbouring columns.
override WEIGHT_TYPE: u32 = 0; // 0: F32, 1: F16 (two per word), 2: BF16 (two per word)
const TILE = 64u;
const SLICE = 32u;

struct Params {
  rows: u32,
  k: u32,
  n: u32,
  y_stride: u32,
  y_offset: u32,
}

@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read> w: array<u32>;
@group(0) @binding(2) var<storage, read_write> y: array<f32>;
@group(0) @binding(3) var<uniform> params: Params;

var<workgroup> x_slice: array<f32, SLICE * TILE>;
var<workgroup> w_slice: array<f32, SLICE * TILE>;

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

@compute @workgroup_size(16, 16)
fn main(@builtin(workgroup_id) group: vec3u, @builtin(local_invocation_id) local: vec3u, @builtin(local_invocation_index) lane: u32) {
  let row0 = group.y * TILE;
  let col0 = group.x * TILE;
  let k = params.k;
  var acc: array<f32, 16>;
  for (var i = 0u; i < 16u; i++) {
    acc[i] = 0.0;
  }
  for (var k0 = 0u; k0 < k; k0 += SLICE) {
    // 64 x 32 values of each operand, 8 per invocation; consecutive invocations read consecutive k.
    for (var i = 0u; i < 8u; i++) {
      let e = lane + 256u * i;
      let r = e / SLICE;
      let kk = e % SLICE;
      let kg = k0 + kk;
      let xr = row0 + r;
      x_slice[kk * TILE + r] = select(0.0, x[min(xr, params.rows - 1u) * k + min(kg, k - 1u)], xr < params.rows && kg < k);
      let wc = col0 + r;
      var wv = 0.0;
      if (wc < params.n && kg < k) {
        wv = weight(wc * k + kg);
      }
      w_slice[kk * TILE + r] = wv;
    }
    workgroupBarrier();
    for (var kk = 0u; kk < SLICE; kk++) {
      var a: array<f32, 4>;
      var b: array<f32, 4>;
      for (var i = 0u; i < 4u; i++) {
        a[i] = x_slice[kk * TILE + local.y + 16u * i];
        b[i] = w_slice[kk * TILE + local.x + 16u * i];
      }
      for (var i = 0u; i < 4u; i++) {
        for (var j = 0u; j < 4u; j++) {
          acc[i * 4u + j] += a[i] * b[j];
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
