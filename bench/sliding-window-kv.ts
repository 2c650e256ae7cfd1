// What freeing sliding-window layers' KV saves on a long context: one sequence of a long prompt through the engine on
// the same model twice, its window layers' KV freed behind the window (the default) and kept for every position
// (keepWindowKv, as if every layer were global). Reports the KV bytes the sequence held at its peak in each (blocks
// and slots held, times their bytes), what each runner allocated, and whether the greedy tokens agree.
// Run: npm run build && node dist/bench/sliding-window-kv.js [options] (USAGE below; --help prints it).
import { Engine } from "../engine/engine.js";
import { kvBlockBytes } from "../engine/kv/budget.js";
import { type LoadedModel, loadModel } from "../engine/load.js";
import { attentionWindow } from "../engine/model/config.js";
import { openModelSource } from "../engine/model/source.js";
import { parseModelDtype } from "../scripts/model-dtypes.js";
import { BenchCli } from "./bench-args.js";
import { benchModelPath, printHeader, randomTokens, seededRandom } from "./bench-models.js";

/** The command line; --help prints it. */
const USAGE = `node dist/bench/sliding-window-kv.js [--preset tiny-gemma3] [--dtype q8_0] [--context 32768]
       [--tokens 8] [--threads 2] [--model path.gguf]`;
const cli: BenchCli = new BenchCli("sliding-window-kv", USAGE);
const values = cli.parse({
  preset: { type: "string", default: "tiny-gemma3" },
  dtype: { type: "string", default: "q8_0" },
  model: { type: "string" },
  context: { type: "string", default: "32768" },
  tokens: { type: "string", default: "8" },
  threads: { type: "string", default: "2" },
});
const threads = cli.integer("threads", values.threads);
const context = cli.integer("context", values.context);
const maxTokens = cli.integer("tokens", values.tokens);
const dtype = cli.check(() => parseModelDtype(values.dtype));
const path = values.model ?? (await benchModelPath(values.preset, dtype));

printHeader(`node dist/bench/sliding-window-kv.js ${process.argv.slice(2).join(" ")}`.trim(), threads, [
  `${path}; one sequence: a ${context - maxTokens}-token random prompt and ${maxTokens} greedy tokens, f32 KV, chunks of 512`,
]);

const MiB = 1024 * 1024;

interface Outcome {
  tokens: number[];
  /** Bytes of KV the sequence held at its peak. */
  heldBytes: number;
  /** Bytes the runner's caches take. */
  allocatedBytes: number;
  seconds: number;
}

async function measure(keepWindowKv: boolean, prompt: number[]): Promise<Outcome> {
  // The budget of one full context of every layer: the kept layout's need, which the freed one only partly uses.
  const config = openModelSource(path).config;
  const kvDim = config.num_key_value_heads * config.head_dim;
  const blocksPerContext = Math.ceil(context / 16);
  const budget = kvBlockBytes(config.num_hidden_layers, kvDim, 16, "f32") * blocksPerContext;
  const model: LoadedModel = await loadModel(path, { threads, contextSize: context, maxSequences: 1, batchSize: 512, kvCache: { bytes: budget, keepWindowKv } });
  try {
    const windowLayers = Array.from({ length: config.num_hidden_layers }, (_, i) => i).filter((i) => attentionWindow(config, i) > 0).length;
    const localKv = model.localKv;
    const fullLayers = localKv ? config.num_hidden_layers - windowLayers : config.num_hidden_layers;
    const blockBytes = (layers: number) => kvBlockBytes(layers, kvDim, 16, "f32");
    const engine = new Engine(model, { cache: { prefixCaching: false } });
    let peak = 0;
    const sample = () => {
      const blocks = engine.stats().kvBlocks.used;
      const slots = localKv ? localKv.capacity - localKv.freeCount - localKv.idleCount : 0;
      peak = Math.max(peak, blocks * blockBytes(fullLayers) + slots * blockBytes(windowLayers));
    };
    const timer = setInterval(sample, 5);
    const started = performance.now();
    let tokens: number[] = [];
    for await (const event of engine.submit({ input: { tokens: prompt }, maxTokens, sampling: { temperature: 0 }, ignoreEndOfGeneration: true })) {
      sample();
      if (event.type === "error") throw event.error;
      if (event.type === "finish") tokens = event.tokens;
    }
    clearInterval(timer);
    const seconds = (performance.now() - started) / 1000;
    engine.close();
    const allocatedBytes = model.runner.kvBlocks * blockBytes(fullLayers) + (model.runner.localKvBlocks ?? 0) * blockBytes(windowLayers);
    return { tokens, heldBytes: peak, allocatedBytes, seconds };
  } finally {
    await model.dispose();
  }
}

const prompt = randomTokens(seededRandom(5), context - maxTokens, openModelSource(path).config.vocab_size);
const freed = await measure(false, prompt);
const kept = await measure(true, prompt);
const mb = (bytes: number) => `${(bytes / MiB).toFixed(1)} MiB`;
console.log("| layout | KV held at the peak | KV the runner allocated | run (s) |");
console.log("|---|---|---|---|");
console.log(`| window layers freed behind the window (default) | ${mb(freed.heldBytes)} | ${mb(freed.allocatedBytes)} | ${freed.seconds.toFixed(1)} |`);
console.log(`| every position kept (keepWindowKv: every layer as a global one) | ${mb(kept.heldBytes)} | ${mb(kept.allocatedBytes)} | ${kept.seconds.toFixed(1)} |`);
console.log(`\nheld: ${(freed.heldBytes / kept.heldBytes).toFixed(3)}x of the kept layout's; greedy tokens ${freed.tokens.join(",") === kept.tokens.join(",") ? "identical" : "DIFFER"}`);
