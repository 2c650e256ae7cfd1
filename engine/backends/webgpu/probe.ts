// Finds out, without a word on this process's stderr, whether WebGPU has a hardware GPU here (the `auto` backend's
// question). Dawn prints warnings from native code as soon as it enumerates adapters ("Warning:
// maxDynamicUniformBuffersPerPipelineLayout artificially reduced from 1000000 to 16 ...", for lavapipe and real GPUs
// alike) and JavaScript cannot silence them, so the adapters are enumerated in a child process whose stderr is not
// the user's. Only when it finds a hardware GPU does this process open Dawn itself.
import { spawn } from "node:child_process";
import { readdirSync } from "node:fs";
import { createRequire } from "node:module";
import { pathToFileURL } from "node:url";
import { type AdapterIdentity, isSoftwareAdapter } from "../../../kernels/webgpu/adapter-kind.js";

/** What the probe found. */
export interface GpuProbe {
  /** A hardware GPU adapter is there: `auto` runs on WebGPU. */
  hardware: boolean;
  /** The adapter Dawn would pick (high-performance first), when it found one. */
  adapter?: AdapterIdentity & { software: boolean };
  /** Why there is no hardware GPU, in words. */
  reason?: string;
}

/** Options of {@link probeGpu} (tests change them). */
export interface GpuProbeOptions {
  /** Linux: the folder holding GPU device nodes (default /dev). */
  deviceDirectory?: string;
  /** How long the child may take before it is stopped (default 20 s). */
  timeoutMs?: number;
}

/**
 * Device nodes through which Linux drivers reach a GPU: DRM render nodes (Mesa's Vulkan drivers: AMD, Intel, virtio),
 * the NVIDIA driver's nodes, and WSL's /dev/dxg (Mesa's dozen driver). Without any, no Vulkan driver but a CPU one can run.
 */
const LINUX_GPU_NODES = /^(renderD\d+|nvidia\d+|dxg)$/;

/** The GPU device nodes under `directory` (none if it cannot be read). */
export function linuxGpuNodes(directory = "/dev"): string[] {
  const names = (folder: string) => {
    try {
      return readdirSync(folder);
    } catch {
      return [];
    }
  };
  return [...names(directory), ...names(`${directory}/dri`)].filter((name) => LINUX_GPU_NODES.test(name));
}

/** The child's program: asks Dawn for the high-performance adapter and prints what it is as JSON on stdout. */
const CHILD_SOURCE = `
const { create } = await import(process.argv[1]);
const adapter = await create([]).requestAdapter({ powerPreference: "high-performance" });
const info = adapter?.info;
process.stdout.write(JSON.stringify(info ? { vendor: info.vendor, architecture: info.architecture, description: info.description, isFallbackAdapter: info.isFallbackAdapter === true } : null));
process.exit(0);
`;

/**
 * Whether a hardware GPU adapter is present, found without printing anything here. On Linux a machine without GPU device
 * nodes is answered at once (Dawn is never loaded); elsewhere Dawn enumerates adapters in a child process.
 */
export async function probeGpu(options: GpuProbeOptions = {}): Promise<GpuProbe> {
  if (process.platform === "linux" && linuxGpuNodes(options.deviceDirectory).length === 0) {
    return { hardware: false, reason: `no GPU device node (${options.deviceDirectory ?? "/dev"}/dri/renderD*, nvidia*, dxg)` };
  }
  let dawn: string;
  try {
    dawn = pathToFileURL(createRequire(import.meta.url).resolve("webgpu")).href;
  } catch (error) {
    return { hardware: false, reason: `Dawn (npm webgpu) is not installed: ${(error as Error).message}` };
  }
  const answer = await runChild(dawn, options.timeoutMs ?? 20_000);
  if ("failed" in answer) return { hardware: false, reason: answer.failed };
  if (answer.adapter === null) return { hardware: false, reason: "Dawn found no WebGPU adapter" };
  const adapter = { ...answer.adapter, software: isSoftwareAdapter(answer.adapter) };
  return adapter.software ? { hardware: false, adapter, reason: `the only adapter is a CPU implementation (${adapter.description})` } : { hardware: true, adapter };
}

/** Runs the child; its stderr (Dawn's warnings) is read and dropped, and quoted only when it fails. */
function runChild(dawn: string, timeoutMs: number): Promise<{ adapter: AdapterIdentity | null } | { failed: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ["--input-type=module", "-e", CHILD_SOURCE, dawn], { stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk: Buffer) => { stdout += chunk; });
    child.stderr.on("data", (chunk: Buffer) => { stderr += chunk; });
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill("SIGKILL");
    }, timeoutMs);
    child.on("error", (error) => {
      clearTimeout(timer);
      resolve({ failed: `the GPU probe could not start: ${error.message}` });
    });
    child.on("close", (code, signal) => {
      clearTimeout(timer);
      const lastLine = stderr.trim().split("\n").at(-1) ?? "";
      if (timedOut) return resolve({ failed: `the GPU probe gave no answer within ${timeoutMs / 1000} s` });
      if (code !== 0) return resolve({ failed: `the GPU probe failed (${signal ?? `exit ${code}`})${lastLine ? `: ${lastLine}` : ""}` });
      try {
        resolve({ adapter: JSON.parse(stdout) as AdapterIdentity | null });
      } catch {
        resolve({ failed: `the GPU probe answered ${JSON.stringify(stdout.slice(0, 200))}` });
      }
    });
  });
}
