// What grammar-constrained decoding costs per generated token, against the decode step of the same model on this
// machine. Constrained generations run through the serving Engine (temperature 1, several seeds); each generated
// token sequence is then replayed through the constraint alone, timing the three calls the engine makes per token:
// allowed() (the token mask), the masked logits row (maskLogits), and accept(). Replays run cold (a freshly compiled
// constraint: the first request with a new schema), as a second request (the automaton already walked by the other
// seeds' outputs) and warm (the same output again: every mask cached).
// Run: npm run build && node dist/bench/grammar-masks.js [options] (USAGE below; --help prints it).
import { pathToFileURL } from "node:url";
import { Engine } from "../engine/engine.js";
import type { AnswerFormat, ConstraintSpec } from "../engine/grammar/answer.js";
import { CompiledConstraint } from "../engine/grammar/constraint.js";
import { SCHEMA_CORPUS } from "../engine/grammar/testing/schema-corpus.js";
import { maskLogits } from "../engine/grammar/token-masks.js";
import { tokenTrie } from "../engine/grammar/token-trie.js";
import { type LoadedModel, loadModel } from "../engine/load.js";
import type { EngineEvent, EngineInput, EngineRequest } from "../engine/request.js";
import type { Tokenizer } from "../engine/tokenizer/tokenizer.js";
import { type ModelDtype, parseModelDtype } from "../scripts/model-dtypes.js";
import { BenchCli } from "./bench-args.js";
import { benchModelPath, f32KvBytes, mean, median, printHeader, seededRandom } from "./bench-models.js";

/** A constraint to measure: a corpus schema by name, or JSON mode. */
export interface BenchSchema {
  name: string;
  format: AnswerFormat;
}

/** The name `--schemas` takes for JSON mode (`{type: "json_object"}`). */
export const JSON_MODE = "json-object";

/**
 * The default selection: a tool's arguments, nested objects, an enum, a bounded string, a pattern, a format, a
 * recursive $ref, an unbounded string, and JSON mode.
 */
export const DEFAULT_SCHEMAS: readonly string[] = [
  "tool-get-weather", "object-nested-three-levels", "enum-strings", "string-min-max-length", "pattern-semver",
  "format-date-time", "ref-recursive-tree", "string-min-length-unbounded", JSON_MODE,
];

/**
 * Per-token overheads other engines publish, quoted as published for scale only: other machines, vocabularies and
 * schemas, and mask computation alone (they apply the bitmask on the GPU), so compare them with the allowed() share.
 */
export const PUBLISHED_OVERHEADS = [
  {
    engine: "XGrammar",
    source: 'Dong et al., "XGrammar: Flexible and Efficient Structured Generation Engine for Large Language Models", arXiv 2411.15100, 2024',
    figure: "\"up to 100x speedup over existing solutions\" and \"near-zero overhead\" in end-to-end serving (abstract; per-token times in the paper depend on grammar and vocabulary)",
  },
  {
    engine: "llguidance",
    source: "llama.cpp docs/llguidance.md (and the llguidance README)",
    figure: "token mask for the Llama 3 tokenizer (128k): on average 50 µs of single-core CPU time per token on JSON Schema Bench, p99 0.5 ms, max 20 ms",
  },
] as const;

/** Unconstrained decode tokens timed per run for the baseline step. */
const DECODE_TOKENS = 32;
/** Warm replays per output: more samples for the warm p99. */
const WARM_REPEATS = 3;

/** Each per-token call's time in ms, one entry per replayed token. */
export interface TokenTimes {
  allowed: number[];
  mask: number[];
  accept: number[];
}

type FinishEvent = Extract<EngineEvent, { type: "finish" }>;

/** One constrained generation, as the engine reported it. */
interface Output {
  tokens: number[];
  complete: boolean;
  /** Engine ms per token after the first (decode steps with the constraint in them). */
  engineMsPerToken: number;
}

/** Mean ms per token of each of the constraint's calls. */
interface CallSplit {
  allowed: number;
  mask: number;
  accept: number;
}

/** What one schema's constraint costs. */
interface SchemaFigures {
  schema: string;
  outputs: number;
  complete: number;
  tokens: number;
  /** CompiledConstraint construction, vocabulary trie already built (mean over fresh compiles). */
  compileMs: number;
  /** Automaton states after every output's replay (token masks walk the trie, so they build states too). */
  states: number;
  /** Mask computations (trie walks) per token in cold replays: the rest were cache hits. */
  coldWalksPerToken: number;
  coldMs: number;
  /** Undefined with one seed (no other output to warm the automaton). */
  secondMs: number | undefined;
  warmMs: number;
  warmP99Ms: number;
  coldSplitMs: CallSplit;
  warmSplitMs: CallSplit;
  engineMsPerToken: number;
}

/**
 * The schemas `list` names (comma-separated corpus names and {@link JSON_MODE}, or "all": the whole corpus and JSON
 * mode).
 * @throws RangeError naming an unknown schema.
 */
export function selectSchemas(list: string): BenchSchema[] {
  const names = list === "all" ? [...SCHEMA_CORPUS.map((entry) => entry.name), JSON_MODE] : list.split(",").map((name) => name.trim());
  return names.map((name) => {
    if (name === JSON_MODE) return { name, format: { type: "json_object" } };
    const entry = SCHEMA_CORPUS.find((candidate) => candidate.name === name);
    if (!entry) throw new RangeError(`unknown schema '${name}': use corpus names (engine/grammar/testing/schema-corpus.ts), ${JSON_MODE} or all`);
    return { name, format: { type: "json_schema", schema: entry.schema } };
  });
}

/**
 * Replays `tokens` through a fresh constraint of `compiled` as the engine drives it per token (allowed(), the logits
 * row copied and masked, accept()) and appends each call's time in ms to `times`.
 * @throws ConstraintViolationError if `tokens` does not follow the constraint.
 */
export function replayTimes(compiled: CompiledConstraint, tokens: readonly number[], logits: Float32Array, masked: Float32Array, times: TokenTimes): void {
  const constraint = compiled.start();
  for (const token of tokens) {
    const start = performance.now();
    const mask = constraint.allowed();
    const masking = performance.now();
    maskLogits(logits, mask, masked); // as the engine does: into its own row, the runner's logits stay as they are
    const accepting = performance.now();
    constraint.accept(token);
    const end = performance.now();
    times.allowed.push(masking - start);
    times.mask.push(accepting - masking);
    times.accept.push(end - accepting);
  }
}

/** An empty record of per-token call times. */
export function emptyTimes(): TokenTimes {
  return { allowed: [], mask: [], accept: [] };
}

/** Each token's total time in ms. */
function totals(times: TokenTimes): number[] {
  return times.allowed.map((allowed, i) => allowed + times.mask[i]! + times.accept[i]!);
}

function callSplit(times: TokenTimes): CallSplit {
  return { allowed: mean(times.allowed), mask: mean(times.mask), accept: mean(times.accept) };
}

function percentile(values: readonly number[], fraction: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil(fraction * sorted.length) - 1)]!;
}

/** The prompt every request continues: the chat template when the model has one (thinking off), else raw text. */
function benchInput(model: LoadedModel): EngineInput {
  const request = "Reply with one JSON value that fits the required format.";
  if (!model.chatTemplate) return { text: `${request}\n` };
  return { messages: [{ role: "user", content: request }], templateKwargs: { enable_thinking: false } };
}

/** Runs `request` to its end; returns its finish event. */
async function finishOf(engine: Engine, request: EngineRequest): Promise<FinishEvent> {
  for await (const event of engine.submit(request)) {
    if (event.type === "error") throw event.error;
    if (event.type === "finish") return event;
  }
  throw new Error("the request ended without a finish event");
}

/** Engine ms per token after the first: the decode steps, sampling (and any constraint) included. */
function msPerDecodeToken(finish: FinishEvent): number {
  return ((finish.timings.total - finish.timings.timeToFirstToken) * 1000) / Math.max(1, finish.tokens.length - 1);
}

/**
 * The model's decode step in ms per token, unconstrained: median of 3 runs of {@link DECODE_TOKENS} tokens after a
 * warm-up, sampled at `temperature`.
 */
async function decodeStepMs(engine: Engine, input: EngineInput, temperature: number): Promise<number> {
  const request = (seed: number, maxTokens: number): EngineRequest => ({ input, maxTokens, sampling: { temperature, seed }, ignoreEndOfGeneration: true });
  await finishOf(engine, request(0, 4));
  const runs: number[] = [];
  for (let run = 1; run <= 3; run++) runs.push(msPerDecodeToken(await finishOf(engine, request(run, DECODE_TOKENS + 1))));
  return median(runs);
}

/** Constrained generations of `schema` through the engine, one per seed. */
async function constrainedOutputs(engine: Engine, input: EngineInput, schema: BenchSchema, seeds: number, maxTokens: number): Promise<Output[]> {
  const constraint: ConstraintSpec = { format: schema.format };
  const outputs: Output[] = [];
  for (let seed = 1; seed <= seeds; seed++) {
    const finish = await finishOf(engine, { input, maxTokens, sampling: { temperature: 1, seed }, constraint });
    outputs.push({ tokens: finish.tokens, complete: finish.constraintComplete === true, engineMsPerToken: msPerDecodeToken(finish) });
  }
  return outputs;
}

/** Replays of every output: cold, warm (same output again) and, with two seeds or more, as a second request. */
function replayFigures(schema: BenchSchema, outputs: Output[], tokenizer: Tokenizer, vocabularySize: number, logits: Float32Array): SchemaFigures {
  const spec: ConstraintSpec = { format: schema.format };
  const masked = new Float32Array(vocabularySize);
  const cold = emptyTimes();
  const warm = emptyTimes();
  const compileMs: number[] = [];
  let walks = 0;
  for (const output of outputs) {
    const started = performance.now();
    const compiled = new CompiledConstraint(spec, tokenizer, vocabularySize);
    compileMs.push(performance.now() - started);
    replayTimes(compiled, output.tokens, logits, masked, cold);
    walks += compiled.masks.computed;
    for (let repeat = 0; repeat < WARM_REPEATS; repeat++) replayTimes(compiled, output.tokens, logits, masked, warm);
  }
  const second = emptyTimes();
  let states = 0;
  for (let i = 0; i < outputs.length; i++) {
    const compiled = new CompiledConstraint(spec, tokenizer, vocabularySize);
    outputs.forEach((other, j) => {
      if (j !== i) replayTimes(compiled, other.tokens, logits, masked, emptyTimes());
    });
    replayTimes(compiled, outputs[i]!.tokens, logits, masked, second);
    states = Math.max(states, compiled.automaton.stateCount);
  }
  const warmTotals = totals(warm);
  return {
    schema: schema.name,
    outputs: outputs.length,
    complete: outputs.filter((output) => output.complete).length,
    tokens: cold.allowed.length,
    compileMs: mean(compileMs),
    states,
    coldWalksPerToken: walks / Math.max(1, cold.allowed.length),
    coldMs: mean(totals(cold)),
    secondMs: outputs.length > 1 ? mean(totals(second)) : undefined,
    warmMs: mean(warmTotals),
    warmP99Ms: percentile(warmTotals, 0.99),
    coldSplitMs: callSplit(cold),
    warmSplitMs: callSplit(warm),
    engineMsPerToken: mean(outputs.map((output) => output.engineMsPerToken)),
  };
}

/** A logits row of random values (maskLogits's cost depends on the mask, not on the values). */
function randomLogits(vocabularySize: number): Float32Array {
  const random = seededRandom(11);
  return Float32Array.from({ length: vocabularySize }, () => random() * 20 - 10);
}

/** Builds the vocabulary trie now, as the first constrained request would; returns its build time and size. */
function buildTrie(tokenizer: Tokenizer, vocabularySize: number): { buildMs: number; nodes: number; tokens: number } {
  const started = performance.now();
  const trie = tokenTrie(tokenizer, vocabularySize);
  return { buildMs: performance.now() - started, nodes: trie.nodeCount, tokens: trie.tokenIds.length };
}

function formatMs(ms: number | undefined): string {
  return ms === undefined || Number.isNaN(ms) ? "-" : ms.toFixed(3);
}

function formatPercent(part: number, whole: number): string {
  return `${((100 * part) / whole).toFixed(1)}%`;
}

function printTable(rows: SchemaFigures[], stepMs: number): void {
  console.log("");
  console.log("| schema | outputs (complete) | tokens | compile ms | states | cold walks/tok | cold ms/tok | 2nd request ms/tok | warm ms/tok | warm p99 ms "
    + "| warm allowed / mask / accept ms | cold % of step | warm % of step | engine constrained ms/tok |");
  console.log("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|");
  for (const r of rows) {
    const warmSplit = [r.warmSplitMs.allowed, r.warmSplitMs.mask, r.warmSplitMs.accept].map(formatMs).join(" / ");
    console.log(`| ${r.schema} | ${r.outputs} (${r.complete}) | ${r.tokens} | ${r.compileMs.toFixed(2)} | ${r.states} | ${r.coldWalksPerToken.toFixed(2)} | `
      + `${formatMs(r.coldMs)} | ${formatMs(r.secondMs)} | ${formatMs(r.warmMs)} | ${formatMs(r.warmP99Ms)} | ${warmSplit} | `
      + `${formatPercent(r.coldMs, stepMs)} | ${formatPercent(r.warmMs, stepMs)} | ${r.engineMsPerToken.toFixed(3)} |`);
  }
}

/** The model spec `preset:dtype` (dtype q8_0 when left out). */
function parseModelSpec(spec: string): { preset: string; dtype: ModelDtype } {
  const [preset, dtype = "q8_0"] = spec.split(":");
  return { preset: preset!, dtype: parseModelDtype(dtype) };
}

/** The command line; --help prints it. */
const USAGE = `node dist/bench/grammar-masks.js [--model qwen3-0.6b:q8_0] [--threads 2] [--tokens 128]
       [--seeds 3] [--schemas name,name|all]`;
const cli: BenchCli = new BenchCli("grammar-masks", USAGE);

async function main(): Promise<void> {
  const values = cli.parse({ model: { type: "string" }, threads: { type: "string" }, tokens: { type: "string" }, seeds: { type: "string" }, schemas: { type: "string" } });
  const { preset, dtype } = cli.check(() => parseModelSpec(values.model ?? "qwen3-0.6b:q8_0"));
  const threads = cli.integer("threads", values.threads ?? 2);
  const maxTokens = cli.integer("tokens", values.tokens ?? 128);
  const seeds = cli.integer("seeds", values.seeds ?? 3);
  const schemaList = values.schemas ?? DEFAULT_SCHEMAS.join(",");
  const schemas = cli.check(() => selectSchemas(schemaList));
  const command = `node dist/bench/grammar-masks.js --model ${preset}:${dtype} --threads ${threads} --tokens ${maxTokens} --seeds ${seeds} --schemas ${schemaList}`;

  const path = await benchModelPath(preset, dtype);
  const context = maxTokens + 256;
  const model = await loadModel(path, { backend: "wasm", threads, contextSize: context, maxSequences: 1, batchSize: 256, kvCache: { bytes: f32KvBytes(path, context, 2) } });
  try {
    const vocabularySize = model.config.vocab_size;
    const trie = buildTrie(model.tokenizer, vocabularySize);
    const engine = new Engine(model, { cache: { prefixCaching: false, sectionCaching: false }, maxSequences: 1 });
    const input = benchInput(model);
    // Greedy is the baseline (the model's step with the cheapest sampling). A temperature-1 step adds a softmax over
    // the whole vocabulary, constrained or not: masked logits are -Infinity, still in the candidates. Measured before
    // and after the constrained runs, the faster kept: on a shared VM one slow spell would otherwise skew every ratio.
    const before = { greedy: await decodeStepMs(engine, input, 0), sampled: await decodeStepMs(engine, input, 1) };
    const logits = randomLogits(vocabularySize);
    const results: SchemaFigures[] = [];
    for (const schema of schemas) {
      const outputs = await constrainedOutputs(engine, input, schema, seeds, maxTokens);
      results.push(replayFigures(schema, outputs, model.tokenizer, vocabularySize, logits));
    }
    const stepMs = Math.min(before.greedy, await decodeStepMs(engine, input, 0));
    const sampledStepMs = Math.min(before.sampled, await decodeStepMs(engine, input, 1));
    const machine = printHeader(command, threads, [
      `model ${preset} ${dtype.toUpperCase()} (random weights), vocabulary ${vocabularySize}; ${model.device}`,
      `decode step (unconstrained, median of 3 x ${DECODE_TOKENS} tokens, the faster of before and after the constrained runs): greedy ${stepMs.toFixed(3)} ms/token (the % columns divide by this); `
        + `temperature 1 ${sampledStepMs.toFixed(3)} ms/token (a softmax over the whole vocabulary)`,
      `vocabulary trie (built once per tokenizer, shared by every schema): ${trie.buildMs.toFixed(1)} ms, ${trie.nodes} nodes, ${trie.tokens} tokens`,
      `per schema: ${seeds} constrained generations (temperature 1, seeds 1..${seeds}, at most ${maxTokens} tokens) replayed through the constraint:`,
      "cold = fresh CompiledConstraint; 2nd request = automaton walked by the other seeds' outputs first; warm = same output again (every mask cached);",
      "per token = allowed() + maskLogits + accept(); engine constrained ms/tok = the engine's own decode steps with the constraint (temperature 1)",
      ...PUBLISHED_OVERHEADS.map((p) => `as published, ${p.engine} (${p.source}): ${p.figure}`),
    ]);
    engine.close();
    printTable(results, stepMs);
    console.log(JSON.stringify({
      bench: "grammar-masks", command, machine, node: process.version, model: `${preset} ${dtype}`, threads, vocabularySize,
      decodeStepMs: stepMs, sampledDecodeStepMs: sampledStepMs, trie, published: PUBLISHED_OVERHEADS, results,
    }));
  } finally {
    await model.dispose();
  }
}

// Run only as a script: the smoke test imports the helpers above.
if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  await main();
  process.exit(0);
}
