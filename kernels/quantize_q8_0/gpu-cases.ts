// WebGPU cases for activation quantization to Q8_0: byte for byte as the GGUF encoder, in the GPU layout. Inputs
// include all-zero blocks, exact .5 ties after scaling, and tiny values whose scales are f16 subnormals.
import { grid } from "../webgpu/shaders.js";
import { splitQ8_0 } from "../webgpu/layouts.js";
import { randomF32 } from "../case.js";
import type { GpuKernelCase } from "../gpu-case.js";
import { quantizeQ8_0Ref } from "./quantize_q8_0.ref.js";

function quantizeCase(label: string, values: () => Float32Array): GpuKernelCase {
  return {
    name: `quantize_q8_0 ${label}`,
    tolerance: 0,
    build() {
      const x = values();
      const blocks = x.length / 32;
      const { quants, scales } = splitQ8_0(quantizeQ8_0Ref(x), blocks);
      return {
        shader: { op: "quantize_q8_0" },
        bindings: [{ name: "x", contents: x }, { name: "quants", contents: { bytes: blocks * 32 } }, { name: "scales", contents: { bytes: blocks * 4 } }],
        params: [["u32", blocks]],
        workgroups: grid(blocks, 64),
        expected: { quants, scales },
      };
    },
  };
}

/** Blocks whose values land exactly on .5 after scaling by 127 / amax (ties must go away from zero). */
function ties(blocks: number): Float32Array {
  const x = new Float32Array(blocks * 32);
  for (let b = 0; b < blocks; b++) {
    x[b * 32] = 127;
    for (let i = 1; i < 32; i++) x[b * 32 + i] = ((i % 2 ? 1 : -1) * (i + 0.5)) % 127;
  }
  return x;
}

export const cases: GpuKernelCase[] = [
  quantizeCase("1 block", () => randomF32(32, 1, 3)),
  quantizeCase("576 wide x 3 rows", () => randomF32(576 * 3, 2, 5)),
  quantizeCase("zero blocks", () => new Float32Array(64)),
  quantizeCase("ties", () => ties(4)),
  quantizeCase("subnormal scales", () => randomF32(32 * 8, 3, 1e-5)),
  quantizeCase("8192 wide x 2 rows", () => randomF32(8192 * 2, 4, 40)),
];
