// The shape of a WebGPU conformance case (what every kernels/<op>/gpu-cases.ts exports). The harness
// (webgpu-conformance.test.ts) creates the case's buffers in binding order, dispatches the WGSL kernel once and
// compares what it wrote with the plain-TypeScript reference's expectation.
import type { ShaderRef } from "./webgpu/shaders.js";
import type { DispatchParam } from "./webgpu/step-encoder.js";
import type { CaseBuffer, HostArray } from "./case.js";


/** Everything needed to run one GPU case and check it. */
export interface GpuCaseSetup {
  shader: ShaderRef;
  /** Storage buffers in binding order from 0: initial contents, or a size (outputs start as NaN bits). */
  bindings: Array<{ name: string; contents: CaseBuffer }>;
  /** The `Params` uniform, bound right after the storage buffers. */
  params: DispatchParam[];
  /** Workgroups to dispatch (x, y). */
  workgroups: [number, number];
  /** Expected final contents of every buffer the kernel writes. */
  expected: Record<string, HostArray>;
  /** Kernels dispatched after the first in the same submission (a kernel and its merge step), on named bindings. */
  then?: Array<{ shader: ShaderRef; bindings: string[]; params: DispatchParam[]; workgroups: [number, number] }>;
}

/** One WebGPU conformance case. */
export interface GpuKernelCase {
  /** Shown as the test name, e.g. "matmul f16 rows=3 k=1024 n=3072". */
  name: string;
  /** Largest normalised mean squared error allowed; 0 demands byte-identical output. */
  tolerance: number;
  /** An optional device feature the kernel needs (its WGSL `enable`s it); without it the case is skipped. */
  requires?: "subgroups";
  build(): GpuCaseSetup;
}
