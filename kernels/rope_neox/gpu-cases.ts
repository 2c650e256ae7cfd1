// WebGPU cases for rope_neox: tiny heads, partial rotary dims, Llama 3 frequency factors, large positions, model
// shapes, YaRN (gpt-oss's and Mistral 3's scaling: mixed angles, cos and sin times mscale). The rotation table is the
// host's (kernels/webgpu/layouts.ts), built for every position used.
import { ropeRotations } from "../webgpu/layouts.js";
import { NO_YARN, type YarnConstants, yarnConstants } from "../rope-frequencies.js";
import { grid } from "../webgpu/shaders.js";
import { randomF32, randomInts } from "../case.js";
import type { GpuKernelCase } from "../gpu-case.js";
import { ropeNeoxRef } from "./rope_neox.ref.js";

function ropeCase(rows: number, heads: number, headDim: number, rotaryDim: number, base: number, withFactors: boolean, maxPosition = 4096, yarnFactor?: number): GpuKernelCase {
  return {
    name: `rope_neox rows=${rows} heads=${heads} headDim=${headDim} rotaryDim=${rotaryDim}${withFactors ? " freqFactors" : ""}${yarnFactor ? ` yarn x${yarnFactor}` : ""}`,
    // The table holds the reference's own cos/sin; only a fused multiply-add may round differently.
    tolerance: 1e-13,
    build() {
      const x = randomF32(rows * heads * headDim, rows * heads + headDim, 2);
      const positions = randomInts(rows, rows + 1, maxPosition);
      positions[0] = 0;
      const factors = withFactors ? Float32Array.from({ length: rotaryDim / 2 }, (_, i) => 1 + (i % 5) * 1.75) : undefined;
      const thetaScale = Math.fround(Math.pow(base, -2 / rotaryDim));
      const freqScale = yarnFactor ? Math.fround(1 / yarnFactor) : 1;
      const yarn: YarnConstants = yarnFactor
        ? yarnConstants({ factor: yarnFactor, originalContext: 4096, betaFast: 32, betaSlow: 1, logMultiplier: 0, attnFactor: 1 }, base, rotaryDim)
        : NO_YARN;
      const expected = ropeNeoxRef(Float32Array.from(x), positions, factors, rows, heads, headDim, rotaryDim, thetaScale, freqScale, yarn);
      return {
        shader: { op: "rope_neox" },
        bindings: [
          { name: "x", contents: x }, { name: "positions", contents: positions },
          { name: "rotations", contents: ropeRotations(Math.max(...positions) + 1, rotaryDim, thetaScale, factors, freqScale, yarn) },
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
  ropeCase(5, 4, 64, 64, 150000, false, 40000, 32), ropeCase(3, 2, 16, 16, 1000000, false, 4096, 4),
];
