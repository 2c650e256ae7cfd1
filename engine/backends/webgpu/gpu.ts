// Opens a WebGPU device through Dawn's Node bindings (npm `webgpu`): one adapter, the optional features the kernels
// use when present (shader-f16, subgroups), and the adapter's largest buffer limits. Without an adapter (no GPU
// and no Vulkan driver such as Mesa's lavapipe) it says why instead of throwing.
import { create, globals } from "webgpu";

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
  /** `subgroups` (subgroupAdd and friends) is enabled on the device. */
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
    return { unavailable: "no WebGPU adapter: Dawn found no GPU and no Vulkan driver (on Debian bookworm: mesa-vulkan-drivers from bookworm-backports, see README)" };
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
      software: info.isFallbackAdapter === true || info.architecture === "software" || /llvmpipe|lavapipe|swiftshader/i.test(info.description),
    },
    f16: device.features.has("shader-f16"),
    subgroups: device.features.has("subgroups"),
    limits,
  };
}

/** Why no device can be opened here, or undefined when one can (the probe's device is destroyed again). */
export async function gpuUnavailable(): Promise<string | undefined> {
  const opened = await openGpu();
  if ("unavailable" in opened) return opened.unavailable;
  opened.device.destroy();
  return undefined;
}
