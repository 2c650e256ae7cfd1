// Every pipeline a WebGPU owner dispatches, compiled up front (in parallel) so that its passes never wait on the
// shader compiler, then looked up synchronously by shader and constants.
import { PipelineCache, type ShaderRef } from "../../../kernels/webgpu/shaders.js";

function shaderKey(shader: ShaderRef): string {
  return `${shader.op}/${shader.file ?? shader.op}:${JSON.stringify(shader.constants ?? {})}`;
}

/** Compiled pipelines by shader. */
export class CompiledPipelines {
  private constructor(private readonly pipelines: ReadonlyMap<string, GPUComputePipeline>) {}

  /** Compiles each distinct shader of `shaders` on `device`. @throws ShaderCompileError for one that does not compile. */
  static async compile(device: GPUDevice, shaders: readonly ShaderRef[]): Promise<CompiledPipelines> {
    const cache = new PipelineCache(device);
    const unique = new Map(shaders.map((shader) => [shaderKey(shader), shader]));
    const pipelines = new Map<string, GPUComputePipeline>();
    await Promise.all([...unique].map(async ([key, shader]) => pipelines.set(key, await cache.get(shader))));
    return new CompiledPipelines(pipelines);
  }

  /** The pipeline of a shader compiled up front. @throws Error for one that was not. */
  get(shader: ShaderRef): GPUComputePipeline {
    const pipeline = this.pipelines.get(shaderKey(shader));
    if (!pipeline) throw new Error(`no pipeline was compiled for ${shaderKey(shader)}`);
    return pipeline;
  }
}
