// The quality cost of the section cache: the agentic conversation of agentic-workload.ts (each turn prunes the oldest
// tool result, so the section after it is reused relocated, its KV computed while the pruned span was in view) run
// with caching off as the reference, then with prefix-only caching and with the section cache on the same prompts,
// teacher-forced to the reference's replies. At every reply position: KL(P_reference || P_reuse) of the next-token
// distributions (softmax at temperature 1) and whether the top token agrees.
// Run: npm run build && node dist/bench/section-reuse-quality.js [options] (USAGE below; --help prints it).
//
// Models: `stories260K` (the bundled trained model) or a generator preset, `preset[:dtype]` (random weights, f32 by
// default, generated into .cache/bench-models/). One request at a time, so the tapped logits rows are unambiguous.
import { join } from "node:path";
import { Engine } from "../engine/engine.js";
import type { KvCacheOptions } from "../engine/kv/kv-cache.js";
import { KV_BLOCK_SIZE, type LoadedModel, loadModel } from "../engine/load.js";
import { openModelSource } from "../engine/model/source.js";
import { REPOSITORY_ROOT } from "../engine/testing/fixtures.js";
import { tokenizerFromGguf } from "../engine/tokenizer/gguf.js";
import { tokenizerFromHuggingFace } from "../engine/tokenizer/huggingface.js";
import type { Tokenizer } from "../engine/tokenizer/tokenizer.js";
import { parseModelDtype } from "../scripts/model-dtypes.js";
import { BenchCli } from "./bench-args.js";
import { AgenticConversation, type ConversationSizes, type MessageFraming } from "./agentic-conversation.js";
import { benchModelPath, f32KvBytes, mean, median, printHeader, randomTokens } from "./bench-models.js";
import { entropy, klDivergence, topToken } from "./logit-divergence.js";
import { LogitsTap } from "./logits-tap.js";

const STORIES = "stories260K";

interface Settings {
  threads: number;
  turns: number;
  decode: number;
  system: number;
  user: number;
  history: number;
  toolMin: number;
  toolMax: number;
  context: number;
  seed: number;
}

/** The framing and content draw that fit a model's tokenizer. */
interface Vocabulary {
  framing: MessageFraming;
  content: (random: () => number, count: number) => number[];
  described: string;
}

/**
 * ChatML ids where the tokenizer has them (Qwen, SmolLM2); otherwise ordinary word tokens stand in for the markers
 * (stories260K: `<`, `>`, the newline byte, and four names as the roles), after a BOS, and the content is drawn from
 * the word pieces (no bytes, no specials, no marker), so the trained model reads text-like input.
 */
function vocabularyFor(tokenizer: Tokenizer, vocabSize: number, bos: number | undefined): Vocabulary {
  const id = (text: string): number => {
    const found = tokenizer.tokenId(text);
    if (found === undefined) throw new Error(`the tokenizer has no token ${JSON.stringify(text)} for the message framing`);
    return found;
  };
  const start = tokenizer.tokenId("<|im_start|>");
  if (start !== undefined) {
    return {
      framing: { messageStart: start, messageEnd: id("<|im_end|>"), newline: id("Ċ"), roles: { system: id("system"), user: id("user"), assistant: id("assistant"), tool: id("tool") }, begin: [] },
      content: (random, count) => randomTokens(random, count, vocabSize),
      described: "ChatML framing; content drawn uniformly from ids 1000-31000",
    };
  }
  const framing: MessageFraming = {
    messageStart: id("<"), messageEnd: id(">"), newline: id("<0x0A>"),
    roles: { system: id("▁Once"), user: id("▁mom"), assistant: id("▁Lily"), tool: id("▁Tim") },
    begin: bos === undefined ? [] : [bos],
  };
  const markers = new Set([framing.messageStart, framing.messageEnd, framing.newline, ...Object.values(framing.roles)]);
  const words: number[] = [];
  for (let token = 0; token < vocabSize; token++) {
    const text = tokenizer.tokenBytes(token);
    const isByte = /^<0x[0-9A-F]{2}>$/.test(new TextDecoder().decode(text));
    if (!tokenizer.isSpecial(token) && !isByte && !markers.has(token) && text.length > 0) words.push(token);
  }
  return {
    framing,
    content: (random, count) => Array.from({ length: count }, () => words[Math.floor(random() * words.length)]),
    described: `ordinary tokens as framing (< role \\n ... > \\n, roles ▁Once ▁mom ▁Lily ▁Tim) after BOS; content drawn uniformly from ${words.length} word pieces`,
  };
}

/** One turn of one run: the prompt, what it reused, its reply and the logits rows of the reply's positions. */
interface TurnRun {
  prompt: number[];
  pruned: number;
  reusedPrefix: number;
  reusedSection: number;
  reply: number[];
  rows: Float32Array[];
}

/**
 * Runs the conversation on a fresh engine. Without `reference` the replies are the model's own (greedy); with it, each
 * turn's prompt must equal the reference's and the reply is forced to the reference's reply.
 */
async function runConversation(path: string, cache: KvCacheOptions, settings: Settings, context: number, vocabulary: Vocabulary, reference?: TurnRun[]): Promise<TurnRun[]> {
  const sizes: ConversationSizes = { system: settings.system, user: settings.user, history: settings.history, assistant: 24, toolMin: settings.toolMin, toolMax: settings.toolMax };
  const model = await loadModel(path, {
    threads: settings.threads, contextSize: context, batchSize: 512, maxSequences: 4,
    kvCache: { bytes: f32KvBytes(path, context, 4), dtype: "f32" },
  });
  try {
    const conversation = new AgenticConversation(vocabulary.framing, sizes, model.config.vocab_size, settings.seed, vocabulary.content);
    const tap = new LogitsTap(model.runner);
    const engine = new Engine(model, { cache });
    try {
      const turns: TurnRun[] = [];
      for (let turn = 1; turn <= settings.turns; turn++) {
        const { tokens, pruned } = conversation.next(turns.at(-1)?.reply);
        if (tokens.length + settings.decode > context) {
          throw new RangeError(`turn ${turn} needs ${tokens.length + settings.decode} positions (prompt ${tokens.length} + ${settings.decode} decoded), more than the context ${context} of ${path}: lower --turns, --system, --tool-max or --decode`);
        }
        const expected = reference?.[turn - 1];
        if (expected && (expected.prompt.length !== tokens.length || expected.prompt.some((token, i) => token !== tokens[i]))) {
          throw new Error(`turn ${turn}: the prompt differs from the reference's`);
        }
        tap.begin(expected?.reply);
        turns.push(await generate(engine, model, tokens, pruned, settings.decode, tap));
        const run = turns[turns.length - 1];
        if (run.rows.length !== settings.decode) throw new Error(`turn ${turn}: tapped ${run.rows.length} logits rows for ${settings.decode} tokens`);
        if (expected && run.reply.some((token, i) => token !== expected.reply[i])) throw new Error(`turn ${turn}: teacher forcing did not reproduce the reference reply`);
      }
      return turns;
    } finally {
      engine.close();
    }
  } finally {
    await model.dispose();
  }
}

async function generate(engine: Engine, model: LoadedModel, tokens: number[], pruned: number, decode: number, tap: LogitsTap): Promise<TurnRun> {
  for await (const event of engine.submit({ input: { tokens }, maxTokens: decode, sampling: { temperature: 0 }, ignoreEndOfGeneration: true })) {
    if (event.type === "error") throw event.error;
    if (event.type !== "finish") continue;
    return { prompt: tokens, pruned, reusedPrefix: event.usage.reusedPrefixTokens, reusedSection: event.usage.reusedSuffixTokens, reply: event.tokens, rows: tap.rows };
  }
  throw new Error(`the engine ended a request of ${model.path} without a finish event`);
}

/** One turn's divergence from the reference. */
interface TurnQuality {
  turn: number;
  promptTokens: number;
  pruned: number;
  reusedPrefix: number;
  reusedSection: number;
  /** KL(P_reference || P_reuse) in nats at each reply position. */
  kl: number[];
  /** Positions whose top token agrees with the reference's. */
  topAgree: number;
  /** Entropy of the reference distribution at each reply position, nats: how peaked what KL compares is. */
  referenceEntropy: number[];
}

function compare(reference: TurnRun[], reuse: TurnRun[]): TurnQuality[] {
  return reuse.map((run, t) => {
    const kl = run.rows.map((row, i) => klDivergence(reference[t].rows[i], row));
    const topAgree = run.rows.filter((row, i) => topToken(row) === topToken(reference[t].rows[i])).length;
    const referenceEntropy = reference[t].rows.map((row) => entropy(row));
    return { turn: t + 1, promptTokens: run.prompt.length, pruned: run.pruned, reusedPrefix: run.reusedPrefix, reusedSection: run.reusedSection, kl, topAgree, referenceEntropy };
  });
}

/** Over the turns that can reuse (2 on): every position's KL, the first positions', top-1 agreement, tokens reused. */
function summarise(turns: TurnQuality[]) {
  const later = turns.slice(1);
  const all = later.flatMap((turn) => turn.kl);
  const first = later.map((turn) => turn.kl[0]);
  return {
    klMean: mean(all), klMedian: median(all), klMax: Math.max(...all),
    klFirstMean: mean(first), klFirstMax: Math.max(...first),
    topAgreement: later.reduce((n, turn) => n + turn.topAgree, 0) / all.length,
    referenceEntropy: mean(later.flatMap((turn) => turn.referenceEntropy)),
    reusedPrefix: later.reduce((n, turn) => n + turn.reusedPrefix, 0),
    reusedSection: later.reduce((n, turn) => n + turn.reusedSection, 0),
    turnsWithSection: later.filter((turn) => turn.reusedSection > 0).length,
  };
}

/** KL figures: exact zero as 0, small values in exponent form. */
function formatKl(value: number): string {
  if (value === 0) return "0";
  return value < 1e-3 ? value.toExponential(1) : value.toFixed(4);
}

function percent(fraction: number): string {
  return `${(fraction * 100).toFixed(0)}%`;
}

const MODES: Array<{ name: string; cache: KvCacheOptions }> = [
  { name: "prefix only", cache: { sectionCaching: false } },
  { name: "section cache", cache: {} },
];

async function modelPath(name: string): Promise<string> {
  if (name === STORIES) return join(REPOSITORY_ROOT, "models", "stories260K", "stories260K.gguf");
  const [preset, dtype] = name.split(":");
  return benchModelPath(preset, parseModelDtype(dtype ?? "f32"));
}

/** The command line; --help prints it. */
const USAGE = `node dist/bench/section-reuse-quality.js [--models stories260K,tiny-qwen3] [--threads 2]
       [--turns 8] [--decode 16] [--system 64] [--user 24] [--history 2] [--tool-min 32] [--tool-max 48]
       [--context 512] [--seed 4242]`;
const cli: BenchCli = new BenchCli("section-reuse-quality", USAGE);

async function main(): Promise<void> {
  const values = cli.parse({
    models: { type: "string" }, threads: { type: "string" }, turns: { type: "string" }, decode: { type: "string" }, system: { type: "string" },
    user: { type: "string" }, history: { type: "string" }, "tool-min": { type: "string" }, "tool-max": { type: "string" }, context: { type: "string" }, seed: { type: "string" },
  });
  const models = (values.models ?? `${STORIES},tiny-qwen3`).split(",").filter(Boolean);
  // Defaults keep every prompt under 512 positions: the length stories260K was trained on (its GGUF says 2048).
  const settings: Settings = {
    threads: cli.integer("threads", values.threads ?? 2), turns: cli.integer("turns", values.turns ?? 8), decode: cli.integer("decode", values.decode ?? 16),
    system: cli.integer("system", values.system ?? 64), user: cli.integer("user", values.user ?? 24), history: cli.integer("history", values.history ?? 2, 0),
    toolMin: cli.integer("tool-min", values["tool-min"] ?? 32), toolMax: cli.integer("tool-max", values["tool-max"] ?? 48),
    context: cli.integer("context", values.context ?? 512), seed: cli.integer("seed", values.seed ?? 4242),
  };
  if (settings.turns < 2) cli.fail(`--turns must be at least 2 (turn 1 has nothing to reuse); got ${settings.turns}`);
  if (settings.toolMax < settings.toolMin) cli.fail("--tool-max must be at least --tool-min");
  const s = settings;
  const command = `node dist/bench/section-reuse-quality.js --models ${models.join(",")} --threads ${s.threads} --turns ${s.turns} --decode ${s.decode} --system ${s.system} --user ${s.user} --history ${s.history} --tool-min ${s.toolMin} --tool-max ${s.toolMax} --context ${s.context} --seed ${s.seed}`;
  const machine = printHeader(command, s.threads, [
    `conversation: ${s.system}-token system prompt, ${s.user}-token user task, ${s.history + 1} tool results of ${s.toolMin}-${s.toolMax} tokens in turn 1; each later turn adds the previous ${s.decode}-token reply (the reference's, greedy) and a tool result and prunes the oldest tool result`,
    `reference: no caching; prefix only and section cache: the same prompts, teacher-forced to the reference reply; f32 KV, block ${KV_BLOCK_SIZE}; KL(P_reference || P_reuse) in nats at temperature 1`,
  ]);

  const results = [];
  for (const name of models) {
    const path = await modelPath(name);
    const source = openModelSource(path);
    const context = Math.min(s.context, source.config.max_position_embeddings);
    const bos = source.ggufMetadata?.get("tokenizer.ggml.bos_token_id");
    const tokenizer = source.ggufMetadata ? tokenizerFromGguf(source.ggufMetadata, path) : tokenizerFromHuggingFace(path);
    const vocabulary = vocabularyFor(tokenizer, source.config.vocab_size, typeof bos === "number" ? bos : undefined);
    process.stderr.write(`${name}: reference (no caching) ...\n`);
    const reference = await runConversation(path, { prefixCaching: false }, s, context, vocabulary);
    const modes = [];
    for (const mode of MODES) {
      process.stderr.write(`${name}: ${mode.name} ...\n`);
      const turns = compare(reference, await runConversation(path, mode.cache, s, context, vocabulary, reference));
      modes.push({ mode: mode.name, turns, summary: summarise(turns) });
    }
    results.push({ model: name, path, context, vocabulary: vocabulary.described, modes });

    console.log("");
    console.log(`## ${name} (context ${context}; ${vocabulary.described})`);
    console.log("");
    console.log(`| turn | prompt tokens | pruned span | ${modes.map((m) => `${m.mode}: reused prefix + section | KL first | KL mean | KL max | top-1 agree`).join(" | ")} |`);
    console.log(`|---|---|---|${modes.map(() => "---|---|---|---|---|").join("")}`);
    for (let t = 0; t < s.turns; t++) {
      const first = modes[0].turns[t];
      console.log(`| ${t + 1} | ${first.promptTokens} | ${first.pruned} | ${modes.map(({ turns }) => {
        const turn = turns[t];
        return `${turn.reusedPrefix} + ${turn.reusedSection} | ${formatKl(turn.kl[0])} | ${formatKl(mean(turn.kl))} | ${formatKl(Math.max(...turn.kl))} | ${turn.topAgree}/${turn.kl.length}`;
      }).join(" | ")} |`);
    }
  }

  console.log("");
  console.log(`Turns 2-${s.turns} (${(s.turns - 1) * s.decode} reply positions per row): KL(P_reference || P_reuse) in nats; the reference's entropy (nats) says how peaked the compared distributions are.`);
  console.log("");
  console.log("| model | mode | reused prefix + section | turns reusing a section | KL mean | KL median | KL max | KL at first reply token, mean (max) | top-1 agreement | reference entropy, mean |");
  console.log("|---|---|---|---|---|---|---|---|---|---|");
  for (const { model, modes } of results) {
    for (const { mode, summary: m } of modes) {
      console.log(`| ${model} | ${mode} | ${m.reusedPrefix} + ${m.reusedSection} | ${m.turnsWithSection}/${s.turns - 1} | ${formatKl(m.klMean)} | ${formatKl(m.klMedian)} | ${formatKl(m.klMax)} | ${formatKl(m.klFirstMean)} (${formatKl(m.klFirstMax)}) | ${percent(m.topAgreement)} | ${m.referenceEntropy.toFixed(2)} |`);
    }
  }
  const prefixDrift = results.filter(({ modes }) => modes[0].summary.klMax > 1e-6);
  for (const { model, modes } of prefixDrift) {
    console.log(`WARNING: prefix-only reuse on ${model} diverges from the reference (KL max ${formatKl(modes[0].summary.klMax)}): prefix reuse should be exact`);
  }
  console.log(JSON.stringify({
    bench: "section-reuse-quality", command, date: machine.date, cpu: machine.cpu, cores: machine.cores, settings,
    models: results.map(({ modes, ...model }) => ({
      ...model,
      modes: modes.map(({ mode, turns, summary }) => ({ mode, summary, turns: turns.map(({ kl, referenceEntropy, ...turn }) => ({ ...turn, klFirst: kl[0], klMean: mean(kl), klMax: Math.max(...kl), referenceEntropy: mean(referenceEntropy) })) })),
    })),
  }));
}

await main();
process.exit(0);
