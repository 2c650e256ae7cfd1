// WebGPU cases for the SwiGLU gate, with gate values far enough out that e^-g overflows.
import { grid } from "../webgpu/shaders.js";
import { randomF32 } from "../case.js";
import type { GpuKernelCase } from "../gpu-case.js";
import { siluMulRef } from "./silu_mul.ref.js";

function siluMulCase(count: number, scale: number): GpuKernelCase {
  return {
    name: `silu_mul n=${count} |gate|<${scale}`,
    tolerance: 1e-11, // the GPU's exp and division are not correctly rounded
    build() {
      const gate = randomF32(count, 5 + count, scale);
      const up = randomF32(count, 6 + count, 2);
      return {
        shader: { op: "silu_mul" },
        bindings: [{ name: "gate", contents: gate }, { name: "up", contents: up }],
        params: [["u32", count]],
        workgroups: grid(count, 256),
        expected: { gate: siluMulRef(gate, up) },
      };
    },
  };
}

export const cases: GpuKernelCase[] = [siluMulCase(7, 4), siluMulCase(1536, 8), siluMulCase(3 * 8192, 8), siluMulCase(4096, 120)];
