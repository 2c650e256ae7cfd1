// Which architectures the WebGPU backend runs (no Dawn import: the loader asks before choosing a backend).
import type { Architecture } from "../../model/config.js";

/** The architectures the WebGPU runner implements; the others run on WebAssembly only for now. */
export const WEBGPU_ARCHITECTURES: ReadonlySet<Architecture> = new Set<Architecture>(["llama", "qwen2", "qwen3", "gemma3"]);
