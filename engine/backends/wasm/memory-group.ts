// One WebAssembly memory's share of a model: its runtime (kernel instances over that memory), a run of
// consecutive layers with their KV cache, and the activation buffers a forward pass needs there.
import type { WasmRuntime } from "../../../kernels/wasm/runtime.js";
import type { LayerTensors } from "../layer-tensors.js";
import type { ResidentTensor } from "./weight-loader.js";

/** One layer's weights and KV cache, all in its group's memory. */
export interface LayerWeights extends LayerTensors<ResidentTensor, ResidentTensor> {
  /** This layer's KV block pools: [kvBlocks, blockSize, kvHeads, headDim] of the KV dtype. */
  kCache: number;
  vCache: number;
}

// Elementwise work below this many values runs on the calling thread: a dispatch would cost more.
const SERIAL_THRESHOLD = 16384;

/**
 * A memory, the layers [firstLayer, firstLayer + layers.length) placed in it, and its own activation buffers (named
 * by `Buffer`). Pointers held here are byte offsets into this group's memory only.
 * NOTE: only one group computes at a time. The groups' runtimes share one set of worker threads (each worker holds
 * an instance per memory), so a boundary between memories costs no thread wake-up and no core is contended.
 */
export class MemoryGroup<Buffer extends string> {
  /** Activation buffers in this memory, by name. */
  readonly buffers: Record<Buffer, number>;
  /** RoPE frequency divisors in this memory (0 when the model has none). */
  readonly ropeFactors: number;

  /**
   * Allocates the buffers (`bufferBytes`, by name), the RoPE factors and each layer's K and V caches of
   * `kvCacheBytes(layer)` bytes each (model layer index). Call after the layers' weights are loaded into `runtime`.
   */
  constructor(
    readonly runtime: WasmRuntime,
    /** Model index of layers[0]. */
    readonly firstLayer: number,
    readonly layers: readonly LayerWeights[],
    bufferBytes: Record<Buffer, number>,
    ropeFreqFactors: Float32Array | null,
    kvCacheBytes: (layer: number) => number,
  ) {
    this.buffers = Object.fromEntries(Object.entries<number>(bufferBytes).map(([name, bytes]) => [name, runtime.alloc(bytes)])) as Record<Buffer, number>;
    this.ropeFactors = ropeFreqFactors ? runtime.upload(ropeFreqFactors) : 0;
    layers.forEach((layer, i) => {
      layer.kCache = runtime.alloc(kvCacheBytes(firstLayer + i));
      layer.vCache = runtime.alloc(kvCacheBytes(firstLayer + i));
    });
  }

  /** Whether model layer `index` lives here. */
  holdsLayer(index: number): boolean {
    return index >= this.firstLayer && index < this.firstLayer + this.layers.length;
  }

  /** Copies `floats` f32 values from buffer `name` of `from` into the same buffer here (the residual stream between memories). */
  receive(from: MemoryGroup<Buffer>, name: Buffer, floats: number): void {
    if (from === this) return;
    this.runtime.f32(this.buffers[name], floats).set(from.runtime.f32(from.buffers[name], floats));
  }

  /** A row-wise kernel whose last two arguments are a row range. */
  rows(kernel: string, args: number[], rows: number, width: number): void {
    if (rows * width < SERIAL_THRESHOLD) this.runtime.call(kernel, ...args, 0, rows);
    else this.runtime.parallel(kernel, args, rows);
  }

  /** An elementwise kernel whose last two arguments are an element range. */
  elementwise(kernel: string, args: number[], count: number): void {
    if (count < SERIAL_THRESHOLD) this.runtime.call(kernel, ...args, 0, count);
    else this.runtime.parallel(kernel, args, count);
  }
}
