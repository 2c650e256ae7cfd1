// How long one client's stream stalls while another client sends something expensive: an 8 MB prompt, a long prompt
// to prefill, a huge schema. A decoding stream runs on the engine thread (submitted directly, end-of-generation
// ignored, so it always decodes) while the other request goes over HTTP to the same server; the figure is the
// stream's longest gap between tokens while the other request is in flight, against its median gap.
// The peer: llama.cpp's server interleaves decodes between prefill micro-batches of n_ubatch (512) prompt tokens,
// so its longest gap is about one 512-token prefill, timed here with node-llama-cpp on the same file.
// Run: npm run build && node dist/bench/stall.js [--threads 2] [--repeats 3]
import { parseArgs } from "node:util";
import { WorkerEngine } from "../engine/host/worker-engine.js";
import { REFERENCE_CONTEXT_OPTIONS, referenceLlama } from "../engine/testing/llama-cpp.js";
import { createEndpoints } from "../server/adapters/endpoints.js";
import { OpenAccess } from "../server/http/auth.js";
import { startServer } from "../server/server.js";
import { ModelRegistry, defaultSlugs } from "../server/models.js";
import { benchModelPath, f32KvBytes, median, printHeader, randomTokens, seededRandom } from "./bench-models.js";

const PRESET = "smollm2-135m";
const DTYPE = "q8_0";
const CONTEXT = 4096;

/** What the other client sends. */
interface Scenario {
  name: string;
  body(model: string): string;
}

const words = (count: number) => Array.from({ length: count }, (_, i) => `word${i % 977}`).join(" ");

const SCENARIOS: Scenario[] = [
  { name: "8 MB prompt (refused: past the context)", body: (model) => JSON.stringify({ model, max_tokens: 1, messages: [{ role: "user", content: "lorem ipsum dolor sit amet ".repeat(300_000) }] }) },
  { name: "3,300-token prompt (prefilled, 1 token out)", body: (model) => JSON.stringify({ model, max_tokens: 1, messages: [{ role: "user", content: words(850) }] }) },
  {
    name: "schema with 20,000 required properties",
    body: (model) => {
      const properties = Object.fromEntries(Array.from({ length: 20_000 }, (_, i) => [`p${i}`, { type: "integer" }]));
      const schema = { type: "object", properties, required: Object.keys(properties), additionalProperties: false };
      return JSON.stringify({ model, max_tokens: 4, messages: [{ role: "user", content: "JSON please" }], response_format: { type: "json_schema", json_schema: { name: "big", schema } } });
    },
  },
];

interface Measurement {
  medianGapMs: number;
  maxGapMs: number;
  status: number;
  requestMs: number;
}

/** One run: the stream decodes; after 1 s the other request goes out; the gaps while it is in flight are measured. */
async function measure(engine: WorkerEngine, port: number, slug: string, scenario: Scenario, prompt: number[]): Promise<Measurement> {
  const arrivals: number[] = [];
  let inFlight: [number, number] | undefined;
  const stream = (async () => {
    for await (const event of engine.submit({ input: { tokens: prompt }, maxTokens: CONTEXT - prompt.length, sampling: { temperature: 0 }, ignoreEndOfGeneration: true, id: `stream-${Math.random()}` })) {
      if (event.type === "text") arrivals.push(performance.now());
      if (inFlight && performance.now() > inFlight[1] + 1000) break;
    }
  })();
  while (arrivals.length < 5) await new Promise((resolve) => setTimeout(resolve, 20));
  await new Promise((resolve) => setTimeout(resolve, 1000));
  const body = scenario.body(slug);
  const sent = performance.now();
  const response = await fetch(`http://127.0.0.1:${port}/v1/chat/completions`, { method: "POST", headers: { "content-type": "application/json" }, body });
  await response.text();
  const answered = performance.now();
  inFlight = [sent, answered];
  await stream;
  const gaps = (from: number, to: number) => {
    const result: number[] = [];
    for (let i = 1; i < arrivals.length; i++) if (arrivals[i] >= from && arrivals[i - 1] <= to) result.push(arrivals[i] - arrivals[i - 1]);
    return result;
  };
  const during = gaps(sent, answered);
  const before = gaps(0, sent - 1);
  return { medianGapMs: median(before), maxGapMs: Math.max(0, ...during), status: response.status, requestMs: answered - sent };
}

/** llama.cpp's time to prefill 512 tokens (one n_ubatch) on the same file: the longest stall its server's interleaving allows. */
async function llamaCppUbatchMs(path: string, threads: number, vocabSize: number): Promise<number> {
  const llama = await referenceLlama();
  const model = await llama.loadModel({ modelPath: path });
  try {
    const context = await model.createContext({ contextSize: 1024, threads, batchSize: 512, ...REFERENCE_CONTEXT_OPTIONS });
    let best = Number.POSITIVE_INFINITY;
    for (let run = 0; run < 3; run++) {
      const sequence = context.getSequence();
      const tokens = randomTokens(seededRandom(run + 1), 512, vocabSize);
      const start = performance.now();
      await sequence.evaluateWithoutGeneratingNewTokens(tokens as never);
      best = Math.min(best, performance.now() - start);
      sequence.dispose();
    }
    await context.dispose();
    return best;
  } finally {
    await model.dispose();
  }
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { threads: { type: "string" }, repeats: { type: "string" } } });
  const threads = Number(values.threads ?? 2);
  const repeats = Number(values.repeats ?? 3);
  const path = await benchModelPath(PRESET, DTYPE);
  printHeader(`node dist/bench/stall.js --threads ${threads} --repeats ${repeats}`, threads, [
    `model ${PRESET} ${DTYPE.toUpperCase()} random weights, context ${CONTEXT}, f32 KV; the stream: a 32-token prompt decoding on the engine thread; the other request over HTTP (uWebSockets.js, no auth)`,
    `each cell: ${repeats} runs on a fresh engine, worst longest gap and the spread; stepTargetMs 200 (the default) against 0 (whole-batch prefill, the behaviour before chunking)`,
  ]);
  const prompt = randomTokens(seededRandom(7), 32, 49152);
  console.log("");
  console.log("| other request | stepTargetMs | its status | its time (ms) | stream median gap (ms) | stream longest gap while it ran (ms), runs | vs median |");
  console.log("|---|---|---|---|---|---|---|");
  for (const scenario of SCENARIOS) {
    for (const stepTargetMs of [200, 0]) {
      const runs: Measurement[] = [];
      for (let run = 0; run < repeats; run++) {
        const engine = await WorkerEngine.start(path, { load: { threads, contextSize: CONTEXT, maxSequences: 4, kvCache: { bytes: f32KvBytes(path, CONTEXT, 3), dtype: "f32" } }, engine: { stepTargetMs } });
        const slugs = defaultSlugs(engine.model);
        const registry = new ModelRegistry([{ model: engine.model, engine, slugs, created: 1 }]);
        const server = await startServer({ registry, auth: new OpenAccess(), endpoints: createEndpoints(registry) }, "127.0.0.1", 0);
        try {
          runs.push(await measure(engine, server.port, slugs.openai[0]!, scenario, prompt));
        } finally {
          server.close();
          await engine.close();
        }
      }
      const worst = Math.max(...runs.map((r) => r.maxGapMs));
      const medianGap = median(runs.map((r) => r.medianGapMs));
      console.log(`| ${scenario.name} | ${stepTargetMs} | ${[...new Set(runs.map((r) => r.status))].join("/")} | ${median(runs.map((r) => r.requestMs)).toFixed(0)} | ${medianGap.toFixed(1)} | ${worst.toFixed(0)} (${runs.map((r) => r.maxGapMs.toFixed(0)).join(", ")}) | ${(worst / medianGap).toFixed(1)}x |`);
      if (scenario.name.startsWith("8 MB") && stepTargetMs === 0) break; // refused before any prefill: pacing plays no part
    }
  }
  const ubatch = await llamaCppUbatchMs(path, threads, 49152);
  console.log("");
  console.log(`peer: llama.cpp (node-llama-cpp, same file, ${threads} threads) prefills one 512-token n_ubatch in ${ubatch.toFixed(0)} ms (best of 3): llama-server's longest stall behind a long prompt`);
}

await main();
