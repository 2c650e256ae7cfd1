// Which models the WebGPU backend runs (no Dawn import: the loader asks before choosing a backend).
import type { Architecture, ModelConfig } from "../../model/config.js";

/** The architectures the WebGPU runner implements; the others run on WebAssembly only for now. */
export const WEBGPU_ARCHITECTURES: ReadonlySet<Architecture> = new Set<Architecture>(["llama", "qwen2", "qwen3", "gemma3"]);

/** Why the WebGPU runner cannot run a model of `config` (its architecture, or a feature its kernels lack); undefined when it can. */
export function webGpuUnsupported(config: ModelConfig): string | undefined {
  if (!WEBGPU_ARCHITECTURES.has(config.architecture)) return `the WebGPU backend does not run ${config.architecture} yet`;
  if (config.rope_yarn) return "the WebGPU backend does not run YaRN RoPE scaling yet";
  if (config.attention_scale !== undefined) return "the WebGPU backend does not take a file's attention.scale yet";
  return undefined;
}
