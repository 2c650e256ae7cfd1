// What a batched matmul reaches against the same kernel at one row: for each weight type, the time per token row of
// y = x W^T at 1, 2, 4, 8, 16 and 64 rows (decode batches and a prefill chunk) on real layer shapes, and its ratio to
// one row's (1.00: nothing shared; 0.25: three quarters of the work shared). Q8_0 runs both kernels on the same
// quants: matmul_q8_0 (compact activations) and matmul_q8_0_wide (int16 activations, what the runner uses from two
// rows), with the wide kernel's speedup over the compact one at each row count; Q6_K likewise runs matmul_q6_k and
// matmul_q6_k_bytes (the same weights widened at load to a byte per quant, what the runner uses). Kernels alternate
// call by call, so a noisy machine disturbs both alike; medians.
// Run: npm run build && node dist/bench/matmul-batches.js [options] (USAGE below; --help prints it).
import { randomF16, randomF32, randomKQuant, randomQ8_0 } from "../kernels/case.js";
import { quantizeQ8_K } from "../kernels/formats/q8_k.js";
import { widenedQ6_K } from "../kernels/formats/q6_k-bytes.js";
import { widenQ8_0 } from "../kernels/quantize_q8_0/quantize_q8_0.ref.js";
import { WasmRuntime } from "../kernels/wasm/runtime.js";
import type { SimdLevel } from "../kernels/wasm/module-path.js";
import { BenchCli } from "./bench-args.js";
import { printHeader } from "./bench-models.js";

type WeightType = "q8_0" | "q4_k" | "q5_k" | "q6_k" | "f16" | "f32";

interface Variant {
  kernel: string;
  /** The weights as this kernel reads them, from the type's stored bytes (default: as stored). */
  weights?(stored: Uint8Array): Uint8Array;
  /** The activations of `rows` rows of k values, as this kernel reads them. */
  input(rows: number, k: number): ArrayBufferView;
}

const asBytes = (a: ArrayBufferView) => new Uint8Array(a.buffer, a.byteOffset, a.byteLength);

function weightsOf(type: WeightType, k: number, n: number): Uint8Array {
  if (type === "q8_0") return randomQ8_0((n * k) / 32, 5);
  if (type === "f16") return asBytes(randomF16(n * k, 5, 1 / Math.sqrt(k)));
  if (type === "f32") return asBytes(randomF32(n * k, 5, 1 / Math.sqrt(k)));
  return randomKQuant(type, (n * k) / 256, 5);
}

function variantsOf(type: WeightType): Variant[] {
  if (type === "q8_0") {
    return [
      { kernel: "matmul_q8_0", input: (rows, k) => randomQ8_0((rows * k) / 32, 7) },
      { kernel: "matmul_q8_0_wide", input: (rows, k) => widenQ8_0(randomQ8_0((rows * k) / 32, 7), rows, k) },
    ];
  }
  if (type === "f16" || type === "f32") return [{ kernel: `matmul_${type}`, input: (rows, k) => randomF32(rows * k, 7) }];
  const input = (rows: number, k: number) => quantizeQ8_K(randomF32(rows * k, 7, 2));
  if (type === "q6_k") return [{ kernel: "matmul_q6_k", input }, { kernel: "matmul_q6_k_bytes", input, weights: widenedQ6_K }];
  return [{ kernel: `matmul_${type}`, input }];
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

/** Median microseconds per call of each variant at `rows` rows, calls alternating between the variants. */
function timeVariants(runtime: WasmRuntime, variants: Variant[], weights: number[], rows: number, k: number, n: number): number[] {
  const mark = runtime.mark();
  try {
    const inputs = variants.map((v) => runtime.upload(asBytes(v.input(rows, k))));
    const y = runtime.alloc(rows * n * 4);
    const times: number[][] = variants.map(() => []);
    // About 0.3 s of calls per variant on this shape at 20 GFLOP/s, between 5 and 200 calls.
    const calls = Math.min(200, Math.max(5, Math.round(3e9 / (2 * rows * k * n))));
    for (let call = -1; call < calls; call++) {
      variants.forEach((variant, i) => {
        const started = performance.now();
        runtime.parallel(variant.kernel, [inputs[i]!, weights[i]!, y, rows, k, n], n);
        if (call >= 0) times[i]!.push((performance.now() - started) * 1000);
      });
    }
    return times.map(median);
  } finally {
    runtime.release(mark);
  }
}

/** The command line; --help prints it. */
const USAGE = `node dist/bench/matmul-batches.js [--threads 2] [--rows 1,2,4,8,16,64]
       [--types q8_0,q4_k,q5_k,q6_k,f16,f32] [--shapes 576x1536,1536x576,1024x3072,3072x1024] [--simd auto|plain|relaxed]`;
const cli: BenchCli = new BenchCli("matmul-batches", USAGE);

async function main(): Promise<void> {
  const values = cli.parse({ threads: { type: "string" }, rows: { type: "string" }, types: { type: "string" }, shapes: { type: "string" }, simd: { type: "string" } });
  const threads = cli.integer("threads", values.threads ?? 2);
  const rowCounts = cli.integers("rows", values.rows ?? "1,2,4,8,16,64");
  const known: WeightType[] = ["q8_0", "q4_k", "q5_k", "q6_k", "f16", "f32"];
  const types = cli.someOf("types", values.types ?? "q8_0,q4_k,q5_k,q6_k,f16,f32", known);
  const shapes = (values.shapes ?? "576x1536,1536x576,1024x3072,3072x1024").split(",").map((s) => s.split("x").map(Number) as [number, number]);
  const simd = cli.oneOf("simd", values.simd ?? "auto", ["auto", "plain", "relaxed"] as const satisfies ReadonlyArray<SimdLevel | "auto">);
  if (shapes.some(([k, n]) => !(Number.isInteger(k) && Number.isInteger(n) && k > 0 && n > 0 && k % 32 === 0))) {
    cli.fail(`--shapes are KxN with K a multiple of 32 (K-quants skip shapes whose K is not a multiple of 256); got ${values.shapes}`);
  }
  printHeader(`node dist/bench/matmul-batches.js --threads ${threads} --rows ${rowCounts.join(",")} --types ${types.join(",")} --shapes ${shapes.map((s) => s.join("x")).join(",")} --simd ${simd}`, threads, [
    "per shape and row count: median time per call over calls alternating between the kernels, divided by the rows (µs per token row)",
  ]);
  const runtime = await WasmRuntime.create({ threads, simd });
  try {
    console.log(`\n| kernel | shape (k x n) | ${rowCounts.map((r) => `${r} row${r > 1 ? "s" : ""}`).join(" | ")} |`);
    console.log(`|---|---|${rowCounts.map(() => "---|").join("")}`);
    for (const type of types) {
      for (const [k, n] of shapes) {
        if (type.endsWith("_k") && k % 256 !== 0) continue;
        const mark = runtime.mark();
        try {
          const stored = weightsOf(type, k, n);
          const variants = variantsOf(type);
          const weights = variants.map((v) => runtime.upload(v.weights?.(stored) ?? stored));
          const perRow = rowCounts.map((rows) => timeVariants(runtime, variants, weights, rows, k, n).map((us) => us / rows));
          variants.forEach((variant, i) => {
            const one = perRow[0]![i]!;
            const cells = perRow.map((times) => `${times[i]!.toFixed(1)} µs (${(times[i]! / one).toFixed(2)})`);
            console.log(`| ${variant.kernel} | ${k} x ${n} | ${cells.join(" | ")} |`);
          });
          if (variants.length === 2) console.log(`| ${variants[1]!.kernel} / ${variants[0]!.kernel} speedup | ${k} x ${n} | ${perRow.map((t) => `${(t[0]! / t[1]!).toFixed(2)}x`).join(" | ")} |`);
        } finally {
          runtime.release(mark);
        }
      }
    }
    console.log("\n(in brackets: time per token row against one row's)");
  } finally {
    await runtime.dispose();
  }
}

await main();
