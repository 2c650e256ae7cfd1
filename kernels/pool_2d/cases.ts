// Conformance cases for pool_2d: Gemma 3's 64 x 64 patches pooled 4 x 4 over 1152 channels, odd channel counts (the
// vector and scalar tails), non-square grids, windows of area 9, a grid that is not a multiple of k, k = 1.
import { type CaseSetup, type KernelCase, randomF32 } from "../case.js";
import { pool2dRef } from "./pool_2d.ref.js";

function poolCase(height: number, width: number, channels: number, k: number): KernelCase {
  const tokens = Math.floor(height / k) * Math.floor(width / k);
  return {
    name: `pool_2d ${height}x${width} k=${k} channels=${channels}`,
    tolerance: 0, // the same f32 additions in the same order, and one correctly rounded division
    build(): CaseSetup {
      const x = randomF32(height * width * channels, height * width + channels, 3);
      x[0] = -0; // 0 + -0 is +0: the sum starts from zero, as ggml's does
      return {
        kernel: "pool_2d",
        buffers: { x, out: { bytes: tokens * channels * 4 } },
        args: ["x", "out", height, width, channels, k],
        count: tokens,
        expected: { out: pool2dRef(x, height, width, channels, k) },
      };
    },
  };
}

export const cases: KernelCase[] = [
  poolCase(64, 64, 1152, 4), poolCase(2, 2, 1, 2), poolCase(4, 4, 3, 1), poolCase(6, 9, 7, 3), poolCase(8, 12, 21, 4),
  poolCase(7, 5, 19, 2), poolCase(16, 16, 36, 8),
];
