// WebGPU cases for rope_neox: tiny heads, partial rotary dims, Llama 3 frequency factors, large positions, model
// shapes. The rotation table is the host's (kernels/webgpu/layouts.ts), built for every position used.
import { ropeRotations } from "../webgpu/layouts.js";
import { grid } from "../webgpu/shaders.js";
import { randomF32, randomInts } from "../case.js";
import type { GpuKernelCase } from "../gpu-case.js";
import { ropeNeoxRef } from "./rope_neox.ref.js";

function ropeCase(rows: number, heads: number, headDim: number, rotaryDim: number, base: number, withFactors: boolean, maxPosition = 4096): GpuKernelCase {
  return {
    name: `rope_neox rows=${rows} heads=${heads} headDim=${headDim} rotaryDim=${rotaryDim}${withFactors ? " freqFactors" : ""}`,
    // The table holds the reference's own cos/sin; only a fused multiply-add may round differently.
    tolerance: 1e-13,
    build() {
      const x = randomF32(rows * heads * headDim, rows * heads + headDim, 2);
      const positions = randomInts(rows, rows + 1, maxPosition);
      positions[0] = 0;
      const factors = withFactors ? Float32Array.from({ length: rotaryDim / 2 }, (_, i) => 1 + (i % 5) * 1.75) : undefined;
      const thetaScale = Math.fround(Math.pow(base, -2 / rotaryDim));
      const expected = ropeNeoxRef(Float32Array.from(x), positions, factors, rows, heads, headDim, rotaryDim, thetaScale);
      return {
        shader: { op: "rope_neox" },
        bindings: [
          { name: "x", contents: x }, { name: "positions", contents: positions },
          { name: "rotations", contents: ropeRotations(Math.max(...positions) + 1, rotaryDim, thetaScale, factors) },
        ],
        params: [["u32", rows], ["u32", heads], ["u32", headDim], ["u32", rotaryDim]],
        workgroups: grid(rows * heads * (rotaryDim / 2), 256),
        expected: { x: expected },
      };
    },
  };
}

export const cases: GpuKernelCase[] = [
  ropeCase(1, 1, 8, 8, 10000, false), ropeCase(3, 2, 8, 8, 10000, false), ropeCase(5, 3, 16, 12, 10000, false),
  ropeCase(4, 4, 64, 32, 10000, true), ropeCase(1, 16, 128, 128, 1000000, false, 40000), ropeCase(7, 8, 128, 128, 500000, true),
  ropeCase(33, 16, 64, 64, 10000, false),
];
