// Quantizes f32 activations to Q8_0 in the GPU layout, byte for byte as ggml's AVX path (and the WebAssembly kernel):
// q = round-half-even(x * (127 / amax)), scale = amax / 127 rounded to f16. Both quotients are computed correctly
// rounded in integer arithmetic, because GPU division is not (WGSL allows 2.5 ulp). Quants go four to a word; the
// scale is written as the f32 value of that f16. One invocation per 32-value block.
override WORKGROUP_SIZE: u32 = 64;

struct Params {
  blocks: u32,
}

@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read_write> quants: array<u32>;
@group(0) @binding(2) var<storage, read_write> scales: array<f32>;
@group(0) @binding(3) var<uniform> params: Params;

/** v rounded to the nearest binary16 value, ties to even, subnormals kept (as the host's f32ToF16). v >= 0. */
fn round_to_f16(v: f32) -> f32 {
  let bits = bitcast<u32>(v);
  let exponent = i32(bits >> 23u) - 127;
  if (exponent < -26) {
    return 0.0; // below half the smallest subnormal (2^-25); f32 subnormals included
  }
  // Significand bits to drop: 13 for normal halves, more for subnormal ones (spacing 2^-24).
  let drop = u32(select(13, 13 + (-14 - exponent), exponent < -14));
  let significand = (bits & 0x7fffffu) | 0x800000u;
  var kept = significand >> drop;
  let rest = significand & ((1u << drop) - 1u);
  let halfway = 1u << (drop - 1u);
  if (rest > halfway || (rest == halfway && (kept & 1u) == 1u)) {
    kept += 1u;
  }
  return ldexp(f32(kept), exponent - 23 + i32(drop));
}

/**
 * a / b rounded to nearest even, for positive normal a and b whose quotient is a normal f32: restoring division of
 * the 24-bit significands for 26 quotient bits, then rounding with the remainder as sticky bit.
 */
fn divide_rn(a: f32, b: f32) -> f32 {
  let a_bits = bitcast<u32>(a);
  let b_bits = bitcast<u32>(b);
  let exponent = i32(a_bits >> 23u) - i32(b_bits >> 23u);
  let divisor = (b_bits & 0x7fffffu) | 0x800000u;
  var rest = (a_bits & 0x7fffffu) | 0x800000u;
  var quotient = 0u;
  for (var i = 0u; i < 26u; i++) {
    let bit = rest >= divisor;
    if (bit) {
      rest -= divisor;
    }
    quotient = (quotient << 1u) | select(0u, 1u, bit);
    rest <<= 1u;
  }
  // The quotient of significands is in (1/2, 2): 26 bits hold 24 significant ones plus one or two more.
  let high = quotient >= (1u << 25u);
  let extra = select(1u, 2u, high);
  var significand = quotient >> extra;
  let guard = (quotient >> (extra - 1u)) & 1u;
  let sticky = (quotient & select(0u, 1u, high)) != 0u || rest != 0u;
  if (guard == 1u && (sticky || (significand & 1u) == 1u)) {
    significand += 1u;
  }
  return ldexp(f32(significand), exponent - select(24, 23, high));
}

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(@builtin(global_invocation_id) id: vec3u, @builtin(num_workgroups) groups: vec3u) {
  let block = id.x + id.y * groups.x * WORKGROUP_SIZE;
  if (block >= params.blocks) {
    return;
  }
  let base = block * 32u;
  var amax = 0.0;
  for (var i = 0u; i < 32u; i++) {
    amax = max(amax, abs(x[base + i]));
  }
  // Zero or subnormal maxima (below 2^-126, never seen in activations) give zero quants and a zero scale.
  let normal = amax >= 1.17549435e-38;
  let scale = select(0.0, divide_rn(amax, 127.0), normal);
  let inverse = select(0.0, divide_rn(127.0, amax), normal);
  for (var word = 0u; word < 8u; word++) {
    var packed = 0u;
    for (var byte = 0u; byte < 4u; byte++) {
      let q = i32(round(x[base + word * 4u + byte] * inverse));
      packed |= (u32(q) & 0xffu) << (byte * 8u);
    }
    quants[block * 8u + word] = packed;
  }
  scales[block] = round_to_f16(scale);
}
