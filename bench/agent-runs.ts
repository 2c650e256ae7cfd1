// Agent runs on loom's own engine: runs completed per minute with 1, 8 and 32 runs queued at once, each run
// three real model turns (a web_search call forced on the first two, over the local corpus in PGlite), and the time
// to first token of interactive chat completions while 32 runs are processing against the same figure idle.
//
// Run: npm run build && node dist/bench/agent-runs.js [options] (USAGE below; --help prints it).
//
// Setup: the SmolLM2-135M-shaped Q8_0 random model on one engine thread (WorkerEngine, as `loom serve` runs it; the
// other core is left to the HTTP thread, the database and the client), the platform on PGlite in a temporary data
// dir, the runs worker at concurrency 32 with its turns in priority class 1 (interactive requests are class 0). The
// engine "tim": forcedToolTurns 2, maxSteps 3 (the third turn may not call a tool), maxStepTokens 160, temperature 0;
// web_search with `limit: 3` over 24 documents. TTFT: sequential streaming chat completions (a 20-token question,
// max_tokens 4) from this process, time from sending to the first content delta.
import { loadavg } from "node:os";
import { rmSync } from "node:fs";
import { DEFAULT_BACKGROUND_STEP_MS } from "../engine/engine.js";
import { WorkerEngine } from "../engine/host/worker-engine.js";
import { createEndpoints } from "../server/adapters/endpoints.js";
import { ModelRegistry, defaultSlugs } from "../server/models.js";
import { openPlatform } from "../server/platform/platform.js";
import { temporaryDataDir } from "../server/platform/testing/test-databases.js";
import { loopbackOnlyPostForTests } from "../server/runs/callbacks/testing/loopback-transport.js";
import { runToolFactories } from "../server/runs/run-tools.js";
import { openRuns } from "../server/runs/runs.js";
import { startServer } from "../server/server.js";
import { PromptCounter } from "../engine/prompt-counter.js";
import { BenchCli } from "./bench-args.js";
import { benchModelPath, median, percentile, printHeader } from "./bench-models.js";

/** The command line; --help prints it. */
const USAGE = `node dist/bench/agent-runs.js [--threads 1] [--levels 1,8,32] [--rounds 2] [--ttft-samples 20]
       [--background-step-ms 20]`;
const cli: BenchCli = new BenchCli("agent-runs", USAGE);
const values = cli.parse({
  threads: { type: "string", default: "1" }, levels: { type: "string", default: "1,8,32" }, rounds: { type: "string", default: "2" }, "ttft-samples": { type: "string", default: "20" }, "background-step-ms": { type: "string", default: String(DEFAULT_BACKGROUND_STEP_MS) },
});
const threads = cli.integer("threads", values.threads);
const levels = cli.integers("levels", values.levels);
const rounds = cli.integer("rounds", values.rounds);
const samples = cli.integer("ttft-samples", values["ttft-samples"]);
const backgroundStepMs = cli.integer("background-step-ms", values["background-step-ms"], 0);
const command = `node dist/bench/agent-runs.js --threads ${threads} --levels ${levels.join(",")} --rounds ${rounds} --ttft-samples ${samples} --background-step-ms ${backgroundStepMs}`;
const CONCURRENCY = 32;

const TOPICS = ["parcel tracking", "invoice disputes", "pickup windows", "weekend delivery", "damaged boxes", "refunds", "address changes", "driver signatures"];
const documents = Array.from({ length: 24 }, (_, i) => {
  const topic = TOPICS[i % TOPICS.length]!;
  return { url: `https://docs.example/${i}`, title: `Guide ${i}: ${topic}`, body: `How ${topic} work at the depot. `.repeat(6) + `Section ${i} covers ${topic} for customers and drivers.` };
});

async function main(): Promise<void> {
  const path = await benchModelPath("smollm2-135m", "q8_0");
  printHeader(command, threads, [
    `model smollm2-135m Q8_0 random weights (${path}), one engine thread, maxSequences 64, backgroundStepMs ${backgroundStepMs}, context 1024, f16 KV 1.5 GiB; platform on PGlite (temporary data dir)`,
    `runs: engine tim = forcedToolTurns 2, maxSteps 3, maxStepTokens 160, temperature 0; tools [web_search limit 3] over ${documents.length} corpus documents; worker concurrency ${CONCURRENCY}, priority class 1`,
    `load average at the start (1/5/15 min): ${loadavg().map((x) => x.toFixed(2)).join(" / ")}`,
  ]);
  const engine = await WorkerEngine.start(path, { load: { threads, contextSize: 1024, maxSequences: 64, kvCache: { bytes: 1.5 * 1024 ** 3, dtype: "f16" } }, engine: { backgroundStepMs } });
  const slugs = defaultSlugs(engine.model);
  const registry = new ModelRegistry([{ model: engine.model, engine, slugs, created: 0, promptCounter: PromptCounter.open(path) }]);
  const dataDir = temporaryDataDir();
  const platform = await openPlatform({ dataDir });
  const runs = openRuns(platform, registry, {
    engines: { tim: { forcedToolTurns: 2, maxSteps: 3, maxStepTokens: 160, temperature: 0 } },
    concurrency: CONCURRENCY,
    tools: runToolFactories(platform.database),
    callbacks: { post: loopbackOnlyPostForTests },
    worker: { pollMs: 100 },
  });
  const server = await startServer({ registry, auth: platform.authenticator, accountant: platform.accountant, endpoints: createEndpoints(registry) }, "127.0.0.1", 0, [platform.surface, runs.surface]);
  const base = `http://127.0.0.1:${server.port}`;
  try {
    const organization = await platform.stores.organizations.create("bench", { requestsPerMinute: null, tokensPerMinute: null, tokensPerDay: null });
    const { key } = await platform.stores.keys.create(organization.id, "inference", "bench");
    await platform.stores.corpus.add(documents);
    const headers = { authorization: `Bearer ${key}`, "content-type": "application/json" };

    const createRuns = async (count: number) => Promise.all(Array.from({ length: count }, async (_, i) => {
      const response = await fetch(`${base}/v1/runs`, { method: "POST", headers, body: JSON.stringify({ engine: "tim", input: { instructions: `Customer ${i} asks about ${TOPICS[i % TOPICS.length]}. Find the guide and answer.`, tools: [{ id: "web_search", options: { limit: 3 } }] } }) });
      if (response.status !== 202) throw new Error(`run creation answered ${response.status}: ${await response.text()}`);
      return ((await response.json()) as { runId: string }).runId;
    }));
    const finished = async (ids: string[]) => {
      const all = await Promise.all(ids.map((id) => runs.store.get(id)));
      return all.filter((run) => run?.status === "succeeded" || run?.status === "failed");
    };
    const ttft = async () => {
      const started = performance.now();
      const response = await fetch(`${base}/v1/chat/completions`, {
        method: "POST", headers,
        body: JSON.stringify({ model: slugs.openai[0], messages: [{ role: "user", content: "Where is my parcel? It was due yesterday at the north depot." }], max_tokens: 4, temperature: 0, stream: true }),
      });
      const reader = response.body!.getReader();
      const decoder = new TextDecoder();
      let text = "";
      let first: number | undefined;
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        text += decoder.decode(value, { stream: true });
        if (first === undefined && /"content":"[^"]/.test(text)) first = performance.now() - started;
      }
      return first ?? performance.now() - started;
    };

    // Runs per minute at each level.
    console.log("\n| runs queued at once | round | wall (s) | runs/min | succeeded | model turns | tool calls run | engine tokens/s (prompt computed + generated) |");
    console.log("|---|---|---|---|---|---|---|---|");
    const perLevel: Record<number, number[]> = {};
    for (const [index, level] of levels.entries()) {
      // One untimed warm-up round before the first level (model, caches, JIT); later levels start warm.
      for (let round = index === 0 ? 0 : 1; round <= rounds; round++) {
        const statsBefore = await engine.stats();
        const started = performance.now();
        const ids = await createRuns(level);
        while ((await finished(ids)).length < ids.length) await new Promise((resolve) => setTimeout(resolve, 50));
        const wall = (performance.now() - started) / 1000;
        const statsAfter = await engine.stats();
        const ended = await finished(ids);
        let turns = 0;
        let toolsRun = 0;
        for (const id of ids) {
          const steps = await runs.store.steps(id);
          turns += steps.filter((step) => step.kind === "model").length;
          toolsRun += steps.filter((step) => step.kind === "tool" && step.status === "finished").length;
        }
        const tokens = statsAfter.tokens.computedPrompt - statsBefore.tokens.computedPrompt + statsAfter.tokens.generated - statsBefore.tokens.generated;
        const label = round === 0 ? "warm-up" : String(round);
        if (round > 0) (perLevel[level] ??= []).push((level / wall) * 60);
        console.log(`| ${level} | ${label} | ${wall.toFixed(2)} | ${((level / wall) * 60).toFixed(1)} | ${ended.filter((run) => run?.status === "succeeded").length} | ${turns} | ${toolsRun} | ${(tokens / wall).toFixed(0)} |`);
      }
    }
    console.log("\nruns/min, median (min to max) over rounds: " + levels.map((level) => {
      const values = perLevel[level]!;
      return `${level}: ${median(values).toFixed(1)} (${Math.min(...values).toFixed(1)} to ${Math.max(...values).toFixed(1)})`;
    }).join("; "));

    // TTFT idle, then with 32 runs processing.
    const idle: number[] = [];
    for (let i = 0; i < 3; i++) await ttft();
    for (let i = 0; i < samples; i++) idle.push(await ttft());
    const ids = await createRuns(CONCURRENCY);
    while (runs.worker.active < CONCURRENCY) await new Promise((resolve) => setTimeout(resolve, 10));
    const loaded: number[] = [];
    const activeAtSample: number[] = [];
    for (let i = 0; i < samples; i++) {
      activeAtSample.push(runs.worker.active);
      loaded.push(await ttft());
    }
    const stillActive = runs.worker.active;
    while ((await finished(ids)).length < ids.length) await new Promise((resolve) => setTimeout(resolve, 50));
    const ratio = median(loaded) / median(idle);
    console.log(`\n| chat completions TTFT (ms) | p50 | p99 | samples |`);
    console.log(`|---|---|---|---|`);
    console.log(`| idle | ${median(idle).toFixed(1)} | ${percentile(idle, 0.99).toFixed(1)} | ${idle.length} |`);
    console.log(`| ${CONCURRENCY} runs processing (${Math.min(...activeAtSample)}-${Math.max(...activeAtSample)} at each sample's start, ${stillActive} after the last) | ${median(loaded).toFixed(1)} | ${percentile(loaded, 0.99).toFixed(1)} | ${loaded.length} |`);
    console.log(`\ntarget: TTFT p50 while ${CONCURRENCY} runs process within 20% of idle: ${ratio.toFixed(2)}x (${ratio <= 1.2 ? "met" : "MISSED"})`);
    console.log(`load average at the end (1/5/15 min): ${loadavg().map((x) => x.toFixed(2)).join(" / ")}`);
  } finally {
    server.close();
    await runs.close();
    await platform.close();
    await engine.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

await main();
