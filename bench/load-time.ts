// How long loading a model of about 1 GB from the page cache takes: header parse, tensor reads into
// WebAssembly memory, and buffer allocation, best of three after one warm-up read.
// Run: npm run build && node dist/bench/load-time.js (no options; --help prints USAGE below).
import { existsSync } from "node:fs";
import { join } from "node:path";
import { loadModel } from "../engine/load.js";
import { REPOSITORY_ROOT } from "../engine/testing/fixtures.js";
import { generateModel } from "../scripts/generate-model.js";
import { BenchCli } from "./bench-args.js";
import { describeMachine } from "./machine.js";

/** The command line; --help prints it. */
const USAGE = "node dist/bench/load-time.js";
new BenchCli("load-time", USAGE).parse({});

const path = join(REPOSITORY_ROOT, ".cache", "bench-models", "qwen3-0.6b-f16.gguf");
if (!existsSync(path)) {
  process.stderr.write(`generating ${path} ...\n`);
  await generateModel({ preset: "qwen3-0.6b", format: "gguf", dtype: "f16", out: path });
}
const machine = describeMachine();
let best = Infinity;
let bytes = 0;
for (let run = 0; run < 4; run++) {
  const start = performance.now();
  const model = await loadModel(path, { contextSize: 256 });
  const seconds = (performance.now() - start) / 1000;
  bytes = model.tensorBytes;
  await model.dispose();
  if (run > 0) best = Math.min(best, seconds);
}
console.log(`# node dist/bench/load-time.js — ${machine.date}, ${machine.cpu}, ${machine.cores} cores`);
console.log(`qwen3-0.6b F16 GGUF (${(bytes / 1e9).toFixed(2)} GB of tensors) from the page cache: ${best.toFixed(2)} s (${(bytes / 1e9 / best).toFixed(2)} GB/s), best of 3`);
process.exit(0);
