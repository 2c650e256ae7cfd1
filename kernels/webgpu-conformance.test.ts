// The WGSL kernels against their plain-TypeScript references: discovers every kernels/<op>/gpu-cases.ts, runs each
// case on the WebGPU device (a hardware GPU, or Mesa's lavapipe on a CPU) and compares every written buffer by NMSE
// under the case's tolerance (0 = byte-identical). Outputs start as NaN bits so that unwritten elements fail.
// Without an adapter the cases skip with the reason in their group's title, except under CI=true, where they fail. Cases for an
// optional feature (subgroups) skip on adapters without it.
// KERNELS_REPORT=1 npx vitest run kernels/webgpu  prints every measured NMSE.
import { existsSync, readdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { type GpuContext, openGpu } from "./webgpu/gpu.js";
import { failIfMissing, skipOutsideCi, titled } from "./testing/environment.js";
import { PipelineCache } from "./webgpu/shaders.js";
import type { HostArray } from "./case.js";
import { nmse } from "./nmse.js";
import { StepEncoder } from "./webgpu/step-encoder.js";
import { gpuWait } from "./webgpu/wait.js";
import type { GpuCaseSetup, GpuKernelCase } from "./gpu-case.js";

const kernelsDir = dirname(fileURLToPath(import.meta.url));
const ops = readdirSync(kernelsDir, { withFileTypes: true })
  .filter((entry) => entry.isDirectory() && existsSync(join(kernelsDir, entry.name, "gpu-cases.ts")))
  .map((entry) => entry.name)
  .sort();
const casesByOp = new Map<string, GpuKernelCase[]>();
for (const op of ops) casesByOp.set(op, ((await import(pathToFileURL(join(kernelsDir, op, "gpu-cases.ts")).href)) as { cases: GpuKernelCase[] }).cases);

const opened = await openGpu();
const gpu: GpuContext | undefined = "device" in opened ? opened : undefined;
const skipReason = "unavailable" in opened ? opened.unavailable : undefined;
const pipelines = gpu ? new PipelineCache(gpu.device) : undefined;
afterAll(() => gpu?.device.destroy());

it.skipIf(skipOutsideCi(skipReason))(titled("has a WebGPU adapter (required under CI)", skipReason), () => {
  failIfMissing(skipReason);
  console.log(`WebGPU adapter: ${gpu!.adapter.description} (${gpu!.adapter.software ? "software" : "hardware"}), shader-f16 ${gpu!.f16}, subgroups ${gpu!.subgroups}`);
});

it("finds WGSL kernels with conformance cases", () => {
  expect(ops).toEqual(expect.arrayContaining(["add", "matmul", "rmsnorm"]));
});

const roundUp4 = (bytes: number) => Math.max(4, Math.ceil(bytes / 4) * 4);

/** Runs a case once on the device; returns the contents of its expected buffers. */
async function runCase(context: GpuContext, setup: GpuCaseSetup): Promise<Record<string, Uint8Array>> {
  const { device } = context;
  const pipeline = await pipelines!.get(setup.shader);
  const buffers = setup.bindings.map(({ name, contents }) => {
    const bytes = ArrayBuffer.isView(contents) ? contents.byteLength : (contents as { bytes: number }).bytes;
    const buffer = device.createBuffer({ label: name, size: roundUp4(bytes), usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST, mappedAtCreation: true });
    const mapped = new Uint8Array(buffer.getMappedRange());
    if (ArrayBuffer.isView(contents)) mapped.set(new Uint8Array(contents.buffer, contents.byteOffset, contents.byteLength));
    else mapped.fill(0xff);
    buffer.unmap();
    return { name, buffer };
  });
  const readbacks = Object.keys(setup.expected).map((name) => {
    const source = buffers.find((b) => b.name === name);
    if (!source) throw new Error(`expected buffer ${name} is not bound`);
    return { name, source: source.buffer, readback: device.createBuffer({ size: source.buffer.size, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST }) };
  });
  // The runner's own encoder: parameters in its uniform slot, then copies of the outputs for reading back.
  const encoder = new StepEncoder(device, 1 + (setup.then?.length ?? 0));
  device.pushErrorScope("validation");
  const step = encoder.begin();
  step.dispatch(pipeline, buffers.map(({ buffer }) => buffer), setup.params, setup.workgroups);
  for (const next of setup.then ?? []) {
    const bound = next.bindings.map((name) => {
      const found = buffers.find((b) => b.name === name);
      if (!found) throw new Error(`binding ${name} of a follow-up dispatch is not among the case's buffers`);
      return found.buffer;
    });
    step.dispatch(await pipelines!.get(next.shader), bound, next.params, next.workgroups);
  }
  for (const { source, readback } of readbacks) step.copy(source, readback, source.size);
  step.submit();
  const error = await gpuWait(device.popErrorScope());
  if (error) throw new Error(`validation: ${error.message}`);
  const out: Record<string, Uint8Array> = {};
  for (const { name, readback } of readbacks) {
    await gpuWait(readback.mapAsync(GPUMapMode.READ));
    out[name] = new Uint8Array(readback.getMappedRange().slice(0));
    readback.destroy();
  }
  for (const { buffer } of buffers) buffer.destroy();
  encoder.params.destroy();
  return out;
}

function compare(name: string, actualBytes: Uint8Array, expected: HostArray, tolerance: number, label: string): void {
  const expectedBytes = new Uint8Array(expected.buffer, expected.byteOffset, expected.byteLength);
  if (tolerance === 0) {
    const first = expectedBytes.findIndex((byte, i) => byte !== actualBytes[i]);
    expect(first, `${name} differs from the reference first at byte ${first}`).toBe(-1);
    return;
  }
  const Constructor = expected.constructor as new (buffer: ArrayBufferLike, offset: number, length: number) => HostArray;
  const actual = new Constructor(actualBytes.buffer, actualBytes.byteOffset, expected.length);
  const error = nmse(actual, expected);
  if (process.env.KERNELS_REPORT) console.log(`${label} ${name}: NMSE ${error.toExponential(2)} (tolerance ${tolerance})`);
  expect(Number.isNaN(error) ? Infinity : error, `${name} NMSE`).toBeLessThanOrEqual(tolerance);
}

for (const [op, cases] of casesByOp) {
  describe.skipIf(skipOutsideCi(skipReason))(titled(`${op} (WGSL)`, skipReason), () => {
    for (const kernelCase of cases) {
      const missing = kernelCase.requires === "subgroups" && gpu && !gpu.subgroups;
      it.skipIf(missing)(kernelCase.name + (missing ? " (skipped: this adapter has no usable subgroups)" : ""), async () => {
        failIfMissing(skipReason);
        const setup = kernelCase.build();
        const written = await runCase(gpu!, setup);
        for (const [name, expected] of Object.entries(setup.expected)) compare(name, written[name], expected, kernelCase.tolerance, kernelCase.name);
      });
    }
  });
}
