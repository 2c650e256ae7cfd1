// What a fork group (EngineRequest.fork, OpenAI's `n`) saves: n choices of one prompt as one fork group against n
// separate requests of the same prompt submitted together, on the same loaded model, each round on a fresh engine with
// the prefix cache on (as served) and a prompt of its own, the two alternating. Reports the prompt rows computed
// (engine stats: computedPrompt, and forkedPrompt for the group), the time until every choice has its first token,
// and the time until all have finished; medians over the rounds with their spread, and the ratios.
// Run: npm run build && node dist/bench/fork-prefill.js [options] (USAGE below; --help prints it).
import { Engine } from "../engine/engine.js";
import { loadModel } from "../engine/load.js";
import { openModelSource } from "../engine/model/source.js";
import type { EngineRequest } from "../engine/request.js";
import { parseModelDtype } from "../scripts/model-dtypes.js";
import { BenchCli } from "./bench-args.js";
import { benchModelPath, f32KvBytes, median, printHeader, randomTokens, seededRandom } from "./bench-models.js";

/** The command line; --help prints it. */
const USAGE = `node dist/bench/fork-prefill.js [--preset smollm2-135m] [--dtype q8_0] [--n 8] [--prompt 256]
       [--decode 16] [--rounds 3] [--threads 2] [--batch 512] [--model path.gguf]`;
const cli: BenchCli = new BenchCli("fork-prefill", USAGE);
const values = cli.parse({
  preset: { type: "string", default: "smollm2-135m" },
  dtype: { type: "string", default: "q8_0" },
  model: { type: "string" },
  n: { type: "string", default: "8" },
  prompt: { type: "string", default: "256" },
  decode: { type: "string", default: "16" },
  rounds: { type: "string", default: "3" },
  threads: { type: "string", default: "2" },
  batch: { type: "string", default: "512" },
});
const n = cli.integer("n", values.n, 2, 16);
const promptLength = cli.integer("prompt", values.prompt, 2);
const decode = cli.integer("decode", values.decode);
const rounds = cli.integer("rounds", values.rounds);
const threads = cli.integer("threads", values.threads);
const batchSize = cli.integer("batch", values.batch);
const dtype = cli.check(() => parseModelDtype(values.dtype));
const path = values.model ?? (await benchModelPath(values.preset, dtype));

const context = promptLength + decode + 16;
printHeader(`node dist/bench/fork-prefill.js ${process.argv.slice(2).join(" ")}`.trim(), threads, [
  `${path}; n = ${n} choices of a ${promptLength}-token random prompt, ${decode} tokens each at temperature 1 (seeds seed + i), ` +
    `batch ${batchSize} tokens, ${n} sequences, f32 KV for ${n} contexts, prefix cache on; a fresh engine and prompt per round`,
]);

const model = await loadModel(path, { threads, contextSize: context, maxSequences: n, batchSize, kvCache: { bytes: f32KvBytes(path, context, n + 1) } });
const vocab = openModelSource(path).config.vocab_size;

interface Outcome {
  computedPrompt: number;
  forkedPrompt: number;
  /** Seconds from submitting until every choice had its first token, and until all finished. */
  firstTokens: number;
  seconds: number;
}

async function run(mode: "fork" | "separate", round: number): Promise<Outcome> {
  const prompt = randomTokens(seededRandom(1000 + round), promptLength, vocab);
  const engine = new Engine(model);
  const requests: EngineRequest[] = Array.from({ length: n }, (_, i) => ({
    id: `${mode}-${round}-${i}`, input: { tokens: prompt }, maxTokens: decode, ignoreEndOfGeneration: true,
    sampling: { temperature: 1, seed: round * 100 + i },
    ...(mode === "fork" ? { fork: { group: `round-${round}`, size: n } } : {}),
  }));
  const started = performance.now();
  let firstTokens = 0;
  await Promise.all(requests.map(async (request) => {
    // The first text (or the finish, for text held back to the end) marks the choice's first token.
    let first: number | undefined;
    for await (const event of engine.submit(request)) {
      if (event.type === "error") throw event.error;
      if (event.type === "text" || event.type === "finish") first ??= performance.now() - started;
    }
    firstTokens = Math.max(firstTokens, first ?? 0);
  }));
  const seconds = (performance.now() - started) / 1000;
  const { computedPrompt, forkedPrompt } = engine.stats().tokens;
  engine.close();
  return { computedPrompt, forkedPrompt, firstTokens: firstTokens / 1000, seconds };
}

const results: Record<"fork" | "separate", Outcome[]> = { fork: [], separate: [] };
await run("fork", -1); // warm-up: kernels, scratch buffers
for (let round = 0; round < rounds; round++) {
  // Alternating, and each mode first in every other round, so a drift of the machine falls on both.
  const order = round % 2 === 0 ? (["separate", "fork"] as const) : (["fork", "separate"] as const);
  for (const mode of order) {
    const outcome = await run(mode, round);
    results[mode].push(outcome);
    console.log(`# round ${round + 1} ${mode}: ${outcome.computedPrompt} prompt rows computed, ${outcome.forkedPrompt} forked, every first token ${outcome.firstTokens.toFixed(2)} s, all done ${outcome.seconds.toFixed(2)} s`);
  }
}
await model.dispose();

const spread = (list: number[], digits: number) => `${median(list).toFixed(digits)} (${Math.min(...list).toFixed(digits)}-${Math.max(...list).toFixed(digits)})`;
const column = (mode: "fork" | "separate", key: keyof Outcome, digits: number) => spread(results[mode].map((outcome) => outcome[key]), digits);
console.log(`\n| ${n} choices of a ${promptLength}-token prompt | prompt rows computed | prompt tokens forked | every first token (s) | all done (s) |`);
console.log("|---|---|---|---|---|");
console.log(`| ${n} separate requests, submitted together | ${column("separate", "computedPrompt", 0)} | ${column("separate", "forkedPrompt", 0)} | ${column("separate", "firstTokens", 2)} | ${column("separate", "seconds", 2)} |`);
console.log(`| one fork group (n = ${n}) | ${column("fork", "computedPrompt", 0)} | ${column("fork", "forkedPrompt", 0)} | ${column("fork", "firstTokens", 2)} | ${column("fork", "seconds", 2)} |`);
const ratios = (key: keyof Outcome) => results.separate.map((outcome, i) => outcome[key] / results.fork[i][key]);
console.log(`\nseparate / fork, paired by round: prompt rows ${spread(ratios("computedPrompt"), 2)}x, every first token ${spread(ratios("firstTokens"), 2)}x, all done ${spread(ratios("seconds"), 2)}x`);
