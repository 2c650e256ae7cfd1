// Which models the WebGPU backend runs (no Dawn import: the loader asks before choosing a backend).
import type { Architecture, ModelConfig } from "../../model/config.js";

/** The architectures the WebGPU runner implements; the others run on WebAssembly only for now. */
export const WEBGPU_ARCHITECTURES: ReadonlySet<Architecture> = new Set<Architecture>(["llama", "qwen2", "qwen3", "gemma3", "gemma4", "mistral3", "qwen3moe", "gpt-oss"]);

/** Why the WebGPU runner cannot run a model of `config` (its architecture, or a feature its kernels lack); undefined when it can. */
export function webGpuUnsupported(config: ModelConfig): string | undefined {
  if (!WEBGPU_ARCHITECTURES.has(config.architecture)) return `the WebGPU backend does not run ${config.architecture} yet`;
  return undefined;
}
