// Which models the WebGPU backend runs (no Dawn import: the loader asks before choosing a backend).
import type { Architecture, ModelConfig } from "../../model/config.js";
import { GgmlType, ggmlTypeName } from "../../../kernels/formats/types.js";

/** The architectures the WebGPU runner implements; the others run on WebAssembly only for now. */
export const WEBGPU_ARCHITECTURES: ReadonlySet<Architecture> = new Set<Architecture>(["llama", "qwen2", "qwen3", "gemma3", "mistral3", "qwen3moe", "gpt-oss"]);

/** Why the WebGPU runner cannot run a model of `config` (its architecture, or a feature its kernels lack); undefined when it can. */
export function webGpuUnsupported(config: ModelConfig): string | undefined {
  if (!WEBGPU_ARCHITECTURES.has(config.architecture)) return `the WebGPU backend does not run ${config.architecture} yet`;
  return undefined;
}

/**
 * Tensor types the WebGPU runner refuses instead of widening them to F32 at load as it does the K-quants: MXFP4
 * (gpt-oss's experts) would take 7.5x its bytes, and there is no MXFP4 shader yet.
 */
const REFUSED_TENSOR_TYPES: ReadonlySet<GgmlType> = new Set([GgmlType.MXFP4]);

/** Why the WebGPU runner cannot take one of these tensors (the first of a refused type, by name); undefined when it can. */
export function webGpuUnsupportedTensor(tensors: Iterable<{ name: string; type: GgmlType }>): string | undefined {
  for (const tensor of tensors) {
    if (REFUSED_TENSOR_TYPES.has(tensor.type)) return `tensor '${tensor.name}' has type ${ggmlTypeName(tensor.type)}, which the WebGPU backend does not run yet`;
  }
  return undefined;
}
