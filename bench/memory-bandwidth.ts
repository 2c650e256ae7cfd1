// Measures sustained memory read bandwidth with the WebAssembly streaming-sum kernel on all threads:
// the physical limit that decode speed is reported against.
import { WasmRuntime } from "../kernels/wasm/runtime.js";

/** Best-of-N read bandwidth in bytes per second over a buffer far larger than the caches. */
export async function measureReadBandwidth(bytes = 1 << 30, repeats = 5, threads?: number): Promise<number> {
  const runtime = await WasmRuntime.create({ threads });
  try {
    const rowFloats = 1 << 16;
    const rows = Math.floor(bytes / (rowFloats * 4));
    const data = runtime.alloc(rows * rowFloats * 4);
    const out = runtime.alloc(rows * 4);
    runtime.f32(data, rows * rowFloats).fill(1); // touch every page so timing sees no page faults
    let best = 0;
    for (let i = 0; i < repeats; i++) {
      const start = performance.now();
      runtime.parallel("sum_rows", [data, out, rowFloats], rows);
      const seconds = (performance.now() - start) / 1000;
      best = Math.max(best, (rows * rowFloats * 4) / seconds);
    }
    return best;
  } finally {
    await runtime.dispose();
  }
}
