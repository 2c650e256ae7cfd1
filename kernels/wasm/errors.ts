// Typed errors of the WebAssembly runtime: a missing build, an exhausted memory, a kernel that trapped.

/** dist/wasm/kernels.wasm is absent: the kernels have not been compiled. */
export class WasmModuleMissingError extends Error {
  override readonly name = "WasmModuleMissingError";
  constructor(
    /** Where the module was looked for. */
    readonly path: string,
  ) {
    super(`WebAssembly kernels not found at ${path}: run \`npm run build:wasm\` first`);
  }
}

/** An allocation would take the shared memory past its maximum. */
export class WasmMemoryError extends Error {
  override readonly name = "WasmMemoryError";
  constructor(
    /** Bytes asked for. */
    readonly requestedBytes: number,
    /** Bytes already in use by the arena. */
    readonly usedBytes: number,
    /** The memory's maximum size in bytes. */
    readonly maximumBytes: number,
  ) {
    super(`cannot allocate ${requestedBytes} bytes: ${usedBytes} of at most ${maximumBytes} bytes of WebAssembly memory are in use`);
  }
}

/** A kernel trapped (out-of-bounds access, unreachable, ...) or was called wrongly, on some thread. */
export class WasmKernelError extends Error {
  override readonly name = "WasmKernelError";
  constructor(
    /** The kernel's export name. */
    readonly kernel: string,
    /** What went wrong, with the thread it happened on. */
    readonly problem: string,
  ) {
    super(`kernel ${kernel} failed: ${problem}`);
  }
}
