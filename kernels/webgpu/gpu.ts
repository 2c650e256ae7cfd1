// Opens a WebGPU device through Dawn's Node bindings (npm `webgpu`): one adapter, the optional features the kernels
// use when present (shader-f16, subgroups), and the adapter's largest buffer limits. Without an adapter (no GPU
// and no Vulkan driver such as Mesa's lavapipe) it says why instead of throwing.
import { create, globals } from "webgpu";
import { isSoftwareAdapter } from "./adapter-kind.js";
import { shaderSource } from "./shaders.js";
import { gpuWait } from "./wait.js";

// NOTE: Dawn's GPU object must stay reachable while any device lives: if V8 collects it, the process crashes at
// random (dawn-gpu/node-webgpu#18). It lives here for the life of the process.
let instance: GPU | undefined;

function gpu(): GPU {
  if (!instance) {
    Object.assign(globalThis, globals); // GPUBufferUsage, GPUMapMode, GPUShaderStage as in a browser
    instance = create([]);
  }
  return instance;
}

/** What kind of adapter a device runs on. */
export interface GpuAdapterSummary {
  vendor: string;
  architecture: string;
  description: string;
  /** A CPU implementation (lavapipe, SwiftShader): for correctness, never for speed. */
  software: boolean;
}

/** An open device and what it can do. */
export interface GpuContext {
  device: GPUDevice;
  adapter: GpuAdapterSummary;
  /** `shader-f16` (f16 arithmetic in WGSL) is enabled on the device. */
  f16: boolean;
  /**
   * `subgroups` is enabled on the device and its subgroups are runs of consecutive invocations (probed with
   * kernels/subgroup_layout): the *_subgroup.wgsl kernels are usable.
   */
  subgroups: boolean;
  limits: { maxStorageBufferBindingSize: number; maxBufferSize: number; maxComputeWorkgroupsPerDimension: number; maxComputeWorkgroupStorageSize: number };
}

/** Why no device could be opened. */
export interface GpuUnavailable {
  unavailable: string;
}

/**
 * Opens a device on the first adapter Dawn offers (a hardware GPU when there is one, else a software Vulkan
 * driver). Resolves with the reason instead when there is no adapter or the device cannot be created.
 */
export async function openGpu(): Promise<GpuContext | GpuUnavailable> {
  let adapter: GPUAdapter | null;
  try {
    adapter = await gpu().requestAdapter({ powerPreference: "high-performance" });
  } catch (error) {
    return { unavailable: `WebGPU adapter request failed: ${(error as Error).message}` };
  }
  if (!adapter) {
    return { unavailable: "no WebGPU adapter: Dawn found no GPU and no Vulkan driver (on Debian bookworm: mesa-vulkan-drivers from bookworm-backports, see docs/install.md)" };
  }
  const info = adapter.info as GPUAdapterInfo & { isFallbackAdapter?: boolean };
  const wanted: GPUFeatureName[] = (["shader-f16", "subgroups"] as GPUFeatureName[]).filter((feature) => adapter.features.has(feature));
  const limits = {
    maxStorageBufferBindingSize: adapter.limits.maxStorageBufferBindingSize,
    maxBufferSize: adapter.limits.maxBufferSize,
    maxComputeWorkgroupsPerDimension: adapter.limits.maxComputeWorkgroupsPerDimension,
    maxComputeWorkgroupStorageSize: adapter.limits.maxComputeWorkgroupStorageSize,
  };
  let device: GPUDevice;
  try {
    device = await adapter.requestDevice({
      requiredFeatures: wanted,
      requiredLimits: { maxStorageBufferBindingSize: limits.maxStorageBufferBindingSize, maxBufferSize: limits.maxBufferSize },
    });
  } catch (error) {
    return { unavailable: `WebGPU device creation failed on ${info.description || info.vendor}: ${(error as Error).message}` };
  }
  return {
    device,
    adapter: {
      vendor: info.vendor,
      architecture: info.architecture,
      description: info.description,
      software: isSoftwareAdapter(info),
    },
    f16: device.features.has("shader-f16"),
    subgroups: device.features.has("subgroups") && await subgroupsAreConsecutive(device),
    limits,
  };
}

/**
 * Whether subgroups on `device` are runs of consecutive local invocation indices (what the subgroup kernels assume and
 * WebGPU leaves to the driver): one 64-invocation workgroup of kernels/subgroup_layout reports it per invocation.
 */
async function subgroupsAreConsecutive(device: GPUDevice): Promise<boolean> {
  const bytes = 64 * 4;
  const flags = device.createBuffer({ size: bytes, usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC });
  const readback = device.createBuffer({ size: bytes, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST });
  try {
    device.pushErrorScope("validation");
    const module = device.createShaderModule({ label: "subgroup_layout.wgsl", code: shaderSource("subgroup_layout") });
    const pipeline = device.createComputePipeline({ label: "subgroup_layout", layout: "auto", compute: { module, entryPoint: "main" } });
    const encoder = device.createCommandEncoder();
    const pass = encoder.beginComputePass();
    pass.setPipeline(pipeline);
    pass.setBindGroup(0, device.createBindGroup({ layout: pipeline.getBindGroupLayout(0), entries: [{ binding: 0, resource: { buffer: flags } }] }));
    pass.dispatchWorkgroups(1);
    pass.end();
    encoder.copyBufferToBuffer(flags, 0, readback, 0, bytes);
    device.queue.submit([encoder.finish()]);
    if (await gpuWait(device.popErrorScope())) return false;
    await gpuWait(readback.mapAsync(GPUMapMode.READ));
    return new Uint32Array(readback.getMappedRange()).every((ok) => ok === 1);
  } catch {
    return false; // a driver that cannot run the probe gets the workgroup-memory kernels
  } finally {
    flags.destroy();
    readback.destroy();
  }
}

/** Why no device can be opened here, or undefined when one can (the probe's device is destroyed again). */
export async function gpuUnavailable(): Promise<string | undefined> {
  const opened = await openGpu();
  if ("unavailable" in opened) return opened.unavailable;
  opened.device.destroy();
  return undefined;
}
