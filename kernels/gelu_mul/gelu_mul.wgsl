// GeGLU gate in place: gate[i] = gelu(gate[i]) * up[i], GELU with the tanh approximation, the gate and the GELU
// passed through halves rounded to nearest even as llama.cpp's table does (as gelu_mul.as.ts; pack2x16float's
// rounding is the adapter's choice, lavapipe's truncates); gate <= -10 gives 0 and gate >= 10 gives gate * up. One
// invocation per element. The half conversions are kv_store.wgsl's and attention.wgsl's (WGSL has no includes).
override WORKGROUP_SIZE: u32 = 256;

struct Params {
  count: u32,
}

@group(0) @binding(0) var<storage, read_write> gate: array<f32>;
@group(0) @binding(1) var<storage, read> up: array<f32>;
@group(0) @binding(2) var<uniform> params: Params;

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

fn through_half(v: f32) -> f32 {
  return half_to_f32(f16_bits(v));
}

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(@builtin(global_invocation_id) id: vec3u, @builtin(num_workgroups) groups: vec3u) {
  let i = id.x + id.y * groups.x * WORKGROUP_SIZE;
  if (i < params.count) {
    let x = gate[i];
    var y = x * up[i];
    if (x <= -10.0) {
      y = 0.0;
    } else if (x < 10.0) {
      let h = through_half(x);
      let gelu = 0.5 * h * (1.0 + tanh(0.7978845608028654 * h * (1.0 + 0.044715 * h * h)));
      y = through_half(gelu) * up[i];
    }
    gate[i] = y;
  }
}
