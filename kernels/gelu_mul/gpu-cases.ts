// WebGPU cases for the GeGLU gate: values across the half range and both cut-offs.
import { grid } from "../webgpu/shaders.js";
import { randomF32 } from "../case.js";
import type { GpuKernelCase } from "../gpu-case.js";
import { geluMulRef } from "./gelu_mul.ref.js";

function geluMulCase(count: number, scale: number): GpuKernelCase {
  return {
    name: `gelu_mul n=${count} |gate|<${scale}`,
    tolerance: 1e-9, // the GPU's tanh is not correctly rounded, so a rare half rounding may go the other way
    build() {
      const gate = randomF32(count, 5 + count, scale);
      const up = randomF32(count, 6 + count, 2);
      if (count > 8) gate.set([0, -0, 10, -10, 9.999, -9.999, 10.001, -10.001]);
      return {
        shader: { op: "gelu_mul" },
        bindings: [{ name: "gate", contents: gate }, { name: "up", contents: up }],
        params: [["u32", count], ["u32", 0]],
        workgroups: grid(count, 256),
        expected: { gate: geluMulRef(gate, up) },
      };
    },
  };
}

export const cases: GpuKernelCase[] = [geluMulCase(7, 4), geluMulCase(1536, 8), geluMulCase(3 * 8192, 30)];
