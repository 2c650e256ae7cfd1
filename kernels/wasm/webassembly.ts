// Types for the parts of the WebAssembly JS API the runtime uses. Node 20 provides WebAssembly, but this
// project's TypeScript lib (ES2023, no DOM) does not declare it; module-local types avoid clashing with a
// global declaration should one be added later.

/** A WebAssembly.Memory (shared: its buffer is a SharedArrayBuffer). */
export interface WasmMemory {
  readonly buffer: ArrayBufferLike;
  /** Grows by `pages` 64 KiB pages and returns the previous size in pages. */
  grow(pages: number): number;
}

/** A compiled WebAssembly.Module (structured-cloneable to workers). */
export interface WasmModule {
  readonly __brand?: "WebAssembly.Module";
}

/** An instantiated module. */
export interface WasmInstance {
  readonly exports: Record<string, unknown>;
}

interface WebAssemblyApi {
  Memory: new (descriptor: { initial: number; maximum?: number; shared?: boolean }) => WasmMemory;
  Module: { exports(module: WasmModule): Array<{ name: string; kind: string }> };
  compile(bytes: Uint8Array): Promise<WasmModule>;
  instantiate(module: WasmModule, imports: Record<string, Record<string, unknown>>): Promise<WasmInstance>;
}

/** The global WebAssembly namespace, typed. */
export const webAssembly = (globalThis as unknown as { WebAssembly: WebAssemblyApi }).WebAssembly;
