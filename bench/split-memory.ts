// What spreading a model over several WebAssembly memories costs: the same model loaded in one memory and forced into
// 2 and 4 (consecutive layers per memory, each with its own runtime and threads). generate() runs alternated between
// layouts run after run, then single decode steps alternated step by step; medians and spread, ratios to the first.
// Run: npm run build && node dist/bench/split-memory.js [options] (USAGE below; --help prints it).
import { generate } from "../engine/generate.js";
import { type LoadedModel, loadModel } from "../engine/load.js";
import { openModelSource } from "../engine/model/source.js";
import { parseModelDtype } from "../scripts/model-dtypes.js";
import { BenchCli } from "./bench-args.js";
import { benchModelPath, f32KvBytes, printHeader, randomTokens, seededRandom } from "./bench-models.js";

/** The command line; --help prints it. */
const USAGE = `node dist/bench/split-memory.js [--preset qwen3-0.6b] [--dtype q8_0] [--memories 1,2,4]
       [--prompt 128] [--tokens 64] [--repeats 5] [--threads 2] [--context 1024] [--model path.gguf]`;
const cli: BenchCli = new BenchCli("split-memory", USAGE);
const values = cli.parse({
  preset: { type: "string", default: "qwen3-0.6b" },
  dtype: { type: "string", default: "q8_0" },
  model: { type: "string" },
  memories: { type: "string", default: "1,2,4" },
  prompt: { type: "string", default: "128" },
  tokens: { type: "string", default: "64" },
  repeats: { type: "string", default: "5" },
  threads: { type: "string", default: "2" },
  context: { type: "string", default: "1024" },
});
const threads = cli.integer("threads", values.threads);
const counts = cli.integers("memories", values.memories);
const promptLength = cli.integer("prompt", values.prompt);
const maxTokens = cli.integer("tokens", values.tokens);
const repeats = cli.integer("repeats", values.repeats);
const context = cli.integer("context", values.context);
const dtype = cli.check(() => parseModelDtype(values.dtype));
const path = values.model ?? (await benchModelPath(values.preset, dtype));

printHeader(`node dist/bench/split-memory.js ${process.argv.slice(2).join(" ")}`.trim(), threads, [
  `${path}; ${promptLength}-token prompt, ${maxTokens} greedy tokens, ${repeats} runs per layout, layouts alternated in rotating order`,
]);

interface Layout {
  memories: number;
  model: LoadedModel;
  prefill: number[];
  decode: number[];
}
const layouts: Layout[] = [];
const layers = openModelSource(path).config.num_hidden_layers;
const kvCache = { bytes: f32KvBytes(path, context, 2) / 2, dtype: "f16" as const }; // two contexts of f16 KV
for (const memories of counts) {
  const started = performance.now();
  const model = await loadModel(path, {
    threads, contextSize: context, kvCache, maxSequences: 4,
    wasm: memories === 1 ? {} : { maxLayersPerMemory: Math.ceil(layers / memories) },
  });
  layouts.push({ memories, model, prefill: [], decode: [] });
  process.stderr.write(`loaded ${model.device} in ${((performance.now() - started) / 1000).toFixed(1)} s\n`);
}

const prompt = randomTokens(seededRandom(1), promptLength, layouts[0].model.config.vocab_size);
// The order rotates from run to run, so that no layout always follows the same one.
const rotated = (turn: number) => layouts.map((_, i) => layouts[(turn + i) % layouts.length]);
for (let run = 0; run <= repeats; run++) {
  for (const layout of rotated(run)) {
    for await (const event of generate(layout.model, prompt, { maxTokens, sampling: { temperature: 0 }, ignoreEndOfGeneration: true })) {
      if (event.type !== "done" || run === 0) continue; // run 0 warms up
      layout.prefill.push(event.prefillTokensPerSecond);
      layout.decode.push(event.decodeTokensPerSecond);
    }
  }
}

// Decode steps alternated layout by layout, step by step, so that whatever else the machine runs hits every layout
// alike: the runner's forward pass alone, one token at a time after the prompt.
const steps = maxTokens * repeats;
const stepMs = layouts.map(() => [] as number[]);
const blockTable = Array.from({ length: Math.ceil((promptLength + steps) / 16) }, (_, i) => i);
for (const layout of layouts) layout.model.runner.forward([{ tokens: prompt, startPosition: 0, blockTable, wantLogits: true }]);
for (let step = 0; step < steps; step++) {
  for (const layout of rotated(step)) {
    const started = performance.now();
    layout.model.runner.forward([{ tokens: [prompt[step % promptLength]], startPosition: promptLength + step, blockTable, wantLogits: true }]);
    stepMs[layouts.indexOf(layout)].push(performance.now() - started);
  }
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const spread = (xs: number[]) => `${Math.min(...xs).toFixed(1)}-${Math.max(...xs).toFixed(1)}`;
const base = layouts[0];
console.log("| memories | prefill tok/s (median, range) | vs first | decode tok/s (median, range) | vs first |");
console.log("|---|---|---|---|---|");
for (const layout of layouts) {
  console.log(
    `| ${layout.memories} | ${median(layout.prefill).toFixed(1)} (${spread(layout.prefill)}) | ${(median(layout.prefill) / median(base.prefill)).toFixed(3)} ` +
    `| ${median(layout.decode).toFixed(2)} (${spread(layout.decode)}) | ${(median(layout.decode) / median(base.decode)).toFixed(3)} |`,
  );
}
console.log("");
console.log(`| memories | decode step ms, median of ${steps} alternated steps (p10-p90) | vs first |`);
console.log("|---|---|---|");
const percentile = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) * p)];
layouts.forEach((layout, i) => {
  console.log(`| ${layout.memories} | ${median(stepMs[i]).toFixed(2)} (${percentile(stepMs[i], 0.1).toFixed(2)}-${percentile(stepMs[i], 0.9).toFixed(2)}) | ${(median(stepMs[i]) / median(stepMs[0])).toFixed(3)} |`);
});
for (const layout of layouts) await layout.model.dispose();
process.exit(0);
