// WebGPU cases for GELU: values across the half range and both cut-offs; a grid folded into y (SigLIP's 4096 x 4304
// elements need it), tested cheaply with one-invocation workgroups.
import { grid } from "../webgpu/shaders.js";
import { randomF32 } from "../case.js";
import type { GpuKernelCase } from "../gpu-case.js";
import { geluRef } from "./gelu.ref.js";

function geluCase(count: number, scale: number, workgroupSize = 256): GpuKernelCase {
  return {
    name: `gelu n=${count} |x|<${scale}${workgroupSize !== 256 ? ` workgroup size ${workgroupSize}` : ""}`,
    tolerance: 1e-9, // the GPU's tanh is not correctly rounded, so a rare half rounding may go the other way
    build() {
      const x = randomF32(count, 9 + count, scale);
      if (count > 8) x.set([0, -0, 10, -10, 9.999, -9.999, 10.001, -10.001]);
      return {
        shader: { op: "gelu", constants: { WORKGROUP_SIZE: workgroupSize } },
        bindings: [{ name: "x", contents: x }],
        params: [["u32", count]],
        workgroups: grid(count, workgroupSize),
        expected: { x: geluRef(x) },
      };
    },
  };
}

export const cases: GpuKernelCase[] = [geluCase(7, 4), geluCase(4304, 8), geluCase(3 * 8192, 30), geluCase(65535 * 2 + 7, 12, 1)];
