// Average pooling of a grid of patch tokens (Gemma 3's vision tower: 64 x 64 patches to 16 x 16), as ggml_pool_2d
// with GGML_OP_POOL_AVG, stride = kernel and no padding computes it: an f32 sum over the window, then one division.

/** Channels summed per pass: four vectors of accumulators. */
const CHANNEL_BLOCK: i32 = 16;

/**
 * Output tokens [i0, i1) of out: [(height / k) * (width / k), channels] f32 from x: [height * width, channels] f32
 * (token y * width + x, channels contiguous; the divisions floor). Token oy * (width / k) + ox = sum over the k x k
 * window (rows ky outer, columns kx inner, from 0, in f32) / (k * k). Split grain 1.
 */
export function pool_2d(x: usize, out: usize, height: i32, width: i32, channels: i32, k: i32, i0: i32, i1: i32): void {
  const outW = width / k;
  const tokenBytes = <usize>channels << 2;
  const area = <f32>(k * k);
  const areaV = f32x4.splat(area);
  for (let o = i0; o < i1; o++) {
    const oy = o / outW;
    const ox = o - oy * outW;
    const window = x + (<usize>(oy * k) * <usize>width + <usize>(ox * k)) * tokenBytes;
    const target = out + <usize>o * tokenBytes;
    let c = 0;
    for (; c + CHANNEL_BLOCK <= channels; c += CHANNEL_BLOCK) {
      let s0 = f32x4.splat(0), s1 = f32x4.splat(0), s2 = f32x4.splat(0), s3 = f32x4.splat(0);
      for (let ky = 0; ky < k; ky++) {
        let p = window + <usize>ky * <usize>width * tokenBytes + (<usize>c << 2);
        for (let kx = 0; kx < k; kx++) {
          s0 = f32x4.add(s0, v128.load(p));
          s1 = f32x4.add(s1, v128.load(p, 16));
          s2 = f32x4.add(s2, v128.load(p, 32));
          s3 = f32x4.add(s3, v128.load(p, 48));
          p += tokenBytes;
        }
      }
      const t = target + (<usize>c << 2);
      v128.store(t, f32x4.div(s0, areaV));
      v128.store(t, f32x4.div(s1, areaV), 16);
      v128.store(t, f32x4.div(s2, areaV), 32);
      v128.store(t, f32x4.div(s3, areaV), 48);
    }
    for (; c + 4 <= channels; c += 4) {
      let s = f32x4.splat(0);
      for (let ky = 0; ky < k; ky++) {
        let p = window + <usize>ky * <usize>width * tokenBytes + (<usize>c << 2);
        for (let kx = 0; kx < k; kx++) {
          s = f32x4.add(s, v128.load(p));
          p += tokenBytes;
        }
      }
      v128.store(target + (<usize>c << 2), f32x4.div(s, areaV));
    }
    for (; c < channels; c++) {
      let s: f32 = 0;
      for (let ky = 0; ky < k; ky++) {
        let p = window + <usize>ky * <usize>width * tokenBytes + (<usize>c << 2);
        for (let kx = 0; kx < k; kx++) {
          s += load<f32>(p);
          p += tokenBytes;
        }
      }
      store<f32>(target + (<usize>c << 2), s / area);
    }
  }
}
