// loom against llama.cpp's llama-server the way users see them: both started as their users start them (`loom serve
// --no-auth`, `llama-server -np N`) on the same GGUF with the same thread count, both driven over HTTP by the official
// `openai` client with the same streamed requests (temperature 0, the same max_tokens), three workloads:
// - plain: N clients each sending short chats one after another (N = --concurrency);
// - agents: agent loops whose histories are pruned between turns (every tool result but the last replaced by a
//   short stub, as agents drop old tool output): the section cache's case;
// - shared: many users behind one long system prompt: the prefix cache's case.
// Per workload and server: total time, TTFT p50/p99, output tokens/s, and (loom) prompt tokens served from cache.
// Run: npm run build && node dist/bench/vs-llama-server.js [options] (USAGE below; --help prints it).
// Without --llama-server (or with a path that is not a file) only loom runs, and the peer is reported as not run.
import { existsSync } from "node:fs";
import OpenAI from "openai";
import type { ModelDtype } from "../scripts/model-dtypes.js";
import { BenchCli } from "./bench-args.js";
import { type ServerHandle, describeFailure, startLlamaServer, startLoom } from "./bench-servers.js";
import { benchModelPath, printHeader } from "./bench-models.js";
import { SUPPORT_SYSTEM_PROMPT, seededText } from "./chat-workload.js";

type Message = { role: "system" | "user" | "assistant"; content: string };

const CONTEXT = 4096;

interface Call {
  ttftMs: number;
  outputTokens: number;
  promptTokens: number;
  cachedTokens: number;
}

interface Outcome {
  seconds: number;
  calls: Call[];
}

/** One streamed chat completion: time to its first content, and the usage it reports. */
async function chat(client: OpenAI, messages: Message[], maxTokens: number): Promise<{ call: Call; text: string }> {
  const started = performance.now();
  const stream = await client.chat.completions.create({ model: "default", messages, max_tokens: maxTokens, temperature: 0, stream: true, stream_options: { include_usage: true } });
  let ttftMs = Number.NaN;
  let text = "";
  let usage: OpenAI.CompletionUsage | undefined;
  let chunks = 0;
  for await (const chunk of stream) {
    const delta = chunk.choices[0]?.delta?.content;
    if (delta) {
      if (Number.isNaN(ttftMs)) ttftMs = performance.now() - started;
      text += delta;
      chunks += 1;
    }
    if (chunk.usage) usage = chunk.usage;
  }
  return {
    call: {
      ttftMs,
      outputTokens: usage?.completion_tokens ?? chunks,
      promptTokens: usage?.prompt_tokens ?? 0,
      cachedTokens: usage?.prompt_tokens_details?.cached_tokens ?? 0,
    },
    text,
  };
}

/** `clients` loops of `requests` short chats each (64-128 prompt tokens, `decode` output tokens). */
async function plain(client: OpenAI, modelPath: string, clients: number, requests: number, decode: number): Promise<Outcome> {
  const calls: Call[] = [];
  const started = performance.now();
  await Promise.all(Array.from({ length: clients }, async (_, c) => {
    for (let r = 0; r < requests; r++) {
      const user = seededText(modelPath, 64 + ((c * 31 + r * 17) % 64), 1000 + c * 100 + r, "Where is my parcel?");
      calls.push((await chat(client, [{ role: "system", content: SUPPORT_SYSTEM_PROMPT }, { role: "user", content: user }], decode)).call);
    }
  }));
  return { seconds: (performance.now() - started) / 1000, calls };
}

/**
 * `agents` concurrent agent loops of `turns` turns: a 300-token system prompt and task, then per turn the model's
 * reply and a 250-token tool result; before each turn every tool result but the newest is replaced by a stub.
 */
async function agentLoops(client: OpenAI, modelPath: string, agents: number, turns: number, decode: number): Promise<Outcome> {
  const system = seededText(modelPath, 300, 7, "You are a logistics agent with tools. Think, call a tool, then answer.");
  const calls: Call[] = [];
  const started = performance.now();
  await Promise.all(Array.from({ length: agents }, async (_, a) => {
    const history: Message[] = [{ role: "system", content: system }, { role: "user", content: seededText(modelPath, 60, 2000 + a, `Task ${a}:`) }];
    for (let turn = 0; turn < turns; turn++) {
      const { call, text } = await chat(client, history, decode);
      calls.push(call);
      history.push({ role: "assistant", content: text });
      for (const message of history) if (message.role === "user" && message.content.startsWith("Tool result")) message.content = "Tool result: (dropped)";
      history.push({ role: "user", content: seededText(modelPath, 250, 3000 + a * 100 + turn, `Tool result ${turn}:`) });
    }
  }));
  return { seconds: (performance.now() - started) / 1000, calls };
}

/** `users` concurrent users behind one 1,200-token system prompt, each asking `questions` short questions in turn. */
async function sharedPrompt(client: OpenAI, modelPath: string, users: number, questions: number, decode: number): Promise<Outcome> {
  const system = seededText(modelPath, 1200, 11, SUPPORT_SYSTEM_PROMPT);
  const calls: Call[] = [];
  const started = performance.now();
  await Promise.all(Array.from({ length: users }, async (_, u) => {
    for (let q = 0; q < questions; q++) {
      const user = seededText(modelPath, 24, 4000 + u * 10 + q, `Question ${q} of user ${u}:`);
      calls.push((await chat(client, [{ role: "system", content: system }, { role: "user", content: user }], decode)).call);
    }
  }));
  return { seconds: (performance.now() - started) / 1000, calls };
}

const percentile = (values: number[], p: number) => {
  const sorted = values.filter((v) => !Number.isNaN(v)).sort((a, b) => a - b);
  return sorted.length === 0 ? Number.NaN : sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
};

function row(workload: string, server: string, outcome: Outcome): string {
  const output = outcome.calls.reduce((sum, call) => sum + call.outputTokens, 0);
  const prompt = outcome.calls.reduce((sum, call) => sum + call.promptTokens, 0);
  const cached = outcome.calls.reduce((sum, call) => sum + call.cachedTokens, 0);
  const ttft = outcome.calls.map((call) => call.ttftMs);
  const reuse = server === "loom" && prompt > 0 ? `${((100 * cached) / prompt).toFixed(0)}% (${cached} of ${prompt})` : "-";
  return `| ${workload} | ${server} | ${outcome.calls.length} | ${outcome.seconds.toFixed(2)} | ${percentile(ttft, 50).toFixed(0)} | ${percentile(ttft, 99).toFixed(0)} | ${output} | ${(output / outcome.seconds).toFixed(1)} | ${reuse} |`;
}

/** The command line; --help prints it. */
const USAGE = `node dist/bench/vs-llama-server.js [--llama-server PATH] [--threads 2] [--concurrency 1,4,8,16]
       [--workloads plain,agents,shared] [--model smollm2-135m:q8_0] [--decode 32]`;
const cli: BenchCli = new BenchCli("vs-llama-server", USAGE);

async function main(): Promise<void> {
  const values = cli.parse({
    "llama-server": { type: "string" }, threads: { type: "string" }, concurrency: { type: "string" }, workloads: { type: "string" }, model: { type: "string" },
    decode: { type: "string" },
  });
  const threads = cli.integer("threads", values.threads ?? 2);
  const levels = cli.integers("concurrency", values.concurrency ?? "1,4,8,16");
  const workloads = cli.someOf("workloads", values.workloads ?? "plain,agents,shared", ["plain", "agents", "shared"]);
  const [preset, dtype] = (values.model ?? "smollm2-135m:q8_0").split(":") as [string, ModelDtype];
  const decode = cli.integer("decode", values.decode ?? 32);
  const peer = values["llama-server"];
  const modelPath = await benchModelPath(preset, dtype);
  printHeader(`node dist/bench/vs-llama-server.js${peer ? ` --llama-server ${peer}` : ""} --threads ${threads} --concurrency ${levels.join(",")} --workloads ${workloads.join(",")} --model ${preset}:${dtype} --decode ${decode}`, threads, [
    `model ${preset} ${dtype.toUpperCase()} random weights (${modelPath}); both servers on it with ${threads} threads, context ${CONTEXT} per sequence, started fresh per workload and level`,
    "client: the official openai package, streamed chat completions with usage, temperature 0, the same max_tokens for both; TTFT = first content chunk",
    `workloads: plain = N clients x 3 chats (64-128 prompt tokens); agents = N agents x 5 turns, tool results of 250 tokens pruned to a stub once older than the newest; shared = N users x 2 questions behind one 1,200-token system prompt`,
    peer && existsSync(peer) ? `peer: llama-server ${peer}, -np N (one slot per client), -c ${CONTEXT} x N, prompt caching on (its default)` : `peer: not run (${peer ? `${peer} is not a file` : "no --llama-server given"})`,
  ]);
  console.log("\n| workload, N | server | requests | total s | TTFT p50 ms | TTFT p99 ms | output tokens | output tok/s | loom: prompt tokens from cache |");
  console.log("|---|---|---|---|---|---|---|---|---|");
  for (const workload of workloads) {
    for (const clients of levels) {
      const starts = [() => startLoom(modelPath, threads, CONTEXT), ...(peer && existsSync(peer) ? [() => startLlamaServer(peer, modelPath, threads, clients, CONTEXT)] : [])];
      for (const start of starts) {
        let server: ServerHandle | undefined;
        try {
          server = await start();
          await chat(server.client, [{ role: "user", content: "Warm up." }], 4); // untimed: first-touch costs
          const outcome = workload === "plain" ? await plain(server.client, modelPath, clients, 3, decode)
            : workload === "agents" ? await agentLoops(server.client, modelPath, clients, 5, decode)
              : await sharedPrompt(server.client, modelPath, clients, 2, decode);
          console.log(row(`${workload}, ${clients}`, server.name, outcome));
        } catch (error) {
          console.log(`| ${workload}, ${clients} | ${server?.name ?? "(start)"} | failed: ${describeFailure(error).replace(/\|/g, "/").replace(/\s+/g, " ").slice(0, 300)} | - | - | - | - | - | - |`);
        } finally {
          await server?.stop();
        }
      }
    }
  }
}

await main();
