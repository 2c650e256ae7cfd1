// One simulated decode step of a Qwen3-0.6B-shaped model (Q8_0 weights, 28 layers, tied 151936-row output) run
// through WasmRuntime with the kernels and dispatch pattern of a real forward pass: the tokens/second the kernel
// layer allows, its fraction of the memory-bandwidth bound, and how much of the step is dispatch and small ops.
// Usage: npx vite-node bench/kernels-decode-step.ts [--threads=2] [--context=256] [--packed]
import { randomFillSync } from "node:crypto";
import { cpus } from "node:os";
import { WasmRuntime } from "../kernels/wasm/runtime.js";

const option = (name: string, fallback: number) => Number(process.argv.find((a) => a.startsWith(`--${name}=`))?.split("=")[1] ?? fallback);
const threads = option("threads", 2);
const context = option("context", 256);
const packed = process.argv.includes("--packed");
const attentionGrain = option("attention-grain", 1);
console.log(`# loom decode-step simulation\n# machine: ${cpus()[0]?.model ?? "unknown CPU"} x${cpus().length}, node ${process.version}\n# date: ${new Date().toISOString()}\n# command: npx vite-node bench/kernels-decode-step.ts ${process.argv.slice(2).join(" ")}\n`);

const d = 1024, heads = 16, kvHeads = 8, headDim = 128, ffn = 3072, layers = 28, vocab = 151936, blockSize = 16;
const qDim = heads * headDim, kvDim = kvHeads * headDim;
const runtime = await WasmRuntime.create({ threads });
const matmul = packed ? "matmul_q8_0x4" : "matmul_q8_0";
const grain = packed ? 4 : 1;

/** Random Q8_0 weights [n, k] with realistic (normal, ~2^-7) scales, repacked when --packed. */
function weights(n: number, k: number): number {
  const bytes = n * (k / 32) * 34;
  const pointer = runtime.alloc(bytes);
  const view = runtime.u8(pointer, bytes);
  randomFillSync(view);
  for (let b = 0; b < bytes; b += 34) { view[b] = 0x00; view[b + 1] = 0x20; }
  if (!packed) return pointer;
  const out = runtime.alloc(bytes);
  runtime.parallel("repack_q8_0x4", [pointer, out, n, k], Math.ceil(n / 4));
  return out;
}

let weightBytes = 0;
const layer = Array.from({ length: layers }, () => {
  const shapes: Record<string, [number, number]> = { q: [qDim, d], k: [kvDim, d], v: [kvDim, d], o: [d, qDim], gate: [ffn, d], up: [ffn, d], down: [d, ffn] };
  const w: Record<string, number> = {};
  for (const [name, [n, k]] of Object.entries(shapes)) { w[name] = weights(n, k); weightBytes += n * (k / 32) * 34; }
  const blocks = Math.ceil((context + 1) / blockSize);
  return { w, norm: runtime.upload(new Float32Array(d).fill(1)), kCache: runtime.alloc(blocks * blockSize * kvDim * 4), vCache: runtime.alloc(blocks * blockSize * kvDim * 4) };
});
const output = weights(vocab, d);
weightBytes += vocab * (d / 32) * 34;
const f = (n: number) => runtime.alloc(n * 4);
const x = f(d), h = f(Math.max(d, qDim)), q = f(qDim), k = f(kvDim), v = f(kvDim), att = f(qDim), gate = f(ffn), up = f(ffn), logits = f(vocab);
const xq = runtime.alloc((ffn / 32) * 34);
const scratch = f(heads * (context + 1));
const table = runtime.upload(Int32Array.from({ length: Math.ceil((context + 1) / blockSize) }, (_, b) => b));
const positions = runtime.upload(Int32Array.of(context));
runtime.f32(x, d).fill(0.1);
const thetaScale = Math.fround(Math.pow(1e6, -2 / headDim));

let dispatches = 0;
function step(matvecs = true): void {
  dispatches = 0;
  const linear = (input: number, width: number, w: number, out: number, n: number) => {
    runtime.call("quantize_q8_0", input, xq, width, 0, 1);
    if (matvecs) runtime.parallel(matmul, [xq, w, out, 1, width, n], n, grain);
    dispatches += 2;
  };
  for (const l of layer) {
    runtime.call("rmsnorm", x, l.norm, h, d, 1e-6, 0, 1);
    runtime.call("quantize_q8_0", h, xq, d, 0, 1);
    if (matvecs) {
      runtime.parallel(matmul, [xq, l.w.q, q, 1, d, qDim], qDim, grain);
      runtime.parallel(matmul, [xq, l.w.k, k, 1, d, kvDim], kvDim, grain);
      runtime.parallel(matmul, [xq, l.w.v, v, 1, d, kvDim], kvDim, grain);
    }
    runtime.call("rmsnorm", q, l.norm, q, headDim, 1e-6, 0, heads);
    runtime.call("rmsnorm", k, l.norm, k, headDim, 1e-6, 0, kvHeads);
    runtime.call("rope_neox", q, positions, 0, 1, heads, headDim, headDim, thetaScale, 1, 0, 1);
    runtime.call("rope_neox", k, positions, 0, 1, kvHeads, headDim, headDim, thetaScale, 1, 0, 1);
    runtime.call("kv_store", k, v, l.kCache, l.vCache, table, positions, 1, kvDim, blockSize);
    runtime.parallel("attention", [q, l.kCache, l.vCache, table, positions, att, scratch, 1, heads, kvHeads, headDim, blockSize, 1 / Math.sqrt(headDim), context + 1, 0], heads, attentionGrain);
    linear(att, qDim, l.w.o, h, d);
    runtime.call("add", x, h, x, 0, d);
    runtime.call("rmsnorm", x, l.norm, h, d, 1e-6, 0, 1);
    runtime.call("quantize_q8_0", h, xq, d, 0, 1);
    if (matvecs) {
      runtime.parallel(matmul, [xq, l.w.gate, gate, 1, d, ffn], ffn, grain);
      runtime.parallel(matmul, [xq, l.w.up, up, 1, d, ffn], ffn, grain);
    }
    runtime.call("silu_mul", gate, up, gate, ffn, 0, ffn);
    linear(gate, ffn, l.w.down, h, d);
    runtime.call("add", x, h, x, 0, d);
    dispatches += 16;
  }
  runtime.call("rmsnorm", x, layer[0].norm, h, d, 1e-6, 0, 1);
  linear(h, d, output, logits, vocab);
  dispatches += 1;
}

function time(fn: () => void, repeats: number): number {
  for (let i = 0; i < 2; i++) fn();
  const times: number[] = [];
  for (let i = 0; i < repeats; i++) { const t0 = performance.now(); fn(); times.push(performance.now() - t0); }
  times.sort((a, b) => a - b);
  return times[Math.floor(times.length / 2)] / 1000;
}

const full = time(() => step(true), 15);
const rest = time(() => step(false), 15);
console.log(`weights ${(weightBytes / 1e6).toFixed(0)} MB (${matmul}), context ${context}, ${threads} thread(s), ${dispatches} kernel calls per token`);
console.log(`decode step: ${(full * 1000).toFixed(1)} ms median = ${(1 / full).toFixed(1)} tokens/s; weights streamed at ${(weightBytes / full / 1e9).toFixed(1)} GB/s`);
console.log(`of which everything but the matvecs (norms, rope, attention, quantize, adds, their dispatch): ${(rest * 1000).toFixed(2)} ms`);
await runtime.dispose();
