// Decode's matrix-vector products as a model runs them: one token row against a pool of weight matrices larger
// than the caches (mixture-of-experts experts, or a dense model's layers), each matrix read once per pass from
// memory. Reports weight bytes and weights per second per type, against the same threads' plain streaming read of
// the pool (sum_rows, one sequential stream a thread: the kernels read twelve and can pass it).
// Run: npm run build && node dist/bench/matvec-stream.js [options] (USAGE below; --help prints it).
import { randomFillSync } from "node:crypto";
import { WasmRuntime } from "../kernels/wasm/runtime.js";
import { BenchCli } from "./bench-args.js";
import { printHeader } from "./bench-models.js";

const USAGE = `node dist/bench/matvec-stream.js [--types mxfp4,q8_0,q4_0,q4_k,q6_k] [--threads 2] [--pool-mb 1024]
       [--n 3072] [--k 3072] [--passes 3]`;
const cli: BenchCli = new BenchCli("matvec-stream", USAGE);

/** Each type: values per block, bytes per block, the activation quantizer and its bytes per block. */
const TYPES = {
  mxfp4: { values: 32, bytes: 17, quantizer: "quantize_q8_0", xBytes: 34 },
  q8_0: { values: 32, bytes: 34, quantizer: "quantize_q8_0", xBytes: 34 },
  q4_0: { values: 32, bytes: 18, quantizer: "quantize_q8_0", xBytes: 34 },
  q4_k: { values: 256, bytes: 144, quantizer: "quantize_q8_k", xBytes: 292 },
  // As stored (a model's experts; its 2-D Q6_K matrices are widened at load and read by matmul_q6_k_bytes).
  q6_k: { values: 256, bytes: 210, quantizer: "quantize_q8_k", xBytes: 292 },
} as const;
type WeightType = keyof typeof TYPES;

const values = cli.parse({
  types: { type: "string", default: Object.keys(TYPES).join(",") },
  threads: { type: "string", default: "2" },
  "pool-mb": { type: "string", default: "1024" },
  n: { type: "string", default: "3072" },
  k: { type: "string", default: "3072" },
  passes: { type: "string", default: "3" },
});
const types = cli.someOf("types", values.types, Object.keys(TYPES) as WeightType[]);
const threads = cli.integer("threads", values.threads, 1, 64);
const poolBytes = cli.integer("pool-mb", values["pool-mb"], 64, 3584) * 1024 * 1024;
const n = cli.integer("n", values.n, 1, 1 << 20);
const k = cli.integer("k", values.k, 256, 1 << 16);
if (k % 256 !== 0) cli.fail(`--k must be a multiple of 256 (the K-quants' super-block), got ${k}`);
const passes = cli.integer("passes", values.passes, 1, 100);

printHeader(`node dist/bench/matvec-stream.js ${process.argv.slice(2).join(" ")}`.trim(), threads, [
  `one token row times every ${n} x ${k} matrix of a ${poolBytes >> 20} MiB pool per pass; best and worst of ${passes} passes`,
]);

const runtime = await WasmRuntime.create({ threads, maximumBytes: 4 * 1024 * 1024 * 1024 - 64 * 1024 * 1024 });
const pool = runtime.alloc(poolBytes);
const bytes = runtime.u8(pool, poolBytes);
for (let offset = 0; offset < poolBytes; offset += 1 << 20) randomFillSync(bytes.subarray(offset, Math.min(poolBytes, offset + (1 << 20))));

/** Seconds of each pass of `run`, after one unmeasured pass (V8 tiers the kernel up, the pool's pages are touched). */
function timePasses(run: () => void): number[] {
  run();
  return Array.from({ length: passes }, () => {
    const started = performance.now();
    run();
    return (performance.now() - started) / 1000;
  });
}

const rangeOf = (rates: number[]) => `${Math.max(...rates).toFixed(1)} (worst ${Math.min(...rates).toFixed(1)})`;

// The plain streaming read: the memory bandwidth these threads reach on this pool.
const rows = 1024;
const sums = runtime.alloc(rows * 4);
const readRates = timePasses(() => runtime.parallel("sum_rows", [pool, sums, poolBytes / 4 / rows], rows)).map((s) => poolBytes / s / 1e9);
const bandwidth = Math.max(...readRates);
console.log(`streaming read of the pool (sum_rows, one sequential stream a thread): ${rangeOf(readRates)} GB/s`);

for (const type of types) {
  const spec = TYPES[type];
  const matrixBytes = n * (k / spec.values) * spec.bytes;
  const matrices = Math.floor(poolBytes / matrixBytes);
  if (matrices < 2) cli.fail(`--pool-mb ${poolBytes >> 20} holds fewer than two ${n} x ${k} ${type} matrices`);
  // Sane block scales: f16 1/64 (Q8_0, Q4_0, the K-quants' d and dmin), E8M0 exponents near 2^-7 (MXFP4).
  for (let offset = 0; offset < matrices * matrixBytes; offset += spec.bytes) {
    if (type === "mxfp4") bytes[offset] = 117 + (offset % 9);
    else if (type === "q6_k") { bytes[offset + 208] = 0; bytes[offset + 209] = 0x24; }
    else {
      bytes[offset] = 0; bytes[offset + 1] = 0x24;
      if (type === "q4_k") { bytes[offset + 2] = 0; bytes[offset + 3] = 0x24; }
    }
  }
  const mark = runtime.mark();
  const x = runtime.upload(Float32Array.from({ length: k }, (_, i) => Math.sin(i)));
  const xq = runtime.alloc((k / spec.values) * spec.xBytes);
  runtime.call(spec.quantizer, x, xq, k, 0, 1);
  const y = runtime.alloc(n * 4);
  const kernel = `matmul_${type}`;
  const seconds = timePasses(() => {
    for (let m = 0; m < matrices; m++) runtime.parallel(kernel, [xq, pool + m * matrixBytes, y, 1, k, n], n);
  });
  const gigabytes = seconds.map((s) => (matrices * matrixBytes) / s / 1e9);
  const weights = seconds.map((s) => (matrices * n * k) / s / 1e9);
  const best = Math.max(...gigabytes);
  console.log(`${kernel.padEnd(12)} ${matrices} matrices of ${(matrixBytes / 1e6).toFixed(2)} MB: ${rangeOf(gigabytes)} GB/s, ${rangeOf(weights)} G weights/s, ${((100 * best) / bandwidth).toFixed(0)}% of the streaming read`);
  runtime.release(mark);
}
await runtime.dispose();
