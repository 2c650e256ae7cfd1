// Turns decoded pixels into the encoder's input exactly as llama.cpp's mtmd prepares an image for Gemma 3: scaled to
// fit the square (aspect kept, sides rounded up) with Pillow's bilinear filter in fixed point, centred on black, each
// channel normalised, then cut into patches laid out as the patch-embedding convolution reads them.
import type { RgbImage } from "../chat/messages.js";
import type { VisionConfig } from "./clip-config.js";

// Pillow's fixed-point precision: 32 bits less 8 for the pixel and 2 of headroom.
const PRECISION_BITS = 22;
const FIXED_ONE = 2 ** PRECISION_BITS;

/** Checks an image's fields; @throws RangeError naming what is wrong. */
export function checkRgbImage(image: RgbImage): void {
  const { width, height, data } = image;
  if (!Number.isSafeInteger(width) || width <= 0 || !Number.isSafeInteger(height) || height <= 0) {
    throw new RangeError(`an image needs a positive integer width and height, got ${width} x ${height}`);
  }
  if (!(data instanceof Uint8Array) || data.length !== width * height * 3) {
    throw new RangeError(`an image of ${width} x ${height} needs ${width * height * 3} bytes of RGB, got ${data instanceof Uint8Array ? data.length : typeof data}`);
  }
}

/**
 * `image` scaled to fit a `size` x `size` square, aspect kept, and centred on black (llama.cpp's img_tool::resize
 * with PAD_CEIL: the scale is the smaller side ratio in f32, the scaled sides rounded up).
 */
export function letterbox(image: RgbImage, size: number): RgbImage {
  checkRgbImage(image);
  if (image.width === size && image.height === size) return image;
  const scale = Math.min(Math.fround(size / image.width), Math.fround(size / image.height));
  const width = Math.min(Math.ceil(Math.fround(image.width * scale)), size);
  const height = Math.min(Math.ceil(Math.fround(image.height * scale)), size);
  const scaled = resizeBilinear(image, width, height);
  const out = new Uint8Array(size * size * 3);
  const left = Math.trunc((size - width) / 2);
  const top = Math.trunc((size - height) / 2);
  for (let y = 0; y < height; y++) out.set(scaled.data.subarray(y * width * 3, (y + 1) * width * 3), ((top + y) * size + left) * 3);
  return { width: size, height: size, data: out };
}

/**
 * Pillow's separable bilinear resampling in 22-bit fixed point, as llama.cpp ports it (horizontal pass, then
 * vertical; each output pixel a normalised triangle filter, widened by the scale when shrinking).
 */
export function resizeBilinear(image: RgbImage, width: number, height: number): RgbImage {
  let current = image;
  if (width !== current.width) current = resamplePass(current, width, "horizontal");
  if (height !== current.height) current = resamplePass(current, height, "vertical");
  return current === image ? { width, height, data: image.data.slice() } : current;
}

/** Filter bounds and fixed-point weights for resampling `inSize` pixels to `outSize` (Pillow's precompute_coeffs). */
function filterWeights(inSize: number, outSize: number): { bounds: Int32Array; weights: Int32Array; kernelSize: number } {
  const scale = inSize / outSize;
  const filterScale = Math.max(scale, 1);
  const support = filterScale; // bilinear: support 1, widened when shrinking
  const kernelSize = Math.ceil(support) * 2 + 1;
  const bounds = new Int32Array(outSize * 2);
  const weights = new Int32Array(outSize * kernelSize);
  const row = new Float64Array(kernelSize);
  const inverseScale = 1 / filterScale;
  for (let out = 0; out < outSize; out++) {
    const center = (out + 0.5) * scale;
    const first = Math.max(0, Math.trunc(center - support + 0.5));
    const count = Math.min(inSize, Math.trunc(center + support + 0.5)) - first;
    let total = 0;
    row.fill(0);
    for (let i = 0; i < count; i++) {
      const distance = Math.abs((i + first - center + 0.5) * inverseScale);
      row[i] = distance < 1 ? 1 - distance : 0;
      total += row[i]!;
    }
    for (let i = 0; i < kernelSize; i++) {
      const normalised = i < count && total !== 0 ? row[i]! / total : 0;
      // Pillow adds +/- 0.5 and truncates toward zero.
      weights[out * kernelSize + i] = Math.trunc(normalised * FIXED_ONE + (normalised < 0 ? -0.5 : 0.5));
    }
    bounds[out * 2] = first;
    bounds[out * 2 + 1] = count;
  }
  return { bounds, weights, kernelSize };
}

/** One resampling pass along the image's width or height. */
function resamplePass(image: RgbImage, outSize: number, direction: "horizontal" | "vertical"): RgbImage {
  const horizontal = direction === "horizontal";
  const inSize = horizontal ? image.width : image.height;
  const { bounds, weights, kernelSize } = filterWeights(inSize, outSize);
  const width = horizontal ? outSize : image.width;
  const height = horizontal ? image.height : outSize;
  const out = new Uint8Array(width * height * 3);
  const src = image.data;
  // Distance in bytes between neighbours along the pass, and between lines across it.
  const step = horizontal ? 3 : image.width * 3;
  const lines = horizontal ? image.height : image.width;
  const lineIn = horizontal ? image.width * 3 : 3;
  const lineOut = horizontal ? width * 3 : 3;
  const outStep = horizontal ? 3 : width * 3;
  for (let line = 0; line < lines; line++) {
    for (let o = 0; o < outSize; o++) {
      const first = bounds[o * 2]!;
      const count = bounds[o * 2 + 1]!;
      const base = line * lineIn + first * step;
      for (let channel = 0; channel < 3; channel++) {
        let sum = FIXED_ONE / 2; // rounding bias
        for (let i = 0; i < count; i++) sum += src[base + i * step + channel]! * weights[o * kernelSize + i]!;
        const value = Math.floor(sum / FIXED_ONE);
        out[line * lineOut + o * outStep + channel] = value < 0 ? 0 : value > 255 ? 255 : value;
      }
    }
  }
  return { width, height, data: out };
}

/**
 * The encoder input of an image: letterboxed to the model's square, each value v / 255 normalised per channel as
 * (v - mean) / std in f32, then one row per patch (patch index y * patchesPerSide + x) holding its values in the
 * convolution kernel's order [channel][row][column]: [patchesPerSide^2, 3 * patchSize^2].
 */
export function imagePatches(image: RgbImage, config: VisionConfig): Float32Array {
  const { imageSize: size, patchSize: p, patchesPerSide: side, imageMean: mean, imageStd: std } = config;
  const square = letterbox(image, size);
  const normalised = new Float32Array(256 * 3);
  for (let v = 0; v < 256; v++) {
    for (let c = 0; c < 3; c++) normalised[v * 3 + c] = Math.fround(Math.fround(Math.fround(v / 255) - mean[c]!) / std[c]!);
  }
  const rowLength = 3 * p * p;
  const patches = new Float32Array(side * side * rowLength);
  for (let py = 0; py < side; py++) {
    for (let px = 0; px < side; px++) {
      const row = (py * side + px) * rowLength;
      for (let c = 0; c < 3; c++) {
        for (let ky = 0; ky < p; ky++) {
          const pixel = ((py * p + ky) * size + px * p) * 3;
          const at = row + (c * p + ky) * p;
          for (let kx = 0; kx < p; kx++) patches[at + kx] = normalised[square.data[pixel + kx * 3 + c]! * 3 + c]!;
        }
      }
    }
  }
  return patches;
}
