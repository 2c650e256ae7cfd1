// Where a batched decode step's time goes on the CPU runtime: B sequences (1, 2, 4, 8, 16) decode together through
// the real WasmModelRunner, and every kernel dispatch is timed (kernels/wasm/kernel-profile.ts). Per kernel: ms per
// step, ms per token, and how its time per token at B compares with B=1 (1.00: no sharing at all; 1/B: the whole
// step's cost shared); "host" is the step's wall time outside kernels (JS between dispatches, greedy argmax on the
// logits). Also the share of each kernel's work the calling thread ran itself (ideal 1/threads). With --prefill, the
// same for one sequence's prompts of those lengths instead (chunks of --chunk tokens, the engine's default batch).
// Run: npm run build && node dist/bench/decode-profile.js [options] (USAGE below; --help prints it).
import { KV_BLOCK_SIZE, loadModel } from "../engine/load.js";
import { KernelProfile, setKernelProfile } from "../kernels/wasm/kernel-profile.js";
import type { ModelDtype } from "../scripts/model-dtypes.js";
import { BenchCli } from "./bench-args.js";
import { benchModelPath, f32KvBytes, modelWork, printHeader, seededRandom } from "./bench-models.js";
import { measureReadBandwidth } from "./memory-bandwidth.js";

interface BatchProfile {
  batch: number;
  /** Median step wall time (ms) over the timed steps. */
  stepMs: number;
  /** Summed over the timed steps. */
  kernels: Map<string, { milliseconds: number; calls: number; shares: number; mainShares: number }>;
  kernelMs: number;
  wallMs: number;
  steps: number;
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

function argmax(logits: Float32Array, offset: number, vocab: number): number {
  let best = offset;
  for (let i = offset + 1; i < offset + vocab; i++) if (logits[i]! > logits[best]!) best = i;
  return best - offset;
}

async function profileModel(preset: string, dtype: ModelDtype, batches: number[], threads: number, steps: number, promptTokens: number): Promise<BatchProfile[]> {
  const path = await benchModelPath(preset, dtype);
  const largest = Math.max(...batches);
  const context = promptTokens + steps + 8;
  const model = await loadModel(path, {
    backend: "wasm", threads, contextSize: context, maxSequences: largest, batchSize: Math.max(largest * promptTokens, 64),
    // Tables are laid out by hand below: sliding-window layers keep every block (a compute profile, not a memory one).
    kvCache: { bytes: f32KvBytes(path, context, largest + 1), dtype: "f32", keepWindowKv: true },
  });
  const vocab = model.config.vocab_size;
  const random = seededRandom(11);
  const blocksPerSequence = Math.ceil(context / KV_BLOCK_SIZE);
  const results: BatchProfile[] = [];
  try {
    for (const batch of batches) {
      const tables = Array.from({ length: batch }, (_, s) => Array.from({ length: blocksPerSequence }, (_, b) => s * blocksPerSequence + b));
      // Prefill each sequence (untimed), then one untimed decode step to warm up, then the timed steps.
      const prompts = tables.map(() => Array.from({ length: promptTokens }, () => Math.floor(random() * vocab)));
      let logits = await model.runner.forward(prompts.map((tokens, s) => ({ tokens, startPosition: 0, blockTable: tables[s]!, wantLogits: true })));
      let next = tables.map((_, s) => argmax(logits, s * vocab, vocab));
      let position = promptTokens;
      const stepTimes: number[] = [];
      const profile = new KernelProfile();
      let wallMs = 0;
      for (let step = -1; step < steps; step++) {
        if (step === 0) setKernelProfile(profile);
        const started = performance.now();
        logits = await model.runner.forward(next.map((token, s) => ({ tokens: [token], startPosition: position, blockTable: tables[s]!, wantLogits: true })));
        next = tables.map((_, s) => argmax(logits, s * vocab, vocab));
        const elapsed = performance.now() - started;
        position += 1;
        if (step >= 0) {
          stepTimes.push(elapsed);
          wallMs += elapsed;
        }
      }
      setKernelProfile(undefined);
      results.push({ batch, stepMs: median(stepTimes), kernels: profile.kernels, kernelMs: profile.totalMilliseconds(), wallMs, steps });
    }
  } finally {
    setKernelProfile(undefined);
    await model.dispose();
  }
  return results;
}

/**
 * One sequence's prefill of each prompt length, in chunks of `chunk` tokens, every dispatch timed (best of 2), after
 * one untimed prefill of the longest into the same cache blocks: a first write into fresh pages costs page faults
 * (kv_store took 209 ms of a first 1,200-token prefill and 6 ms of the next), which no later prefill pays.
 */
async function profilePrefill(preset: string, dtype: ModelDtype, lengths: number[], threads: number, chunk: number): Promise<BatchProfile[]> {
  const path = await benchModelPath(preset, dtype);
  const context = Math.max(...lengths) + 8;
  const model = await loadModel(path, {
    backend: "wasm", threads, contextSize: context, maxSequences: 1, batchSize: chunk,
    kvCache: { bytes: f32KvBytes(path, context, 2), dtype: "f32", keepWindowKv: true },
  });
  const random = seededRandom(12);
  const table = Array.from({ length: Math.ceil(context / KV_BLOCK_SIZE) }, (_, b) => b);
  const results: BatchProfile[] = [];
  const prefill = async (tokens: number[]) => {
    for (let start = 0; start < tokens.length; start += chunk) {
      const piece = tokens.slice(start, start + chunk);
      await model.runner.forward([{ tokens: piece, startPosition: start, blockTable: table, wantLogits: start + chunk >= tokens.length }]);
    }
  };
  try {
    await prefill(Array.from({ length: Math.max(...lengths) }, () => Math.floor(random() * model.config.vocab_size)));
    for (const length of lengths) {
      const tokens = Array.from({ length }, () => Math.floor(random() * model.config.vocab_size));
      let best: BatchProfile | undefined;
      for (let round = 0; round < 2; round++) {
        const profile = new KernelProfile();
        setKernelProfile(profile);
        const started = performance.now();
        await prefill(tokens);
        const wallMs = performance.now() - started;
        setKernelProfile(undefined);
        if (!best || wallMs < best.wallMs) best = { batch: length, stepMs: wallMs, kernels: profile.kernels, kernelMs: profile.totalMilliseconds(), wallMs, steps: 1 };
      }
      results.push(best!);
    }
  } finally {
    setKernelProfile(undefined);
    await model.dispose();
  }
  return results;
}

function printPrefillProfile(title: string, profiles: BatchProfile[], threads: number): void {
  console.log(`\n### ${title}, prefill of one sequence\n`);
  console.log(`| | ${profiles.map((p) => `${p.batch} tokens`).join(" | ")} |`);
  console.log(`|---|${profiles.map(() => "---|").join("")}`);
  console.log(`| prefill (ms) | ${profiles.map((p) => p.wallMs.toFixed(1)).join(" | ")} |`);
  console.log(`| tokens/s | ${profiles.map((p) => ((p.batch * 1000) / p.wallMs).toFixed(1)).join(" | ")} |`);
  const names = [...new Set(profiles.flatMap((p) => [...p.kernels.keys()]))];
  const ms = (p: BatchProfile, name: string) => p.kernels.get(name)?.milliseconds ?? 0;
  names.sort((a, b) => ms(profiles.at(-1)!, b) - ms(profiles.at(-1)!, a));
  console.log("\nms by kernel (in brackets: share of the prefill)\n");
  console.log(`| kernel | ${profiles.map((p) => `${p.batch} tokens`).join(" | ")} |`);
  console.log(`|---|${profiles.map(() => "---|").join("")}`);
  for (const name of names) console.log(`| ${name} | ${profiles.map((p) => `${ms(p, name).toFixed(1)} (${((ms(p, name) / p.wallMs) * 100).toFixed(0)}%)`).join(" | ")} |`);
  console.log(`| host (outside kernels) | ${profiles.map((p) => `${(p.wallMs - p.kernelMs).toFixed(1)} (${(((p.wallMs - p.kernelMs) / p.wallMs) * 100).toFixed(0)}%)`).join(" | ")} |`);
  console.log(`\n(${threads} threads)`);
}

function printProfile(title: string, profiles: BatchProfile[], threads: number, weightBytes: number, bandwidth: number): void {
  const first = profiles[0]!;
  console.log(`\n### ${title}\n`);
  console.log(`| | ${profiles.map((p) => `B=${p.batch}`).join(" | ")} |`);
  console.log(`|---|${profiles.map(() => "---|").join("")}`);
  console.log(`| step, median (ms) | ${profiles.map((p) => p.stepMs.toFixed(2)).join(" | ")} |`);
  // Every step reads every weight once, whatever B: the step's weight reads against the machine's read bandwidth.
  console.log(`| weight reads, % of read bandwidth | ${profiles.map((p) => `${((weightBytes / (p.stepMs / 1000) / bandwidth) * 100).toFixed(0)}%`).join(" | ")} |`);
  console.log(`| tokens/s | ${profiles.map((p) => ((p.batch * 1000) / p.stepMs).toFixed(1)).join(" | ")} |`);
  console.log(`| per token vs B=1 | ${profiles.map((p) => (p.stepMs / p.batch / first.stepMs).toFixed(2)).join(" | ")} |`);
  const names = [...new Set(profiles.flatMap((p) => [...p.kernels.keys()]))];
  const msPerStep = (p: BatchProfile, name: string) => (p.kernels.get(name)?.milliseconds ?? 0) / p.steps;
  names.sort((a, b) => msPerStep(profiles.at(-1)!, b) - msPerStep(profiles.at(-1)!, a));
  console.log("\nms per step by kernel (in brackets: its time per token against B=1's; main: share of its work the calling thread ran)\n");
  console.log(`| kernel | ${profiles.map((p) => `B=${p.batch}`).join(" | ")} | main, B=${profiles.at(-1)!.batch} |`);
  console.log(`|---|${profiles.map(() => "---|").join("")}---|`);
  for (const name of names) {
    const base = msPerStep(first, name);
    const cells = profiles.map((p) => {
      const ms = msPerStep(p, name);
      return base > 0 ? `${ms.toFixed(3)} (${(ms / p.batch / base).toFixed(2)})` : ms.toFixed(3);
    });
    const last = profiles.at(-1)!.kernels.get(name);
    const main = last && last.shares > 0 ? (last.mainShares / last.shares).toFixed(2) : "-";
    console.log(`| ${name} | ${cells.join(" | ")} | ${main} |`);
  }
  const host = (p: BatchProfile) => (p.wallMs - p.kernelMs) / p.steps;
  console.log(`| host (outside kernels: JS, argmax) | ${profiles.map((p) => `${host(p).toFixed(3)} (${(host(p) / p.batch / host(first)).toFixed(2)})`).join(" | ")} | - |`);
  console.log(`\n(ideal main share with ${threads} threads: ${(1 / threads).toFixed(2)})`);
}

/** The command line; --help prints it. */
const USAGE = `node dist/bench/decode-profile.js [--models smollm2-135m:q8_0,qwen3-0.6b:q4_k_m]
       [--batches 1,2,4,8,16] [--threads 2] [--steps 16] [--prompt 32] [--prefill 128,1024 [--chunk 512]]`;
const cli: BenchCli = new BenchCli("decode-profile", USAGE);

async function main(): Promise<void> {
  const values = cli.parse({
    models: { type: "string" }, batches: { type: "string" }, threads: { type: "string" }, steps: { type: "string" }, prompt: { type: "string" }, prefill: { type: "string" }, chunk: { type: "string" },
  });
  const models = (values.models ?? "smollm2-135m:q8_0,qwen3-0.6b:q4_k_m").split(",").map((spec) => spec.split(":") as [string, ModelDtype]);
  const batches = cli.integers("batches", values.batches ?? "1,2,4,8,16");
  const threads = cli.integer("threads", values.threads ?? 2);
  const steps = cli.integer("steps", values.steps ?? 16);
  const prompt = cli.integer("prompt", values.prompt ?? 32);
  const prefill = values.prefill === undefined ? undefined : cli.integers("prefill", values.prefill);
  const chunk = cli.integer("chunk", values.chunk ?? 512);
  if (prefill) {
    printHeader(`node dist/bench/decode-profile.js --models ${models.map((m) => m.join(":")).join(",")} --prefill ${prefill.join(",")} --chunk ${chunk} --threads ${threads}`, threads, [
      `random-weight bench models; one sequence's random prompt of each length, forwarded in chunks of ${chunk} tokens (logits for the last only), best of 2,`,
      "after one untimed prefill of the longest into the same cache blocks (its first touch of fresh pages);",
      "every kernel dispatch timed on the calling thread",
    ]);
    for (const [preset, dtype] of models) printPrefillProfile(`${preset} ${dtype.toUpperCase()}`, await profilePrefill(preset, dtype, prefill, threads, chunk), threads);
    return;
  }
  printHeader(`node dist/bench/decode-profile.js --models ${models.map((m) => m.join(":")).join(",")} --batches ${batches.join(",")} --threads ${threads} --steps ${steps} --prompt ${prompt}`, threads, [
    `random-weight bench models; each batch: B sequences of a ${prompt}-token random prompt (prefilled untimed), one untimed decode step, then ${steps} timed steps;`,
    "greedy argmax on the host; every kernel dispatch timed on the calling thread (the timing adds about a microsecond per dispatch)",
  ]);
  const bandwidth = await measureReadBandwidth(1 << 30, 5, threads);
  console.log(`\nread bandwidth (sum_rows over 1 GiB on ${threads} threads, best of 5): ${(bandwidth / 1e9).toFixed(1)} GB/s`);
  for (const [preset, dtype] of models) {
    const path = await benchModelPath(preset, dtype);
    const { bytesPerToken } = modelWork(path);
    console.log(`\n${preset} ${dtype.toUpperCase()}: ${(bytesPerToken / 1e6).toFixed(0)} MB of weights read per decode step`);
    printProfile(`${preset} ${dtype.toUpperCase()}`, await profileModel(preset, dtype, batches, threads, steps, prompt), threads, bytesPerToken, bandwidth);
  }
}

await main();
