// WebGPU cases for gpt-oss's expert activation: gates and ups past the clamp limit (7) on both sides, and gates far
// enough out that e^(-alpha x) overflows.
import { grid } from "../webgpu/shaders.js";
import { randomF32 } from "../case.js";
import type { GpuKernelCase } from "../gpu-case.js";
import { swigluOaiRef } from "./swiglu_oai.ref.js";

const ALPHA = Math.fround(1.702);
const LIMIT = 7;

function swigluOaiCase(count: number, scale: number): GpuKernelCase {
  return {
    name: `swiglu_oai n=${count} |gate|,|up|<${scale}`,
    tolerance: 1e-11, // the GPU's exp and division are not correctly rounded
    build() {
      const gate = randomF32(count, 9 + count, scale);
      const up = randomF32(count, 10 + count, scale);
      return {
        shader: { op: "swiglu_oai" },
        bindings: [{ name: "gate", contents: gate }, { name: "up", contents: up }],
        params: [["u32", count], ["f32", ALPHA], ["f32", LIMIT]],
        workgroups: grid(count, 256),
        expected: { gate: swigluOaiRef(gate, up, ALPHA, LIMIT) },
      };
    },
  };
}

export const cases: GpuKernelCase[] = [swigluOaiCase(7, 4), swigluOaiCase(1536, 12), swigluOaiCase(4096, 120)];
