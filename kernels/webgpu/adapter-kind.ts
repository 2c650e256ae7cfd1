// Tells a hardware GPU adapter from a CPU implementation of WebGPU (lavapipe, llvmpipe, SwiftShader).

/** The adapter fields the decision reads (a GPUAdapterInfo, or the probe's copy of one). */
export interface AdapterIdentity {
  vendor: string;
  architecture: string;
  description: string;
  isFallbackAdapter?: boolean;
}

/** A CPU implementation: for correctness, never for speed (slower than the WebAssembly backend). */
export function isSoftwareAdapter(info: AdapterIdentity): boolean {
  return info.isFallbackAdapter === true || info.architecture === "software" || /llvmpipe|lavapipe|swiftshader/i.test(info.description);
}
