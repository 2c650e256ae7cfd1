// Scoring throughput, as lm-evaluation-harness's `local-completions` scores: loom's `POST /v1/completions` with token-id
// prompts, `echo: true`, `logprobs: 1` and `max_tokens: 0` (every prompt token's log-probability), N clients at once,
// against llama.cpp's llama-server on the same GGUF with the same threads.
//
// llama-server refuses `echo` ("Only no echo is supported"), so it cannot score a prompt; its nearest work is the
// prefill of the same prompts (`max_tokens: 1`, `cache_prompt: false`), which computes the logits of one row per
// prompt where scoring computes them for every row. The peer therefore does less work than loom's scoring; the bench
// also runs loom's own prefill of the same requests, so that the ratio of like to like is there too.
//
// Rounds alternate the three modes; each round uses fresh prompts (distinct random token ids), so no prefix cache
// serves any of them. Per mode: prompt tokens/s (median and min-max over rounds), the paired ratio to llama-server,
// and the matrix products' FLOP/s as a fraction of the machine's peak.
// Run: npm run build && node dist/bench/scoring-vs-llama-server.js --llama-server PATH [options] (--help prints them).
import { existsSync } from "node:fs";
import type { ModelDtype } from "../scripts/model-dtypes.js";
import { BenchCli } from "./bench-args.js";
import { type ServerHandle, describeFailure, startLlamaServer, startLoom } from "./bench-servers.js";
import { benchModelPath, modelWork, printHeader, randomTokens, seededRandom } from "./bench-models.js";
import { formatRatio, formatSpread, pairedRatio, spread } from "./speed-spread.js";

type Mode = "loom score" | "loom prefill" | "llama-server prefill";

/** One request's body in each mode, for a prompt of token ids. */
function bodyOf(mode: Mode, prompt: number[]): Record<string, unknown> {
  if (mode === "loom score") return { model: "default", prompt, echo: true, logprobs: 1, max_tokens: 0 };
  if (mode === "loom prefill") return { model: "default", prompt, max_tokens: 1, temperature: 0 };
  return { model: "default", prompt, max_tokens: 1, temperature: 0, cache_prompt: false };
}

/** POSTs one completion and checks that it did the work asked (a scoring answer holds every prompt token's logprob). */
async function complete(server: ServerHandle, mode: Mode, prompt: number[]): Promise<void> {
  const response = await fetch(`${server.baseUrl}/v1/completions`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(bodyOf(mode, prompt)) });
  const text = await response.text();
  if (!response.ok) throw new Error(`${server.name} answered ${response.status}: ${text.slice(0, 300)}`);
  if (mode !== "loom score") return;
  const scored = (JSON.parse(text) as { choices: { logprobs?: { token_logprobs?: unknown[] } }[] }).choices[0]?.logprobs?.token_logprobs?.length;
  if (scored !== prompt.length) throw new Error(`loom scored ${scored} tokens of a ${prompt.length}-token prompt`);
}

/** `prompts` sent by `clients` closed-loop clients; the wall time in seconds. */
async function runMode(server: ServerHandle, mode: Mode, prompts: number[][], clients: number): Promise<number> {
  let next = 0;
  const started = performance.now();
  await Promise.all(Array.from({ length: clients }, async () => {
    while (next < prompts.length) await complete(server, mode, prompts[next++]!);
  }));
  return (performance.now() - started) / 1000;
}

const USAGE = `node dist/bench/scoring-vs-llama-server.js [--llama-server PATH] [--threads 2] [--concurrency 8] [--prompt 256]
       [--requests 32] [--rounds 3] [--model smollm2-135m:q8_0]`;
const cli: BenchCli = new BenchCli("scoring-vs-llama-server", USAGE);

async function main(): Promise<void> {
  const values = cli.parse({
    "llama-server": { type: "string" }, threads: { type: "string" }, concurrency: { type: "string" }, prompt: { type: "string" },
    requests: { type: "string" }, rounds: { type: "string" }, model: { type: "string" },
  });
  const threads = cli.integer("threads", values.threads ?? 2);
  const clients = cli.integer("concurrency", values.concurrency ?? 8);
  const promptTokens = cli.integer("prompt", values.prompt ?? 256, 2);
  const requests = cli.integer("requests", values.requests ?? 32);
  const rounds = cli.integer("rounds", values.rounds ?? 3);
  const [preset, dtype] = (values.model ?? "smollm2-135m:q8_0").split(":") as [string, ModelDtype];
  const peer = values["llama-server"];
  const modelPath = await benchModelPath(preset, dtype);
  const work = modelWork(modelPath);
  const context = promptTokens + 8;
  const machine = printHeader(
    `node dist/bench/scoring-vs-llama-server.js${peer ? ` --llama-server ${peer}` : ""} --threads ${threads} --concurrency ${clients} --prompt ${promptTokens} --requests ${requests} --rounds ${rounds} --model ${preset}:${dtype}`,
    threads,
    [
      `model ${preset} ${dtype.toUpperCase()} random weights (${modelPath}); both servers with ${threads} threads, started once, warmed up`,
      `each round: ${requests} prompts of ${promptTokens} random token ids (fresh per round: no cache hits), ${clients} clients at once, modes alternating`,
      "loom score: /v1/completions echo + logprobs 1 + max_tokens 0 (logits of every row); prefill: max_tokens 1 (logits of the last row; llama-server with cache_prompt false)",
      peer && existsSync(peer) ? `peer: llama-server ${peer}, -np ${clients}, -c ${context} x ${clients}` : `peer: not run (${peer ? `${peer} is not a file` : "no --llama-server given"})`,
    ],
  );
  const servers = new Map<Mode, ServerHandle>();
  try {
    const loom = await startLoom(modelPath, threads, context);
    servers.set("loom score", loom).set("loom prefill", loom);
    if (peer && existsSync(peer)) servers.set("llama-server prefill", await startLlamaServer(peer, modelPath, threads, clients, context));
    const random = seededRandom(4040);
    const promptsOf = () => Array.from({ length: requests }, () => randomTokens(random, promptTokens, work.vocabSize));
    for (const [mode, server] of servers) await runMode(server, mode, promptsOf().slice(0, clients), clients); // untimed warm-up
    const seconds = new Map<Mode, number[]>([...servers.keys()].map((mode) => [mode, []]));
    for (let round = 0; round < rounds; round++) {
      for (const [mode, server] of servers) {
        const elapsed = await runMode(server, mode, promptsOf(), clients);
        seconds.get(mode)!.push(elapsed);
        process.stderr.write(`round ${round + 1}: ${mode} ${elapsed.toFixed(2)} s\n`);
      }
    }
    const tokens = requests * promptTokens;
    const peerRates = seconds.get("llama-server prefill")?.map((s) => tokens / s);
    console.log(`\n| mode | prompt tokens/s | requests/s | vs llama-server prefill | matmul GFLOP/s | of peak (${(machine.peakFlops / 1e9).toFixed(0)} GFLOP/s) |`);
    console.log("|---|---|---|---|---|---|");
    for (const [mode, times] of seconds) {
      const rates = times.map((s) => tokens / s);
      // Every computed row runs through the layers; scoring multiplies every row by the output matrix, prefill one a prompt.
      const logitRows = mode === "loom score" ? tokens : requests;
      const flops = 2 * work.layerParameters * tokens + 2 * work.outputParameters * logitRows;
      const gflops = times.map((s) => flops / s / 1e9);
      const ratio = peerRates ? formatRatio(pairedRatio(rates, peerRates)) : "-";
      const ofPeak = spread(gflops.map((g) => (100 * g * 1e9) / machine.peakFlops));
      console.log(`| ${mode} | ${formatSpread(spread(rates), 0)} | ${formatSpread(spread(times.map((s) => requests / s)), 2)} | ${ratio} | ${formatSpread(spread(gflops), 1)} | ${formatSpread(ofPeak, 1)}% |`);
    }
  } catch (error) {
    console.log(`failed: ${describeFailure(error)}`);
    process.exitCode = 1;
  } finally {
    for (const server of new Set(servers.values())) await server.stop();
  }
}

await main();
