// Microbenchmarks of the WebAssembly kernels on this machine: memory read bandwidth (wasm streaming sum vs a C
// peer), per-dispatch overhead of WasmRuntime.parallel, matvec bandwidth per weight type and batched-matmul
// GFLOP/s, each on one and on two threads. Every figure is printed with the machine, date and command.
// Usage: npx vite-node bench/kernels.ts [--quick] [--only=q8_0,f32]
import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, writeFileSync } from "node:fs";
import { cpus, tmpdir } from "node:os";
import { join } from "node:path";
import { WasmRuntime } from "../kernels/wasm/runtime.js";
import { f32ToF16 } from "../kernels/formats/f16.js";
import { randomBf16, randomF32, randomKQuant, randomMxfp4, randomQ4_0, randomQ8_0 } from "../kernels/case.js";

/** A small AVX2 streaming sum (1 and 2 threads), compiled into a temporary folder when a C compiler exists. */
const C_SOURCE = String.raw`
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <pthread.h>
#include <immintrin.h>
typedef struct { const float *p; size_t n; float r; } job;
static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec + t.tv_nsec * 1e-9; }
static void *sum(void *arg) {
  job *j = arg; __m256 a = _mm256_setzero_ps(), b = a, c = a, d = a;
  for (size_t i = 0; i < j->n; i += 32) {
    a = _mm256_add_ps(a, _mm256_load_ps(j->p + i)); b = _mm256_add_ps(b, _mm256_load_ps(j->p + i + 8));
    c = _mm256_add_ps(c, _mm256_load_ps(j->p + i + 16)); d = _mm256_add_ps(d, _mm256_load_ps(j->p + i + 24));
  }
  float t[8]; _mm256_storeu_ps(t, _mm256_add_ps(_mm256_add_ps(a, b), _mm256_add_ps(c, d)));
  j->r = t[0] + t[1] + t[2] + t[3] + t[4] + t[5] + t[6] + t[7]; return 0;
}
int main(int argc, char **argv) {
  size_t bytes = (size_t)atoll(argv[1]), n = bytes / 4; float *p = aligned_alloc(64, bytes); memset(p, 0, bytes);
  for (int threads = 1; threads <= 2; threads++) {
    double best = 1e9;
    for (int rep = 0; rep < 5; rep++) {
      pthread_t t[2]; job j[2]; double t0 = now();
      for (int i = 0; i < threads; i++) { j[i].p = p + i * (n / threads); j[i].n = n / threads; pthread_create(&t[i], 0, sum, &j[i]); }
      for (int i = 0; i < threads; i++) pthread_join(t[i], 0);
      double dt = now() - t0; if (dt < best) best = dt;
    }
    printf("%d thread%s %.1f GB/s%s", threads, threads > 1 ? "s" : "", bytes / best / 1e9, threads == 1 ? ", " : "\n");
  }
  return 0;
}
`;

const quick = process.argv.includes("--quick");
const only = process.argv.find((a) => a.startsWith("--only="))?.slice(7).split(",");
const command = `npx vite-node bench/kernels.ts ${process.argv.slice(2).join(" ")}`.trim();
const machine = `${cpus()[0]?.model ?? "unknown CPU"} x${cpus().length}, node ${process.version}`;
console.log(`# loom kernel benchmarks\n# machine: ${machine}\n# date: ${new Date().toISOString()}\n# command: ${command}\n`);

/** Seconds per call: the 20th-percentile of individually timed calls (robust to other processes' noise). */
function timeCall(fn: () => void, budgetSeconds: number, minCalls = 5): { best: number; median: number } {
  for (let i = 0; i < 3; i++) fn(); // warm up (tier-up to optimised code)
  const times: number[] = [];
  const deadline = performance.now() + budgetSeconds * 1000;
  while (times.length < minCalls || performance.now() < deadline) {
    const t0 = performance.now();
    fn();
    times.push((performance.now() - t0) / 1000);
    if (times.length > 100_000) break;
  }
  times.sort((a, b) => a - b);
  return { best: times[Math.floor(times.length * 0.2)], median: times[Math.floor(times.length / 2)] };
}

const runtime = await WasmRuntime.create({ threads: 2 });
const budget = quick ? 0.3 : 1.5;
/** The best measured peer (C) read bandwidth in bytes/s: the physical limit decode streams against. */
let memoryBandwidth = 0;

// ---- Memory read bandwidth: wasm streaming sum over 1 GiB, and C peers.
{
  const bytes = quick ? 256 << 20 : 1 << 30;
  const rows = 1024;
  const n = bytes / 4 / rows;
  const mark = runtime.mark();
  const x = runtime.alloc(bytes);
  const out = runtime.alloc(rows * 4);
  runtime.u8(x, bytes).fill(1);
  const one = timeCall(() => runtime.call("sum_rows", x, out, n, 0, rows), budget * 2, 3);
  const two = timeCall(() => runtime.parallel("sum_rows", [x, out, n], rows), budget * 2, 3);
  console.log(`memory read bandwidth, wasm sum_rows over ${bytes >> 20} MiB: 1 thread ${(bytes / one.best / 1e9).toFixed(1)} GB/s, 2 threads ${(bytes / two.best / 1e9).toFixed(1)} GB/s`);
  runtime.release(mark);
  const a = Buffer.alloc(bytes / 2, 7);
  const b = Buffer.alloc(bytes / 2, 7);
  const compare = timeCall(() => a.compare(b), budget * 2, 3);
  console.log(`memory read bandwidth, C peer Buffer.compare (memcmp, 1 thread) of 2 x ${bytes >> 21} MiB: ${(bytes / compare.best / 1e9).toFixed(1)} GB/s`);
  const cc = cBandwidth(bytes);
  if (cc) console.log(`memory read bandwidth, C peer cc -O3 -march=native AVX2 sum over ${bytes >> 20} MiB: ${cc.text}`);
  memoryBandwidth = Math.max(bytes / compare.best, cc?.best ?? 0);
}

// ---- Dispatch overhead: parallel() of a near-empty kernel (each thread adds one element), back to back.
{
  const mark = runtime.mark();
  const a = runtime.alloc(64);
  const calls = quick ? 20_000 : 200_000;
  for (let i = 0; i < 1000; i++) runtime.parallel("add", [a, a, a], 2);
  let t0 = performance.now();
  for (let i = 0; i < calls; i++) runtime.parallel("add", [a, a, a], 2);
  const parallelUs = ((performance.now() - t0) * 1000) / calls;
  t0 = performance.now();
  for (let i = 0; i < calls; i++) runtime.call("add", a, a, a, 0, 2);
  const callUs = ((performance.now() - t0) * 1000) / calls;
  console.log(`dispatch overhead: parallel() over 2 threads ${parallelUs.toFixed(2)} us per call, call() on this thread ${callUs.toFixed(3)} us per call`);
  runtime.release(mark);
}

// ---- Matvec bandwidth and batched matmul throughput per weight type.
type KQuant = "q4_k" | "q5_k" | "q6_k";
type Kind = "f32" | "f16" | "bf16" | "q8_0" | "q4_0" | "q8_0x4" | "q4_0x4" | "mxfp4" | KQuant;
const kinds: Kind[] = (["q8_0", "q8_0x4", "q4_0", "q4_0x4", "mxfp4", "q4_k", "q5_k", "q6_k", "f32", "f16", "bf16"] as const).filter((k) => !only || only.includes(k));
/** Bytes per 256-value super-block of the K-quants. */
const K_QUANT_BLOCK_BYTES: Record<KQuant, number> = { q4_k: 144, q5_k: 176, q6_k: 210 };
/** Bytes of one Q8_K activation block (256 values): what the K-quant kernels take as x. */
const Q8_K_BLOCK_BYTES = 292;

function isKQuant(kind: Kind): kind is KQuant {
  return kind in K_QUANT_BLOCK_BYTES;
}

/** Bytes of an n x k weight matrix of this kind, as stored (and streamed by a matvec). */
function matrixBytes(kind: Kind, n: number, k: number): number {
  if (isKQuant(kind)) return n * (k / 256) * K_QUANT_BLOCK_BYTES[kind];
  if (kind === "mxfp4") return n * (k / 32) * 17;
  if (kind.startsWith("q")) return n * (k / 32) * (kind.startsWith("q8") ? 34 : 18);
  return n * k * (kind === "f32" ? 4 : 2);
}

/** Quantizes `rows` activation rows at x as the kernel of `kind` takes them; returns the pointer it reads. */
function kernelInput(kind: Kind, x: number, rows: number, k: number): number {
  if (!kind.startsWith("q") && kind !== "mxfp4") return x;
  const [quantizer, blockBytes, blockValues] = isKQuant(kind) ? ["quantize_q8_k", Q8_K_BLOCK_BYTES, 256] : ["quantize_q8_0", 34, 32];
  const xq = runtime.alloc(rows * (k / blockValues) * blockBytes);
  runtime.parallel(quantizer, [x, xq, k], rows);
  return xq;
}

function weightBytes(kind: Kind, n: number, k: number): Uint8Array {
  const asBytes = (a: ArrayBufferView) => new Uint8Array(a.buffer, a.byteOffset, a.byteLength);
  switch (kind) {
    case "f32": return asBytes(randomF32(n * k, 1, 0.05));
    case "f16": {
      // Uniform in +-0.05: ~0.1% subnormal halves, about what N(0, 0.02) weights have.
      const values = randomF32(n * k, 1, 0.05);
      const halves = new Uint16Array(n * k);
      for (let i = 0; i < halves.length; i++) halves[i] = f32ToF16(values[i]);
      return asBytes(halves);
    }
    case "bf16": return asBytes(randomBf16(n * k, 1, 0.05));
    case "q8_0": case "q8_0x4": return randomQ8_0(n * (k / 32), 1, false);
    case "q4_0": case "q4_0x4": return randomQ4_0(n * (k / 32), 1, false);
    case "q4_k": case "q5_k": case "q6_k": return randomKQuant(kind, n * (k / 256), 1, false);
    case "mxfp4": return randomMxfp4(n * (k / 32), 1, false);
  }
}

/** Places the weights (repacking for the x4 layouts) and returns the pointer. */
function placeWeights(kind: Kind, n: number, k: number): number {
  const raw = weightBytes(kind, n, k);
  if (!kind.endsWith("x4")) return runtime.upload(raw);
  const packed = runtime.alloc(raw.byteLength + 4 * 1024 * 1024);
  const mark = runtime.mark();
  const source = runtime.upload(raw);
  runtime.parallel(`repack_${kind.slice(0, 4)}x4`, [source, packed, n, k], Math.ceil(n / 4));
  runtime.release(mark);
  return packed;
}

// The first shape's weights (under 1 MB in every quantized type) stay in L2 between calls: its GB/s is the
// kernel's compute ceiling, which the big shapes (streamed from memory) approach when decode is compute-bound.
const matvecShapes: Array<[number, number]> = quick ? [[1536, 512], [151936, 1024]] : [[1536, 512], [3072, 1024], [8192, 2048], [151936, 1024]];
console.log(`\nmatvec (rows=1): weight bytes streamed per second; 20th-percentile call time`);
for (const kind of kinds) {
  for (const [n, k] of matvecShapes) {
    const mark = runtime.mark();
    const w = placeWeights(kind, n, k);
    const bytes = matrixBytes(kind, n, k);
    const input = kernelInput(kind, runtime.upload(randomF32(k, 2)), 1, k);
    const y = runtime.alloc(n * 4);
    const kernel = `matmul_${kind}`;
    const grain = kind.endsWith("x4") ? 4 : 1;
    const one = timeCall(() => runtime.call(kernel, input, w, y, 1, k, n, 0, n), budget);
    const two = timeCall(() => runtime.parallel(kernel, [input, w, y, 1, k, n], n, grain), budget);
    const limit = bytes > 64e6 && memoryBandwidth > 0 ? `  = ${((100 * bytes) / two.best / memoryBandwidth).toFixed(0)}% of the C read bandwidth` : "";
    console.log(`${kernel.padEnd(16)} ${`${n}x${k}`.padEnd(12)} ${(bytes / 1e6).toFixed(1).padStart(7)} MB  1 thread ${(bytes / one.best / 1e9).toFixed(1).padStart(5)} GB/s (${(one.best * 1e6).toFixed(0)} us)  2 threads ${(bytes / two.best / 1e9).toFixed(1).padStart(5)} GB/s (${(two.best * 1e6).toFixed(0)} us)${limit}`);
    runtime.release(mark);
  }
}

const matmulShapes: Array<[number, number, number]> = quick ? [[64, 1024, 3072]] : [[64, 1024, 3072], [64, 2048, 8192]];
console.log(`\nbatched matmul (prefill): 2*rows*k*n / time`);
for (const kind of kinds) {
  for (const [rows, k, n] of matmulShapes) {
    const mark = runtime.mark();
    const w = placeWeights(kind, n, k);
    const input = kernelInput(kind, runtime.upload(randomF32(rows * k, 3)), rows, k);
    const y = runtime.alloc(rows * n * 4);
    const kernel = `matmul_${kind}`;
    const grain = kind.endsWith("x4") ? 4 : 1;
    const flops = 2 * rows * k * n;
    const one = timeCall(() => runtime.call(kernel, input, w, y, rows, k, n, 0, n), budget, 3);
    const two = timeCall(() => runtime.parallel(kernel, [input, w, y, rows, k, n], n, grain), budget, 3);
    console.log(`${kernel.padEnd(16)} rows=${rows} ${`${n}x${k}`.padEnd(10)} 1 thread ${(flops / one.best / 1e9).toFixed(1).padStart(5)} GFLOP/s  2 threads ${(flops / two.best / 1e9).toFixed(1).padStart(5)} GFLOP/s`);
    runtime.release(mark);
  }
}

// ---- Decode attention over a long paged context (Qwen3-0.6B shapes: 16 query heads, 8 kv heads, head_dim 128),
// f32 and f16 caches, then many decoding sequences per step: one dispatch per sequence vs one attention_chunks.
{
  const heads = 16, kvHeads = 8, headDim = 128, blockSize = 16, context = quick ? 1024 : 4096;
  const scale = 1 / Math.sqrt(headDim);
  const mark = runtime.mark();
  const blocks = context / blockSize;
  const kvFloats = blocks * blockSize * kvHeads * headDim;
  const { kCache, vCache, kHalves, vHalves } = uploadKvCaches(kvFloats);
  const table = runtime.upload(Int32Array.from({ length: blocks }, (_, b) => b));
  const positions = runtime.upload(Int32Array.of(context - 1));
  const q = runtime.upload(randomF32(heads * headDim, 7));
  const out = runtime.alloc(heads * headDim * 4);
  const scratch = runtime.alloc(heads * context * 4);
  const args = [q, kCache, vCache, table, positions, out, scratch, 1, heads, kvHeads, headDim, blockSize, scale, context, 0];
  const one = timeCall(() => runtime.call("attention", ...args, 0, heads), budget);
  const two = timeCall(() => runtime.parallel("attention", args, heads), budget);
  const bytes = 2 * kvFloats * 4;
  console.log(`\nattention decode, context ${context}, heads ${heads}/${kvHeads}, head_dim ${headDim} (f32 KV ${(bytes / 1e6).toFixed(0)} MB): 1 thread ${(one.best * 1e6).toFixed(0)} us (${(bytes / one.best / 1e9).toFixed(1)} GB/s of KV), 2 threads ${(two.best * 1e6).toFixed(0)} us (${(bytes / two.best / 1e9).toFixed(1)} GB/s)`);
  const descriptor = runtime.upload(Int32Array.of(0, 1, table, positions, 0, 0, 0, 0));
  const argsF16 = [descriptor, q, kHalves, vHalves, out, scratch, heads, kvHeads, headDim, blockSize, scale, context, 0];
  const oneF16 = timeCall(() => runtime.call("attention_chunks_f16", ...argsF16, 0, heads), budget);
  const twoF16 = timeCall(() => runtime.parallel("attention_chunks_f16", argsF16, heads, heads / kvHeads), budget);
  console.log(`attention decode, same, f16 KV ${(bytes / 2e6).toFixed(0)} MB (attention_chunks_f16): 1 thread ${(oneF16.best * 1e6).toFixed(0)} us, 2 threads ${(twoF16.best * 1e6).toFixed(0)} us`);
  runtime.release(mark);
}
{
  const heads = 16, kvHeads = 8, headDim = 128, blockSize = 16, sequences = 64, context = quick ? 256 : 1024;
  const scale = 1 / Math.sqrt(headDim);
  const mark = runtime.mark();
  const blocksPerSequence = context / blockSize;
  const kvFloats = sequences * blocksPerSequence * blockSize * kvHeads * headDim;
  const { kCache, vCache, kHalves, vHalves } = uploadKvCaches(kvFloats);
  const tables = Array.from({ length: sequences }, (_, s) => runtime.upload(Int32Array.from({ length: blocksPerSequence }, (_, b) => s * blocksPerSequence + b)));
  const positions = runtime.upload(Int32Array.of(context - 1));
  const tokenBytes = heads * headDim * 4;
  const q = runtime.upload(randomF32(sequences * heads * headDim, 7));
  const out = runtime.alloc(sequences * tokenBytes);
  const scratch = runtime.alloc(sequences * heads * context * 4);
  const descriptors = runtime.upload(Int32Array.from(tables.flatMap((t, s) => [s, 1, t, positions, 0, 0, 0, 0])));
  const perSequence = timeCall(() => {
    for (let s = 0; s < sequences; s++) {
      runtime.parallel("attention", [q + s * tokenBytes, kCache, vCache, tables[s], positions, out + s * tokenBytes, scratch, 1, heads, kvHeads, headDim, blockSize, scale, context, 0], heads);
    }
  }, budget);
  const chunkArgs = (k: number, v: number) => [descriptors, q, k, v, out, scratch, heads, kvHeads, headDim, blockSize, scale, context, 0];
  const batched = timeCall(() => runtime.parallel("attention_chunks", chunkArgs(kCache, vCache), sequences * heads, heads / kvHeads), budget);
  const batchedF16 = timeCall(() => runtime.parallel("attention_chunks_f16", chunkArgs(kHalves, vHalves), sequences * heads, heads / kvHeads), budget);
  console.log(`attention decode step, ${sequences} sequences x context ${context} (f32 KV ${((2 * kvFloats * 4) / 1e6).toFixed(0)} MB), 2 threads: ${sequences} attention dispatches ${(perSequence.best * 1e6).toFixed(0)} us, one attention_chunks ${(batched.best * 1e6).toFixed(0)} us, one attention_chunks_f16 ${(batchedF16.best * 1e6).toFixed(0)} us`);
  runtime.release(mark);
}

// ---- Prompt log-probabilities: log_sum_exp_rows over Qwen3-vocabulary logit rows (the engine's JS logSumExp did this).
{
  const rows = 32;
  const n = 151936;
  const mark = runtime.mark();
  const x = runtime.upload(randomF32(rows * n, 11, 20));
  const out = runtime.alloc(rows * 8);
  const one = timeCall(() => runtime.call("log_sum_exp_rows", x, out, n, 0, rows), budget);
  const two = timeCall(() => runtime.parallel("log_sum_exp_rows", [x, out, n], rows), budget);
  console.log(`log_sum_exp_rows, ${rows} rows x ${n}: 1 thread ${((one.best / rows) * 1e6).toFixed(0)} us per row, 2 threads ${((two.best / rows) * 1e6).toFixed(0)} us per row`);
  runtime.release(mark);
}

await runtime.dispose();

/** Random K and V caches of `floats` values each, uploaded as f32 and as f16. */
function uploadKvCaches(floats: number): { kCache: number; vCache: number; kHalves: number; vHalves: number } {
  const kValues = randomF32(floats, 5);
  const vValues = randomF32(floats, 6);
  return {
    kCache: runtime.upload(kValues),
    vCache: runtime.upload(vValues),
    kHalves: runtime.upload(Uint16Array.from(kValues, f32ToF16)),
    vHalves: runtime.upload(Uint16Array.from(vValues, f32ToF16)),
  };
}

/** Builds and runs a small AVX2 streaming sum in C (1 and 2 threads) if a C compiler is present; not committed. */
function cBandwidth(bytes: number): { text: string; best: number } | undefined {
  const compiler = ["/usr/bin/cc", "/usr/bin/gcc", "/usr/bin/clang"].find(existsSync);
  if (!compiler) return undefined;
  const dir = mkdtempSync(join(tmpdir(), "loom-bw-"));
  writeFileSync(join(dir, "bw.c"), C_SOURCE);
  try {
    execFileSync(compiler, ["-O3", "-march=native", "-pthread", join(dir, "bw.c"), "-o", join(dir, "bw")]);
    const text = execFileSync(join(dir, "bw"), [String(bytes)], { encoding: "utf8" }).trim();
    return { text, best: Math.max(...[...text.matchAll(/([\d.]+) GB\/s/g)].map((m) => Number(m[1]) * 1e9)) };
  } catch {
    return undefined;
  }
}
