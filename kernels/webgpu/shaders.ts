// WGSL sources and compiled pipelines: kernels/<op>/<file>.wgsl read once, compiled per set of override constants,
// with compilation errors turned into exceptions that quote the compiler's messages.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { PACKAGE_ROOT } from "../package-root.js";
import { gpuWait } from "./wait.js";

/** Where a kernel's WGSL lives: kernels/<op>/<file>.wgsl (file defaults to op). */
export interface ShaderRef {
  op: string;
  file?: string;
  /** Values for the shader's `override` declarations. */
  constants?: Record<string, number>;
}

/** A shader that Dawn rejected, with the compiler's messages. */
export class ShaderCompileError extends Error {
  override readonly name = "ShaderCompileError";
}

const sources = new Map<string, string>();

/**
 * The WGSL text of a kernel, with each line `//#include <name>` replaced by kernels/webgpu/<name>.wgsl (WGSL has no
 * includes; shared helpers such as the half conversions live there once).
 */
export function shaderSource(op: string, file = op): string {
  const path = join(PACKAGE_ROOT, "kernels", op, `${file}.wgsl`);
  let source = sources.get(path);
  if (source === undefined) {
    source = readFileSync(path, "utf8").replace(/^\/\/#include ([\w-]+)$/gm, (_, name: string) => readFileSync(join(PACKAGE_ROOT, "kernels", "webgpu", `${name}.wgsl`), "utf8"));
    sources.set(path, source);
  }
  return source;
}

/** Compute pipelines by shader and constants, created once per device. */
export class PipelineCache {
  private readonly pipelines = new Map<string, Promise<GPUComputePipeline>>();

  constructor(private readonly device: GPUDevice) {}

  /** The pipeline of `shader` (entry point `main`, layout derived from the shader). */
  get(shader: ShaderRef): Promise<GPUComputePipeline> {
    const file = shader.file ?? shader.op;
    const key = `${shader.op}/${file}:${JSON.stringify(shader.constants ?? {})}`;
    let pipeline = this.pipelines.get(key);
    if (!pipeline) {
      pipeline = this.compile(shader.op, file, shader.constants ?? {});
      this.pipelines.set(key, pipeline);
    }
    return pipeline;
  }

  private async compile(op: string, file: string, constants: Record<string, number>): Promise<GPUComputePipeline> {
    const module = this.device.createShaderModule({ label: `${op}/${file}.wgsl`, code: shaderSource(op, file) });
    const info = await gpuWait(module.getCompilationInfo());
    const errors = info.messages.filter((message) => message.type === "error");
    if (errors.length > 0) {
      throw new ShaderCompileError(`kernels/${op}/${file}.wgsl does not compile: ${errors.map((m) => `${m.lineNum}:${m.linePos} ${m.message}`).join("; ")}`);
    }
    this.device.pushErrorScope("validation");
    const pipeline = await gpuWait(this.device.createComputePipelineAsync({ label: `${op}/${file}`, layout: "auto", compute: { module, entryPoint: "main", constants } }))
      .catch((error: Error) => error);
    const validation = await gpuWait(this.device.popErrorScope());
    if (pipeline instanceof Error || validation) {
      const message = pipeline instanceof Error ? pipeline.message : validation!.message;
      throw new ShaderCompileError(`kernels/${op}/${file}.wgsl with ${JSON.stringify(constants)}: ${message}`);
    }
    return pipeline;
  }
}

/** Workgroup counts for `invocations` one-dimensional invocations, folded into y past the per-dimension limit. */
export function grid(invocations: number, workgroupSize: number, maxPerDimension = 65535): [number, number] {
  const groups = Math.max(1, Math.ceil(invocations / workgroupSize));
  if (groups <= maxPerDimension) return [groups, 1];
  const y = Math.ceil(groups / maxPerDimension);
  return [Math.ceil(groups / y), y];
}
