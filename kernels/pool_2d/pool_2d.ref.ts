// Reference average pooling of a grid of patch tokens, as ggml_compute_forward_pool_2d (GGML_OP_POOL_AVG, stride =
// kernel, no padding) sums and divides on the CPU.

/**
 * x: [height * width, channels] f32 (token y * width + x); out: [(height / k) * (width / k), channels] (floors: rows
 * and columns past the last whole window are dropped, as ggml's output size is), token oy * (width / k) + ox = the
 * window's f32 sum, window rows outer and columns inner from 0, divided by k * k.
 */
export function pool2dRef(x: Float32Array, height: number, width: number, channels: number, k: number): Float32Array {
  const f = Math.fround;
  const outH = Math.floor(height / k);
  const outW = Math.floor(width / k);
  const out = new Float32Array(outH * outW * channels);
  for (let oy = 0; oy < outH; oy++) {
    for (let ox = 0; ox < outW; ox++) {
      for (let c = 0; c < channels; c++) {
        let sum = 0;
        for (let ky = 0; ky < k; ky++) {
          for (let kx = 0; kx < k; kx++) sum = f(sum + x[((oy * k + ky) * width + ox * k + kx) * channels + c]);
        }
        out[(oy * outW + ox) * channels + c] = f(sum / (k * k));
      }
    }
  }
  return out;
}
