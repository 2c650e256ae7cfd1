// IEEE half conversions shared by the kernels that store or read halves (KV caches, F16 weights, GeGLU's table
// rounding), inserted where a kernel has the line `//#include halves`. Exact where the built-ins may not be:
// pack2x16float's rounding is the adapter's choice and unpack2x16float may flush subnormals.

/** f32 to IEEE half bits, rounded to nearest even, overflow to infinity, subnormals kept (as the host's f32ToF16). */
fn f16_bits(v: f32) -> u32 {
  let bits = bitcast<u32>(v);
  let sign = (bits >> 16u) & 0x8000u;
  let magnitude = bits & 0x7fffffffu;
  if (magnitude >= 0x7f800000u) {
    return sign | 0x7c00u | select(0u, 0x200u, magnitude > 0x7f800000u); // infinity, or a quiet NaN
  }
  let exponent = i32(magnitude >> 23u) - 127;
  if (exponent > 15) {
    return sign | 0x7c00u;
  }
  if (exponent < -25) {
    return sign; // below half the smallest subnormal (2^-24): zero
  }
  // Significand bits to drop: 13 for normal halves, more for subnormal ones (spacing 2^-24).
  let drop = u32(select(13, 13 + (-14 - exponent), exponent < -14));
  let significand = (magnitude & 0x7fffffu) | 0x800000u;
  var kept = significand >> drop;
  let rest = significand & ((1u << drop) - 1u);
  let halfway = 1u << (drop - 1u);
  if (rest > halfway || (rest == halfway && (kept & 1u) == 1u)) {
    kept += 1u;
  }
  if (exponent < -14) {
    return sign | kept; // a subnormal; rounding up into 0x400 gives the smallest normal, as it should
  }
  // kept holds the implicit bit (0x400); a carry to 0x800 moves to the next exponent (infinity past 65504).
  return sign | ((u32(exponent + 15) << 10u) + kept - 0x400u);
}

/** An IEEE half's exact f32 value, subnormals, infinities and signed zeros included (unpack2x16float may flush). */
fn half_to_f32(h: u32) -> f32 {
  let sign = (h & 0x8000u) << 16u;
  let exponent = (h >> 10u) & 0x1fu;
  let mantissa = h & 0x3ffu;
  if (exponent == 0u) {
    return bitcast<f32>(sign | bitcast<u32>(f32(mantissa) * 0x1p-24f));
  }
  if (exponent == 31u) {
    return bitcast<f32>(sign | 0x7f800000u | (mantissa << 13u));
  }
  return bitcast<f32>(sign | ((exponent + 112u) << 23u) | (mantissa << 13u));
}
