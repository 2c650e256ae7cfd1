// WebGPU cases for pool_2d: Gemma 3's 64 x 64 patches pooled 4 x 4 over 1152 channels, odd sizes, area-9 windows, a
// grid that is not a multiple of k, k = 1.
import { grid } from "../webgpu/shaders.js";
import { randomF32 } from "../case.js";
import type { GpuKernelCase } from "../gpu-case.js";
import { pool2dRef } from "./pool_2d.ref.js";

function poolCase(height: number, width: number, channels: number, k: number): GpuKernelCase {
  const count = Math.floor(height / k) * Math.floor(width / k) * channels;
  const powerOfTwo = ((k * k) & (k * k - 1)) === 0;
  return {
    name: `pool_2d ${height}x${width} k=${k} channels=${channels}`,
    // The same f32 additions in the same order; WGSL lets a GPU divide to 2.5 ulp (exact by a power of two).
    tolerance: powerOfTwo ? 0 : 1e-13,
    build() {
      const x = randomF32(height * width * channels, height * width + channels, 3);
      return {
        shader: { op: "pool_2d" },
        bindings: [{ name: "x", contents: x }, { name: "out", contents: { bytes: count * 4 } }],
        params: [["u32", height], ["u32", width], ["u32", channels], ["u32", k]],
        workgroups: grid(count, 256),
        expected: { out: pool2dRef(x, height, width, channels, k) },
      };
    },
  };
}

export const cases: GpuKernelCase[] = [
  poolCase(64, 64, 1152, 4), poolCase(2, 2, 1, 2), poolCase(4, 4, 3, 1), poolCase(6, 9, 7, 3), poolCase(7, 5, 19, 2),
];
