// An agentic multi-turn conversation on loom's Engine, run three ways: section caching (the default), prefix caching
// only, and no caching. Each turn appends the assistant reply loom generated in the turn before and a new tool result,
// and prunes the oldest tool result that an earlier request already consumed: relative to the previous request's
// cached chain (its prompt plus its generated tokens) the new input is A C D with one pruned span B, so prefix
// caching reuses A and section caching also reuses C (relocated, keys re-rotated).
// Run: npm run build && node dist/bench/agentic-workload.js [options] (USAGE below; --help prints it).
//
// Built at the token level (input: {tokens}) with ChatML-shaped message framing, so it is exact and model-agnostic.
// Turn 1 is system + user task + `history` earlier (assistant call, tool result) pairs + one more tool result.
// Turn t >= 2 appends the reply of turn t-1 and a new tool result, and removes the oldest still-present tool result.
import { Engine } from "../engine/engine.js";
import type { KvCacheOptions } from "../engine/kv/kv-cache.js";
import { KV_BLOCK_SIZE, loadModel } from "../engine/load.js";
import { AgenticConversation, SMOLLM2_CHATML } from "./agentic-conversation.js";
import { BenchCli } from "./bench-args.js";
import { benchModelPath, mean, median, modelWork, printHeader, f32KvBytes } from "./bench-models.js";

const PRESET = "smollm2-135m";
const DTYPE = "q8_0";

interface Mode {
  name: string;
  cache: KvCacheOptions;
}

const MODES: Mode[] = [
  { name: "section cache (default)", cache: {} },
  { name: "prefix only", cache: { sectionCaching: false } },
  { name: "no caching", cache: { prefixCaching: false } },
];

interface Turn {
  promptTokens: number;
  computed: number;
  reusedPrefix: number;
  reusedSuffix: number;
  ttft: number;
  seconds: number;
  reply: number[];
  /** Tokens of the span pruned before this turn (0 on turn 1). */
  pruned: number;
}

interface Settings {
  threads: number;
  turns: number;
  system: number;
  history: number;
  toolMin: number;
  toolMax: number;
  decode: number;
  context: number;
}

async function runMode(path: string, mode: Mode, settings: Settings, vocabSize: number): Promise<{ turns: Turn[]; seconds: number }> {
  // The same conversation skeleton in every mode (one seed); only the replies differ.
  const conversation = new AgenticConversation(SMOLLM2_CHATML, {
    system: settings.system, user: 80, history: settings.history, assistant: 24, toolMin: settings.toolMin, toolMax: settings.toolMax,
  }, vocabSize);

  // The KV budget holds a few whole contexts: the live request plus the cached chains of the turns before it.
  const model = await loadModel(path, {
    threads: settings.threads, contextSize: settings.context, batchSize: 512, maxSequences: 4,
    kvCache: { bytes: f32KvBytes(path, settings.context, 4), dtype: "f32" },
  });
  try {
    const engine = new Engine(model, { cache: mode.cache });
    try {
      const turns: Turn[] = [];
      const start = performance.now();
      for (let turn = 1; turn <= settings.turns; turn++) {
        const { tokens, pruned } = conversation.next(turns.at(-1)?.reply);
        if (tokens.length + settings.decode > settings.context) throw new RangeError(`turn ${turn} needs ${tokens.length + settings.decode} positions; raise --context`);
        const sent = performance.now();
        for await (const event of engine.submit({ input: { tokens }, maxTokens: settings.decode, sampling: { temperature: 0 }, ignoreEndOfGeneration: true })) {
          if (event.type === "error") throw event.error;
          if (event.type !== "finish") continue;
          const u = event.usage;
          turns.push({
            promptTokens: u.promptTokens, computed: u.promptTokens - u.reusedPrefixTokens - u.reusedSuffixTokens,
            reusedPrefix: u.reusedPrefixTokens, reusedSuffix: u.reusedSuffixTokens, ttft: event.timings.timeToFirstToken,
            seconds: (performance.now() - sent) / 1000, reply: event.tokens, pruned,
          });
        }
      }
      return { turns, seconds: (performance.now() - start) / 1000 };
    } finally {
      engine.close();
    }
  } finally {
    await model.dispose();
  }
}


/** The command line; --help prints it. */
const USAGE = `node dist/bench/agentic-workload.js [--threads 2] [--turns 10] [--system 1200] [--history 3]
       [--tool-min 150] [--tool-max 300] [--decode 32] [--context 4096] [--quick]`;
const cli: BenchCli = new BenchCli("agentic-workload", USAGE);

async function main(): Promise<void> {
  const values = cli.parse({
    threads: { type: "string" }, turns: { type: "string" }, system: { type: "string" }, history: { type: "string" },
    "tool-min": { type: "string" }, "tool-max": { type: "string" }, decode: { type: "string" }, context: { type: "string" }, quick: { type: "boolean" },
  });
  const quick = values.quick ?? false;
  const settings: Settings = {
    threads: cli.integer("threads", values.threads ?? 2),
    turns: cli.integer("turns", values.turns ?? (quick ? 4 : 10), 2),
    system: cli.integer("system", values.system ?? (quick ? 256 : 1200)),
    history: cli.integer("history", values.history ?? (quick ? 2 : 3), 0),
    toolMin: cli.integer("tool-min", values["tool-min"] ?? (quick ? 48 : 150)),
    toolMax: cli.integer("tool-max", values["tool-max"] ?? (quick ? 96 : 300)),
    decode: cli.integer("decode", values.decode ?? (quick ? 8 : 32)),
    context: cli.integer("context", values.context ?? (quick ? 1024 : 4096)),
  };
  if (settings.toolMax < settings.toolMin) cli.fail("--tool-max must be at least --tool-min");
  const path = await benchModelPath(PRESET, DTYPE);
  const work = modelWork(path);
  const s = settings;
  const command = `node dist/bench/agentic-workload.js --threads ${s.threads} --turns ${s.turns} --system ${s.system} --history ${s.history} --tool-min ${s.toolMin} --tool-max ${s.toolMax} --decode ${s.decode} --context ${s.context}${quick ? " --quick" : ""}`;
  const machine = printHeader(command, s.threads, [
    `model ${PRESET} ${DTYPE.toUpperCase()} random weights (${path}); f32 KV, block ${KV_BLOCK_SIZE}, context ${s.context}`,
    `conversation: ${s.system}-token system prompt, 80-token user task, ${s.history + 1} tool results of ${s.toolMin}-${s.toolMax} tokens in turn 1; each later turn adds the previous ${s.decode}-token reply (loom's own, greedy) and a tool result and prunes the oldest tool result`,
  ]);
  const results: Array<{ mode: Mode; turns: Turn[]; seconds: number }> = [];
  for (const mode of MODES) {
    process.stderr.write(`running ${mode.name} ...\n`);
    results.push({ mode, ...(await runMode(path, mode, s, work.vocabSize)) });
  }

  console.log("");
  console.log("Per turn: prompt tokens, then computed prompt tokens / TTFT (s) per mode (computed = prompt - reused prefix - reused section).");
  console.log("");
  console.log(`| turn | prompt tokens | pruned span | ${results.map((r) => `${r.mode.name}: computed | reused prefix + section | TTFT (s)`).join(" | ")} |`);
  console.log(`|---|---|---|${results.map(() => "---|---|---|").join("")}`);
  for (let t = 0; t < s.turns; t++) {
    const first = results[0].turns[t];
    console.log(`| ${t + 1} | ${first.promptTokens} | ${first.pruned} | ${results.map((r) => `${r.turns[t].computed} | ${r.turns[t].reusedPrefix} + ${r.turns[t].reusedSuffix} | ${r.turns[t].ttft.toFixed(3)}`).join(" | ")} |`);
  }

  const noCache = results[2];
  const summary = results.map(({ mode, turns, seconds }) => {
    const later = turns.slice(1).map((turn) => turn.ttft);
    return {
      mode: mode.name,
      cache: mode.cache,
      prefillComputed: turns.reduce((n, turn) => n + turn.computed, 0),
      promptTokens: turns.reduce((n, turn) => n + turn.promptTokens, 0),
      reusedPrefix: turns.reduce((n, turn) => n + turn.reusedPrefix, 0),
      reusedSuffix: turns.reduce((n, turn) => n + turn.reusedSuffix, 0),
      meanTtftLater: mean(later),
      medianTtftLater: median(later),
      totalSeconds: seconds,
      repliesMatchingNoCache: turns.filter((turn, i) => turn.reply.every((token, j) => token === noCache.turns[i].reply[j])).length,
    };
  });
  console.log("");
  console.log(`| mode | prefill tokens computed (all ${s.turns} turns) | of prompt tokens | reused prefix | reused section | mean TTFT turns 2-${s.turns} (s) | median TTFT turns 2-${s.turns} (s) | total (s) | replies equal to no-caching run |`);
  console.log("|---|---|---|---|---|---|---|---|---|");
  for (const row of summary) {
    console.log(`| ${row.mode} | ${row.prefillComputed} | ${row.promptTokens} | ${row.reusedPrefix} | ${row.reusedSuffix} | ${row.meanTtftLater.toFixed(3)} | ${row.medianTtftLater.toFixed(3)} | ${row.totalSeconds.toFixed(2)} | ${row.repliesMatchingNoCache} / ${s.turns} |`);
  }
  const [section, prefixOnly, none] = summary;
  const ratios = {
    meanTtftPrefixOverSection: prefixOnly.meanTtftLater / section.meanTtftLater,
    medianTtftPrefixOverSection: prefixOnly.medianTtftLater / section.medianTtftLater,
    meanTtftNoCacheOverSection: none.meanTtftLater / section.meanTtftLater,
    prefillComputedPrefixOverSection: prefixOnly.prefillComputed / section.prefillComputed,
  };
  console.log("");
  console.log(`TTFT turns 2-${s.turns}, prefix only / section cache: mean ${ratios.meanTtftPrefixOverSection.toFixed(2)}x, median ${ratios.medianTtftPrefixOverSection.toFixed(2)}x (target >= 2x); no caching / section cache: mean ${ratios.meanTtftNoCacheOverSection.toFixed(2)}x; prefill tokens computed, prefix only / section: ${ratios.prefillComputedPrefixOverSection.toFixed(2)}x`);
  console.log("Replies equal to the no-caching run: the turn's greedy reply, token for token. Prefix reuse is exact; a relocated section keeps KV that was");
  console.log("computed with the pruned span in view (and keys re-rotated), so its replies may differ, and the conversation then goes on from its own replies.");
  const missing = section.reusedSuffix === 0 ? "WARNING: the section cache reused no section: check the workload (see KvReuse.sectionRejected)" : undefined;
  if (missing) console.log(missing);
  console.log(JSON.stringify({
    bench: "agentic-workload", command, date: machine.date, cpu: machine.cpu, cores: machine.cores, model: `${PRESET}-${DTYPE}`, settings,
    modes: summary, ratios,
    perTurn: results.map((r) => ({ mode: r.mode.name, turns: r.turns.map(({ reply: _reply, ...turn }) => turn) })),
  }));
}

await main();
process.exit(0);
