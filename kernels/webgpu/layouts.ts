// Host-side conversions into the layouts the WGSL kernels read: Q8_0 and Q4_0 split into packed quant words and f32
// block scales (34-byte blocks are not 4-byte aligned, and f32 scales spare the kernels an f16 conversion), and the
// RoPE rotation table.
import { f16ToF32 } from "../formats/f16.js";
import { MXFP4_KVALUES, e8m0Half } from "../formats/mxfp4.js";
import { NO_YARN, type YarnConstants, yarnAngle } from "../rope-frequencies.js";

/** A block-quantized tensor in the GPU layout: its quant bytes packed into words, one f32 scale per block. */
export interface SplitBlocks {
  /** Q8_0: 8 words per block (four int8 each, little-endian); Q4_0: 4 words per block (the 16 nibble bytes). */
  quants: Uint32Array;
  scales: Float32Array;
}

/** Splits `blocks` blocks of (f16 scale, `quantBytes` quant bytes) into the GPU layout. */
function splitBlocks(kind: string, bytes: Uint8Array, blocks: number, quantBytes: number): SplitBlocks {
  const blockBytes = 2 + quantBytes;
  if (bytes.byteLength < blocks * blockBytes) throw new RangeError(`${kind} data holds ${bytes.byteLength} bytes, ${blocks * blockBytes} needed`);
  const packed = new Uint8Array(blocks * quantBytes);
  const scales = new Float32Array(blocks);
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  for (let b = 0; b < blocks; b++) {
    scales[b] = f16ToF32(view.getUint16(b * blockBytes, true));
    packed.set(bytes.subarray(b * blockBytes + 2, (b + 1) * blockBytes), b * quantBytes);
  }
  return { quants: new Uint32Array(packed.buffer), scales };
}

/** Splits `blocks` GGUF Q8_0 blocks (f16 scale, 32 int8 quants) into the GPU layout. */
export function splitQ8_0(bytes: Uint8Array, blocks: number): SplitBlocks {
  return splitBlocks("Q8_0", bytes, blocks, 32);
}

/** Splits `blocks` GGUF Q4_0 blocks (f16 scale, 16 bytes of nibbles) into the GPU layout. */
export function splitQ4_0(bytes: Uint8Array, blocks: number): SplitBlocks {
  return splitBlocks("Q4_0", bytes, blocks, 16);
}

/**
 * Converts `blocks` GGUF MXFP4 blocks (E8M0 exponent e, 16 bytes of 4-bit codes: value j in the low nibble of byte j,
 * value j + 16 in the high one) into the Q8_0 GPU layout, exactly: each code's doubled e2m1 value (kvalues_mxfp4,
 * -12..12) as an int8 quant and E8M0_half(e) = 2^(e - 128) as the f32 scale. The Q8_0 kernels then compute what
 * ggml_vec_dot_mxfp4_q8_0 does (an exact integer dot per block times scale_w * scale_x), at 36 bytes per block
 * against MXFP4's 17 (F32 would take 128).
 * NOTE: e 0 and 1 give subnormal scales, which a GPU may flush to zero.
 */
export function splitMxfp4(bytes: Uint8Array, blocks: number): SplitBlocks {
  if (bytes.byteLength < blocks * 17) throw new RangeError(`MXFP4 data holds ${bytes.byteLength} bytes, ${blocks * 17} needed`);
  const quants = new Int8Array(blocks * 32);
  const scales = new Float32Array(blocks);
  for (let b = 0; b < blocks; b++) {
    scales[b] = e8m0Half(bytes[b * 17]!);
    for (let j = 0; j < 16; j++) {
      const code = bytes[b * 17 + 1 + j]!;
      quants[b * 32 + j] = MXFP4_KVALUES[code & 0xf]!;
      quants[b * 32 + 16 + j] = MXFP4_KVALUES[code >> 4]!;
    }
  }
  return { quants: new Uint32Array(quants.buffer), scales };
}

/**
 * (cos, sin) of every RoPE angle: [positions][rotaryDim / 2] pairs, computed as the reference does (the angle
 * iterated in f32 as position * thetaScale^i, divided by the frequency factor when there is one, times freqScale
 * (linear scaling), or with YaRN mixed between that and the unscaled angle as ggml's rope_yarn does; cos and sin of
 * that f32 angle, rounded to f32, then times YaRN's mscale), so GPU rotations equal the reference's without GPU
 * sin/cos approximations.
 * NOTE: with an mscale other than 1 the table scales as well as turns: re-rotating cached keys (kv_copy.wgsl) needs a
 * table of the same angles with mscale 1.
 */
export function ropeRotations(positions: number, rotaryDim: number, thetaScale: number, freqFactors?: Float32Array, freqScale = 1, yarn: YarnConstants = NO_YARN): Float32Array {
  const f = Math.fround;
  const half = rotaryDim / 2;
  const table = new Float32Array(positions * half * 2);
  for (let p = 0; p < positions; p++) {
    let theta = f(p);
    for (let i = 0; i < half; i++) {
      const angle = yarnAngle(freqFactors ? f(theta / freqFactors[i]) : theta, freqScale, i, yarn);
      table[(p * half + i) * 2] = f(f(Math.cos(angle)) * yarn.mscale);
      table[(p * half + i) * 2 + 1] = f(f(Math.sin(angle)) * yarn.mscale);
      theta = f(theta * thetaScale);
    }
  }
  return table;
}
