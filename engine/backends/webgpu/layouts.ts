// Host-side conversions into the layouts the WGSL kernels read: Q8_0 split into four-to-a-word quants and f32
// block scales (34-byte blocks are not 4-byte aligned, and f32 scales spare the kernels an f16 conversion), and the
// RoPE rotation table.
import { f16ToF32 } from "../../model/dtypes.js";

/** Q8_0 in the GPU layout: quants [blocks * 8] words (four int8 each, little-endian), scales [blocks] f32. */
export interface SplitQ8_0 {
  quants: Uint32Array;
  scales: Float32Array;
}

/** Splits `blocks` GGUF Q8_0 blocks (f16 scale, 32 int8 quants) into the GPU layout. */
export function splitQ8_0(bytes: Uint8Array, blocks: number): SplitQ8_0 {
  if (bytes.byteLength < blocks * 34) throw new RangeError(`Q8_0 data holds ${bytes.byteLength} bytes, ${blocks * 34} needed`);
  const quantBytes = new Uint8Array(blocks * 32);
  const scales = new Float32Array(blocks);
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  for (let b = 0; b < blocks; b++) {
    scales[b] = f16ToF32(view.getUint16(b * 34, true));
    quantBytes.set(bytes.subarray(b * 34 + 2, b * 34 + 34), b * 32);
  }
  return { quants: new Uint32Array(quantBytes.buffer), scales };
}

/**
 * (cos, sin) of every RoPE angle: [positions][rotaryDim / 2] pairs, computed as the reference does (the angle
 * iterated in f32 as position * thetaScale^i, divided by the frequency factor when there is one; cos and sin of that
 * f32 angle, rounded to f32), so GPU rotations equal the reference's without GPU sin/cos approximations.
 */
export function ropeRotations(positions: number, rotaryDim: number, thetaScale: number, freqFactors?: Float32Array): Float32Array {
  const f = Math.fround;
  const half = rotaryDim / 2;
  const table = new Float32Array(positions * half * 2);
  for (let p = 0; p < positions; p++) {
    let theta = f(p);
    for (let i = 0; i < half; i++) {
      const angle = freqFactors ? f(theta / freqFactors[i]) : theta;
      table[(p * half + i) * 2] = Math.cos(angle);
      table[(p * half + i) * 2 + 1] = Math.sin(angle);
      theta = f(theta * thetaScale);
    }
  }
  return table;
}
