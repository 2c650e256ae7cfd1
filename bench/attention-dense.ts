// The WebAssembly attention_dense kernel (bidirectional attention of a vision encoder) on one image's shape: Gemma 3's
// SigLIP at 896 x 896 is 4096 tokens, 16 heads, head dim 72. Reports the median time per call, its GFLOP/s (4
// tokens^2 heads headDim: the two matrix products; the exponentials are not counted) and the share of the machine's
// peak, and the CPU time of the calling thread per call (robust on a busy machine, where wall time is not).
// Run: npm run build && node dist/bench/attention-dense.js [options] (USAGE below; --help prints it).
import { randomF32 } from "../kernels/case.js";
import { WasmRuntime } from "../kernels/wasm/runtime.js";
import type { SimdLevel } from "../kernels/wasm/module-path.js";
import { BenchCli } from "./bench-args.js";
import { median, printHeader } from "./bench-models.js";

/** The command line; --help prints it. */
const USAGE = `node dist/bench/attention-dense.js [--threads 2] [--tokens 4096] [--heads 16] [--head-dim 72]
       [--block-rows 64] [--repeats 5] [--simd auto|plain|relaxed]`;
const cli: BenchCli = new BenchCli("attention-dense", USAGE);

/** Seconds of CPU (user + system) the process has used so far. */
function cpuSeconds(): number {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1e6;
}

async function main(): Promise<void> {
  const values = cli.parse({
    threads: { type: "string" }, tokens: { type: "string" }, heads: { type: "string" }, "head-dim": { type: "string" },
    "block-rows": { type: "string" }, repeats: { type: "string" }, simd: { type: "string" },
  });
  const threads = cli.integer("threads", values.threads ?? 2);
  const tokens = cli.integer("tokens", values.tokens ?? 4096);
  const heads = cli.integer("heads", values.heads ?? 16);
  const headDim = cli.integer("head-dim", values["head-dim"] ?? 72);
  const blockRows = cli.integer("block-rows", values["block-rows"] ?? 64);
  const repeats = cli.integer("repeats", values.repeats ?? 5);
  const simd = cli.oneOf("simd", values.simd ?? "auto", ["auto", "plain", "relaxed"] as const satisfies ReadonlyArray<SimdLevel | "auto">);
  const machine = printHeader(
    `node dist/bench/attention-dense.js --threads ${threads} --tokens ${tokens} --heads ${heads} --head-dim ${headDim} --block-rows ${blockRows} --repeats ${repeats} --simd ${simd}`,
    threads,
    ["median of the timed calls (after one untimed); FLOP = 4 tokens^2 heads headDim (q k^T and p v; exponentials not counted)"],
  );
  const runtime = await WasmRuntime.create({ threads, simd });
  try {
    const floats = tokens * heads * headDim;
    const q = runtime.upload(randomF32(floats, 1, 2));
    const k = runtime.upload(randomF32(floats, 2, 2));
    const v = runtime.upload(randomF32(floats, 3, 2));
    const out = runtime.alloc(floats * 4);
    const items = heads * Math.ceil(tokens / blockRows);
    const args = [q, k, v, out, tokens, heads, headDim, 1 / Math.sqrt(headDim), blockRows];
    const wall: number[] = [];
    const cpu: number[] = [];
    for (let call = -1; call < repeats; call++) {
      const startedCpu = cpuSeconds();
      const started = performance.now();
      runtime.parallel("attention_dense", args, items);
      if (call < 0) continue;
      wall.push((performance.now() - started) / 1000);
      cpu.push(cpuSeconds() - startedCpu);
    }
    const flop = 4 * tokens * tokens * heads * headDim;
    const seconds = median(wall);
    const gflops = flop / seconds / 1e9;
    console.log(`\n| tokens | heads | head dim | block rows | threads | ms per call | GFLOP/s | of peak | process CPU s per call |`);
    console.log(`|---|---|---|---|---|---|---|---|---|`);
    console.log(`| ${tokens} | ${heads} | ${headDim} | ${blockRows} | ${threads} | ${(seconds * 1000).toFixed(1)} | ${gflops.toFixed(1)} | ${((flop / seconds / ((machine.peakFlops * threads) / machine.cores)) * 100).toFixed(1)}% | ${median(cpu).toFixed(2)} |`);
    console.log(`\n(peak: ${((machine.peakFlops * threads) / machine.cores / 1e9).toFixed(0)} GFLOP/s for ${threads} of ${machine.cores} cores; calls ${wall.map((s) => (s * 1000).toFixed(0)).join(", ")} ms)`);
  } finally {
    await runtime.dispose();
  }
}

await main();
