// How long one client's stream stalls while another client sends something expensive: an 8 MB prompt, a long prompt
// to prefill, a huge schema. A decoding stream runs on the engine thread (submitted directly, end-of-generation
// ignored, so it always decodes) while the other request goes over HTTP to the same server; the figure is the
// stream's longest gap between tokens while the other request is in flight, against its median gap.
// The peer: llama.cpp's server interleaves decodes between prefill micro-batches of n_ubatch (512) prompt tokens,
// so its longest gap is about one 512-token prefill, timed here with node-llama-cpp on the same file.
// Run: npm run build && node dist/bench/stall.js [options] (USAGE below; --help prints it).
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { WorkerEngine } from "../engine/host/worker-engine.js";
import { REFERENCE_CONTEXT_OPTIONS, referenceLlama } from "../engine/testing/llama-cpp.js";
import { createEndpoints } from "../server/adapters/endpoints.js";
import { OpenAccess } from "../server/http/auth.js";
import { openResponseStorage } from "../server/platform/store/response-storage.js";
import { startServer } from "../server/server.js";
import { ModelRegistry, defaultSlugs } from "../server/models.js";
import { BenchCli } from "./bench-args.js";
import { benchModelPath, f32KvBytes, median, printHeader, randomTokens, seededRandom } from "./bench-models.js";

const PRESET = "smollm2-135m";
const DTYPE = "q8_0";
const CONTEXT = 4096;

/** What the other client sends, and where. */
interface Scenario {
  name: string;
  /** The route it goes to (default /v1/chat/completions). */
  path?: string;
  /** Whether it prefills a long prompt (measured again with pacing off, to show what pacing does). */
  prefills?: boolean;
  /** The body; none: the baseline, nothing sent for two seconds. */
  body?(model: string): string;
}

const words = (count: number) => Array.from({ length: count }, (_, i) => `word${i % 977}`).join(" ");
/** `count` short chat messages, users and assistants in turn, a user last. */
const shortMessages = (count: number) => Array.from({ length: count }, (_, i) => ({ role: (count - 1 - i) % 2 === 0 ? "user" : "assistant", content: `hello ${i % 97}` }));
/** `count` tools, each with `properties` string properties. */
const tools = (count: number, properties: number, shape: "openai" | "anthropic" | "responses") => Array.from({ length: count }, (_, i) => {
  const schema = { type: "object", properties: Object.fromEntries(Array.from({ length: properties }, (_, p) => [`field${p}`, { type: "string", description: `field ${p}` }])) };
  const name = `tool_${i}`;
  const description = `does thing ${i}`;
  if (shape === "anthropic") return { name, description, input_schema: schema };
  if (shape === "responses") return { type: "function", name, description, parameters: schema };
  return { type: "function", function: { name, description, parameters: schema } };
});

const SCENARIOS: Scenario[] = [
  { name: "nothing (the baseline: two seconds of the stream alone)" },
  { name: "8 MB prompt (refused: past the context)", body: (model) => JSON.stringify({ model, max_tokens: 1, messages: [{ role: "user", content: "lorem ipsum dolor sit amet ".repeat(300_000) }] }) },
  { name: "3,300-token prompt (prefilled, 1 token out)", prefills: true, body: (model) => JSON.stringify({ model, max_tokens: 1, messages: [{ role: "user", content: words(850) }] }) },
  {
    name: "schema with 20,000 required properties",
    body: (model) => {
      const properties = Object.fromEntries(Array.from({ length: 20_000 }, (_, i) => [`p${i}`, { type: "integer" }]));
      const schema = { type: "object", properties, required: Object.keys(properties), additionalProperties: false };
      return JSON.stringify({ model, max_tokens: 4, messages: [{ role: "user", content: "JSON please" }], response_format: { type: "json_schema", json_schema: { name: "big", schema } } });
    },
  },
  { name: "chat: 1,000 two-word messages", body: (model) => JSON.stringify({ model, max_tokens: 1, messages: shortMessages(1_000) }) },
  { name: "chat: 10,000 two-word messages", body: (model) => JSON.stringify({ model, max_tokens: 1, messages: shortMessages(10_000) }) },
  { name: "chat: 10,000 two-word messages, compaction off", body: (model) => JSON.stringify({ model, max_tokens: 1, messages: shortMessages(10_000), chat_template_kwargs: { enable_auto_compaction: false } }) },
  { name: "responses: 3,000 input items", path: "/v1/responses", body: (model) => JSON.stringify({ model, max_output_tokens: 16, input: shortMessages(3_000) }) },
  { name: "responses: 30,000 input items", path: "/v1/responses", body: (model) => JSON.stringify({ model, max_output_tokens: 16, input: shortMessages(30_000) }) },
  { name: "responses: 100,000 input items", path: "/v1/responses", body: (model) => JSON.stringify({ model, max_output_tokens: 16, input: shortMessages(100_000) }) },
  { name: "chat: 1,000 tools", body: (model) => JSON.stringify({ model, max_tokens: 1, messages: shortMessages(1), tools: tools(1_000, 2, "openai") }) },
  { name: "chat: 256 tools of 15 properties (the most the limits let through)", body: (model) => JSON.stringify({ model, max_tokens: 1, messages: shortMessages(1), tools: tools(256, 15, "openai") }) },
  { name: "chat: 10,000 tools", body: (model) => JSON.stringify({ model, max_tokens: 1, messages: shortMessages(1), tools: tools(10_000, 2, "openai") }) },
  { name: "messages: 1,000 tools of 50 properties", path: "/v1/messages", body: (model) => JSON.stringify({ model, max_tokens: 1, messages: shortMessages(1), tools: tools(1_000, 50, "anthropic") }) },
  { name: "responses: 1,000 tools of 50 properties", path: "/v1/responses", body: (model) => JSON.stringify({ model, max_output_tokens: 16, input: "hello", tools: tools(1_000, 50, "responses") }) },
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
  const body = scenario.body?.(slug);
  const sent = performance.now();
  let status = 0;
  if (body === undefined) await new Promise((resolve) => setTimeout(resolve, 2000));
  else {
    const response = await fetch(`http://127.0.0.1:${port}${scenario.path ?? "/v1/chat/completions"}`, { method: "POST", headers: { "content-type": "application/json", "anthropic-version": "2023-06-01" }, body });
    await response.text();
    status = response.status;
  }
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
  return { medianGapMs: median(before), maxGapMs: Math.max(0, ...during), status, requestMs: answered - sent };
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

/** The command line; --help prints it. */
const USAGE = `node dist/bench/stall.js [--threads 2] [--repeats 3] [--only <scenario name part>]`;
const cli: BenchCli = new BenchCli("stall", USAGE);

async function main(): Promise<void> {
  const values = cli.parse({ threads: { type: "string" }, repeats: { type: "string" }, only: { type: "string" } });
  const threads = cli.integer("threads", values.threads ?? 2);
  const repeats = cli.integer("repeats", values.repeats ?? 3);
  const path = await benchModelPath(PRESET, DTYPE);
  printHeader(`node dist/bench/stall.js --threads ${threads} --repeats ${repeats}`, threads, [
    `model ${PRESET} ${DTYPE.toUpperCase()} random weights, context ${CONTEXT}, f32 KV; the stream: a 32-token prompt decoding on the engine thread; the other request over HTTP (uWebSockets.js, no auth)`,
    `each cell: ${repeats} runs on a fresh engine, worst longest gap and the spread; stepTargetMs 200 (the default) against 0 (whole-batch prefill, the behaviour before chunking)`,
  ]);
  const prompt = randomTokens(seededRandom(7), 32, 49152);
  console.log("");
  console.log("| other request | stepTargetMs | its status | its time (ms) | stream median gap (ms) | stream longest gap while it ran (ms), runs | vs median |");
  console.log("|---|---|---|---|---|---|---|");
  for (const scenario of SCENARIOS.filter((s) => values.only === undefined || s.name.includes(values.only))) {
    for (const stepTargetMs of scenario.prefills ? [200, 0] : [200]) {
      const runs: Measurement[] = [];
      for (let run = 0; run < repeats; run++) {
        const engine = await WorkerEngine.start(path, { load: { threads, contextSize: CONTEXT, maxSequences: 4, kvCache: { bytes: f32KvBytes(path, CONTEXT, 3), dtype: "f32" } }, engine: { stepTargetMs } });
        const slugs = defaultSlugs(engine.model);
        const registry = new ModelRegistry([{ model: engine.model, engine, slugs, created: 1 }]);
        // Stored responses (PGlite in a scratch dir, as `loom serve` keeps them), so that /v1/responses is served.
        const responsesDir = mkdtempSync(join(tmpdir(), "loom-stall-"));
        const responses = openResponseStorage({ dataDir: responsesDir });
        const server = await startServer({ registry, auth: new OpenAccess(), endpoints: createEndpoints(registry, { responses: responses.storage }) }, "127.0.0.1", 0);
        try {
          const slug = scenario.path === "/v1/messages" ? slugs.anthropic[0]! : slugs.openai[0]!;
          runs.push(await measure(engine, server.port, slug, scenario, prompt));
        } finally {
          server.close();
          await engine.close();
          await responses.close();
          rmSync(responsesDir, { recursive: true, force: true });
        }
      }
      const worst = Math.max(...runs.map((r) => r.maxGapMs));
      const medianGap = median(runs.map((r) => r.medianGapMs));
      console.log(`| ${scenario.name} | ${stepTargetMs} | ${[...new Set(runs.map((r) => r.status))].join("/")} | ${median(runs.map((r) => r.requestMs)).toFixed(0)} | ${medianGap.toFixed(1)} | ${worst.toFixed(0)} (${runs.map((r) => r.maxGapMs.toFixed(0)).join(", ")}) | ${(worst / medianGap).toFixed(1)}x |`);
    }
  }
  const ubatch = await llamaCppUbatchMs(path, threads, 49152);
  console.log("");
  console.log(`peer: llama.cpp (node-llama-cpp, same file, ${threads} threads) prefills one 512-token n_ubatch in ${ubatch.toFixed(0)} ms (best of 3): llama-server's longest stall behind a long prompt`);
}

await main();
