// `loom admin corpus ...`: the local search corpus. `corpus add` reads files here, in the CLI process, and sends the
// documents in batches (the admin endpoint takes bodies of up to 8 MiB), reporting skipped files and progress on
// stderr; the other subcommands are single admin commands.
import { parseArgs } from "node:util";
import { UsageError } from "../../engine/cli/arguments.js";
import { type AdminCommand, MAX_CORPUS_DOCUMENTS_PER_COMMAND } from "../platform/admin/admin-command.js";
import type { AdminResult } from "../platform/admin/run-admin-command.js";
import type { CorpusDocument } from "../platform/store/corpus-store.js";
import { type SkippedFile, listCorpusFiles, readCorpusFile } from "../runs/tools/corpus-files.js";

type Values = Record<string, string | boolean | string[] | undefined>;
type OptionSpec = Record<string, { type: "string" | "boolean"; short?: string; multiple?: boolean }>;

/** The usage lines of the corpus subcommands, for `loom admin --help`. */
export const CORPUS_USAGE = `  corpus add PATH... [--url URL] [--max-file-bytes N]
                                         add .txt, .md and .html files, folders recursively, to the search
                                         corpus (replacing documents of the same URL: file:// and the absolute
                                         path, or --url for a single file); files over 4 MiB are skipped
  corpus list [--limit N] [--offset N]   list the corpus's documents and their count
  corpus count                           how many documents the corpus holds
  corpus remove URL                      remove one document
  corpus clear                           remove every document
`;

/** `corpus add`'s reading of files, carried from the arguments to the run. */
export interface CorpusAddPlan {
  paths: string[];
  url?: string;
  maxFileBytes?: number;
}

/** Parses the arguments after `loom admin corpus`. `common` are the options every admin command takes. */
export function parseCorpusArguments(argv: string[], common: OptionSpec): { command: AdminCommand; values: Values; corpusAdd?: CorpusAddPlan } | "help" {
  const [verb, ...rest] = argv;
  const options: Record<string, OptionSpec> = {
    add: { url: { type: "string" }, "max-file-bytes": { type: "string" } },
    list: { limit: { type: "string" }, offset: { type: "string" } },
    count: {}, remove: {}, clear: {},
  };
  if (verb === undefined || !(verb in options)) throw new UsageError(`unknown admin command 'corpus${verb === undefined ? "" : ` ${verb}`}'`);
  const { values, positionals } = parseArgs({ args: rest, strict: true, allowPositionals: true, options: { ...common, ...options[verb] } });
  const v = values as Values;
  if (v.help) return "help";
  const positionalCount = verb === "add" ? (positionals.length > 0 ? positionals.length : -1) : verb === "remove" ? 1 : 0;
  if (positionalCount === -1) throw new UsageError("'loom admin corpus add' takes one or more files or folders");
  if (positionals.length !== positionalCount) {
    throw new UsageError(positionalCount === 0 ? `'loom admin corpus ${verb}' takes no argument '${positionals[0]}'` : `'loom admin corpus ${verb}' takes one URL`);
  }
  switch (verb) {
    case "add": {
      const maxFileBytes = v["max-file-bytes"] === undefined ? undefined : integerFlag("max-file-bytes", v["max-file-bytes"] as string, 1);
      const url = v.url as string | undefined;
      // Placeholder documents: the files are read when the command runs.
      return { command: { command: "corpus.add", documents: [] }, values: v, corpusAdd: { paths: positionals, ...(url === undefined ? {} : { url }), ...(maxFileBytes === undefined ? {} : { maxFileBytes }) } };
    }
    case "list":
    case "count": {
      const limit = verb === "count" ? 0 : v.limit === undefined ? undefined : integerFlag("limit", v.limit as string, 0);
      const offset = v.offset === undefined ? undefined : integerFlag("offset", v.offset as string, 0);
      return { command: { command: "corpus.list", ...(limit === undefined ? {} : { limit }), ...(offset === undefined ? {} : { offset }) }, values: v };
    }
    case "remove":
      return { command: { command: "corpus.remove", url: positionals[0]! }, values: v };
    default:
      return { command: { command: "corpus.clear" }, values: v };
  }
}

function integerFlag(flag: string, value: string, minimum: number): number {
  const number = Number(value);
  if (value.trim() === "" || !Number.isSafeInteger(number) || number < minimum) throw new UsageError(`--${flag} must be an integer >= ${minimum}, got '${value}'`);
  return number;
}

/** The JSON of `corpus add`: the totals of its batches, the count after, and the files read and skipped. */
export interface CorpusAddResult {
  added: number;
  replaced: number;
  count: number;
  files: number;
  skipped: SkippedFile[];
}

/** JSON bytes of one batch: half the admin endpoint's 8 MiB, so that one document of the largest size fits alone. */
const BATCH_BYTES = 4 * 1024 * 1024;

/**
 * Reads the plan's files and sends their documents through `run` (the database here, or the running server) in
 * batches. `report` gets a line per skipped file and per batch sent while more remain.
 */
export async function addCorpusFiles(plan: CorpusAddPlan, run: (command: AdminCommand) => Promise<AdminResult>, report: (line: string) => void): Promise<CorpusAddResult> {
  const { files, skipped } = await listCorpusFiles(plan.paths);
  if (plan.url !== undefined && (files.length !== 1 || plan.paths.length !== 1)) throw new UsageError("--url names one document: give one file with it");
  for (const skip of skipped) report(`skipped ${skip.path}: ${skip.reason}`);
  const totals = { added: 0, replaced: 0, count: -1 };
  let batch: CorpusDocument[] = [];
  let batchBytes = 0;
  let read = 0;
  const send = async () => {
    if (batch.length === 0) return;
    const result = (await run({ command: "corpus.add", documents: batch })) as { added: number; replaced: number; count: number };
    totals.added += result.added;
    totals.replaced += result.replaced;
    totals.count = result.count;
    batch = [];
    batchBytes = 0;
  };
  for (const path of files) {
    const outcome = await readCorpusFile(path, { maxFileBytes: plan.maxFileBytes, url: plan.url });
    read++;
    if ("reason" in outcome) {
      skipped.push(outcome);
      report(`skipped ${outcome.path}: ${outcome.reason}`);
      continue;
    }
    const bytes = Buffer.byteLength(JSON.stringify(outcome));
    if (batch.length > 0 && (batchBytes + bytes > BATCH_BYTES || batch.length === MAX_CORPUS_DOCUMENTS_PER_COMMAND)) {
      await send();
      report(`sent ${read - 1} of ${files.length} files`);
    }
    batch.push(outcome);
    batchBytes += bytes;
  }
  await send();
  if (totals.count < 0) totals.count = ((await run({ command: "corpus.list", limit: 0 })) as { count: number }).count;
  return { ...totals, files: files.length, skipped };
}
