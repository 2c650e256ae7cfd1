// `loom admin`: the operator's commands (organizations, keys, usage, operator tokens) on a data dir or a PostgreSQL URL; when a running
// loom server holds the data dir, the command goes to that server instead (PGlite admits one process).
import { resolve } from "node:path";
import { parseArgs } from "node:util";
import { setFlagsFromString } from "node:v8";
import { UsageError } from "../../engine/cli/arguments.js";
import { type ModelPrice, PlatformInputError } from "../platform/contract.js";
import type { AdminCommand } from "../platform/admin/admin-command.js";
import { readAdminEndpointFile } from "../platform/admin/admin-endpoint-file.js";
import { sendAdminCommand } from "../platform/admin/admin-request.js";
import { formatAdminResult } from "../platform/admin/admin-text.js";
import { type AdminResult, runAdminCommand } from "../platform/admin/run-admin-command.js";
import { DataDirLockedError } from "../platform/db/data-dir-lock.js";
import { defaultDataDir } from "../platform/db/data-dir.js";
import { openDatabase } from "../platform/db/open-database.js";
import type { KeyOptions } from "../platform/store/key-store.js";
import type { OrganizationPatch } from "../platform/store/organization-patch.js";
import { createPlatformStores } from "../platform/store/platform-stores.js";
import { type CorpusAddPlan, CORPUS_USAGE, addCorpusFiles, parseCorpusArguments } from "./admin-corpus.js";

export const ADMIN_USAGE = `Usage: loom admin <command> [options]

Commands:
  org create --name NAME [settings]      create an organization (default limits: 100 requests/min,
                                         1,000,000 tokens/min, 10,000,000 tokens/day)
  org list                               list organizations
  org show ORG_ID                        show one organization, with its webhook signing secret (made now
                                         if it has none) for the receivers of its runs' callbacks
  org set ORG_ID [settings]              change an organization
  org rotate-webhook-secret ORG_ID       replace its webhook signing secret (callbacks use the new one at once)
  key create --org ORG_ID --kind management|inference [--name NAME] [--rpm N] [--tpm N] [--tpd N]
             [--model SLUG ...]          mint a key (printed once; only its SHA-256 digest is kept)
  key list --org ORG_ID [--kind K]       list an organization's keys (never their secrets)
  key revoke --org ORG_ID KEY_ID         deactivate a key
  usage --org ORG_ID [--day YYYY-MM-DD]  usage rows (per key, model and UTC day) and their totals
  payments [--limit N] [--status S]      the machine endpoints' payments, newest first (default 100): payer,
                                         amount, transaction, run; S: settling, settled or failed
  operator-token create --name NAME      mint a token that signs in to the web dashboard (/dashboard/) as the
                                         operator (printed once; only its SHA-256 digest is kept)
  operator-token list                    list operator tokens (never the tokens themselves)
  operator-token revoke TOKEN_ID         revoke one; the dashboard sessions signed in with it end at once
${CORPUS_USAGE}
Settings (org create and org set):
  --name NAME                     rename
  --billing subscription|prepaid|none
  --plan-label LABEL|none         --plan-status STATUS|none     --unlimited-comp true|false
  --allowance-basis credit|tokens|none                          --allowance N (dollars or tokens per UTC day)
  --allowance-hard-cap true|false --closed-beta true|false
  --rpm N|none  --tpm N|none  --tpd N|none                      organization limits (none: no limit)
  --credits DOLLARS               set the prepaid balance
  --add-credits DOLLARS           add to it (--add-credits=-5 takes 5 dollars away)
  --price MODEL=IN/OUT            dollars per million input/output tokens ("*" for any other model;
                                  MODEL=none removes a price); repeatable
  --pool NAME|none                a dedicated pool of engine workers (loom worker --pool NAME): gateways run
                                  its requests only there, and no one else's there; its limits are the ones
                                  above (none: back to the shared pool)

Where (every command):
  --data-dir DIR         the embedded database (default: LOOM_DATA_DIR, else $XDG_DATA_HOME/loom, else
                         ~/.local/share/loom); when a loom server holds it, the command goes to that server
  --database-url URL     PostgreSQL instead (default: LOOM_DATABASE_URL)
  --json                 print one JSON object (the record, with \`id\`; \`key\` for a new key)
`;

/** Each command's options besides the common ones, and its positional argument (if any). */
const COMMON = {
  "data-dir": { type: "string" }, "database-url": { type: "string" }, json: { type: "boolean" }, help: { type: "boolean", short: "h" },
} as const;
const SETTINGS = {
  name: { type: "string" }, billing: { type: "string" }, "plan-label": { type: "string" }, "plan-status": { type: "string" },
  "unlimited-comp": { type: "string" }, "allowance-basis": { type: "string" }, allowance: { type: "string" },
  "allowance-hard-cap": { type: "string" }, "closed-beta": { type: "string" }, rpm: { type: "string" }, tpm: { type: "string" },
  tpd: { type: "string" }, credits: { type: "string" }, "add-credits": { type: "string" }, price: { type: "string", multiple: true },
  pool: { type: "string" },
} as const;
const COMMANDS = {
  "org create": { options: SETTINGS, positional: undefined },
  "org list": { options: {}, positional: undefined },
  "org show": { options: {}, positional: "ORG_ID" },
  "org set": { options: SETTINGS, positional: "ORG_ID" },
  "org rotate-webhook-secret": { options: {}, positional: "ORG_ID" },
  "key create": {
    options: { org: { type: "string" }, kind: { type: "string" }, name: { type: "string" }, rpm: { type: "string" }, tpm: { type: "string" }, tpd: { type: "string" }, model: { type: "string", multiple: true } },
    positional: undefined,
  },
  "key list": { options: { org: { type: "string" }, kind: { type: "string" } }, positional: undefined },
  "key revoke": { options: { org: { type: "string" } }, positional: "KEY_ID" },
  usage: { options: { org: { type: "string" }, day: { type: "string" } }, positional: undefined },
  payments: { options: { limit: { type: "string" }, status: { type: "string" } }, positional: undefined },
  "operator-token create": { options: { name: { type: "string" } }, positional: undefined },
  "operator-token list": { options: {}, positional: undefined },
  "operator-token revoke": { options: {}, positional: "TOKEN_ID" },
} as const;

export type Values = Record<string, string | boolean | string[] | undefined>;

/** The flag (or positional) a command's field comes from, for error messages. */
const FIELD_FLAGS: Record<string, string> = {
  name: "--name", billingMode: "--billing", planLabel: "--plan-label", planStatus: "--plan-status", isUnlimitedComp: "--unlimited-comp",
  allowanceBasis: "--allowance-basis", allowanceAmount: "--allowance", allowanceHardCap: "--allowance-hard-cap", closedBeta: "--closed-beta",
  requestsPerMinute: "--rpm", tokensPerMinute: "--tpm", tokensPerDay: "--tpd", creditBalanceDollars: "--credits", addCreditsDollars: "--add-credits",
  pool: "--pool", "limits.requestsPerMinute": "--rpm", "limits.tokensPerMinute": "--tpm", "limits.tokensPerDay": "--tpd", kind: "--kind", day: "--day", keyId: "KEY_ID", tokenId: "TOKEN_ID",
};

function flagOf(field: string, command: AdminCommand["command"]): string {
  if (command.startsWith("corpus.")) return field === "url" ? "URL" : field.startsWith("documents") ? "PATH" : `--${field}`;
  if (field === "organizationId") return command === "org.show" || command === "org.set" || command === "org.rotate-webhook-secret" ? "ORG_ID" : "--org";
  if (field.startsWith("prices")) return "--price";
  if (field.startsWith("allowedModels")) return "--model";
  return FIELD_FLAGS[field] ?? field;
}

function required(values: Values, flag: string): string {
  const value = values[flag];
  if (typeof value !== "string") throw new UsageError(`--${flag} is required`);
  return value;
}

function booleanFlag(values: Values, flag: string): boolean | undefined {
  const value = values[flag];
  if (value === undefined) return undefined;
  if (value === "true" || value === "false") return value === "true";
  throw new UsageError(`--${flag} must be true or false, got '${String(value)}'`);
}

function numberFlag(flag: string, value: string): number {
  const number = Number(value);
  if (value.trim() === "" || !Number.isFinite(number)) throw new UsageError(`--${flag} must be a number, got '${value}'`);
  return number;
}

/** A limit flag: an integer >= 1, or `none` (null: no limit). */
function limitFlag(values: Values, flag: string): number | null | undefined {
  const value = values[flag];
  if (typeof value !== "string") return undefined;
  if (value === "none") return null;
  const number = Number(value);
  if (value.trim() === "" || !Number.isSafeInteger(number) || number < 1) throw new UsageError(`--${flag} must be an integer >= 1 or none, got '${value}'`);
  return number;
}

/** A flag of fixed choices, `none` among them meaning null. */
function choiceFlag<T extends string>(values: Values, flag: string, choices: readonly T[]): T | null | undefined {
  const value = values[flag];
  if (typeof value !== "string") return undefined;
  if (value === "none") return null;
  if (!(choices as readonly string[]).includes(value)) throw new UsageError(`--${flag} must be ${[...choices, "none"].join(", ")}, got '${value}'`);
  return value as T;
}

function textOrNone(values: Values, flag: string): string | null | undefined {
  const value = values[flag];
  if (typeof value !== "string") return undefined;
  return value === "none" ? null : value;
}

/** `--price MODEL=IN/OUT` (or `MODEL=none`) values as a prices patch. */
function pricesFlag(values: Values): Record<string, ModelPrice | null> | undefined {
  const entries = values.price as string[] | undefined;
  if (entries === undefined) return undefined;
  const prices: Record<string, ModelPrice | null> = {};
  for (const entry of entries) {
    const match = /^(.+)=(?:none|([^/]+)\/([^/]+))$/.exec(entry);
    if (match === null) throw new UsageError(`--price must be MODEL=IN/OUT (dollars per million input/output tokens) or MODEL=none, got '${entry}'`);
    prices[match[1]!] = match[2] === undefined ? null : { inputPerMillion: numberFlag("price", match[2]), outputPerMillion: numberFlag("price", match[3]!) };
  }
  return prices;
}

/** The settings flags as an organization patch (only those given). */
function settingsPatch(values: Values): OrganizationPatch {
  const patch: OrganizationPatch = {};
  const put = <K extends keyof OrganizationPatch>(field: K, value: OrganizationPatch[K] | undefined) => {
    if (value !== undefined) patch[field] = value;
  };
  put("name", values.name as string | undefined);
  put("billingMode", choiceFlag(values, "billing", ["subscription", "prepaid"] as const));
  put("planLabel", textOrNone(values, "plan-label"));
  put("planStatus", textOrNone(values, "plan-status"));
  put("isUnlimitedComp", booleanFlag(values, "unlimited-comp"));
  put("allowanceBasis", choiceFlag(values, "allowance-basis", ["credit", "tokens"] as const));
  put("allowanceAmount", typeof values.allowance === "string" ? numberFlag("allowance", values.allowance) : undefined);
  put("allowanceHardCap", booleanFlag(values, "allowance-hard-cap"));
  put("closedBeta", booleanFlag(values, "closed-beta"));
  put("requestsPerMinute", limitFlag(values, "rpm"));
  put("tokensPerMinute", limitFlag(values, "tpm"));
  put("tokensPerDay", limitFlag(values, "tpd"));
  put("creditBalanceDollars", typeof values.credits === "string" ? numberFlag("credits", values.credits) : undefined);
  put("addCreditsDollars", typeof values["add-credits"] === "string" ? numberFlag("add-credits", values["add-credits"]) : undefined);
  put("prices", pricesFlag(values));
  put("pool", textOrNone(values, "pool"));
  return patch;
}

/** Builds the command from `loom admin` arguments. */
export function parseAdminArguments(argv: string[]): { command: AdminCommand; values: Values; corpusAdd?: CorpusAddPlan } | "help" {
  const [group, verb] = argv;
  if (group === "corpus") return parseCorpusArguments(argv.slice(1), COMMON);
  const single = group === "usage" || group === "payments";
  const name = single ? group : `${group} ${verb}`;
  const spec = COMMANDS[name as keyof typeof COMMANDS];
  if (group === undefined || group === "help" || group === "--help" || group === "-h") return "help";
  if (spec === undefined) throw new UsageError(`unknown admin command '${argv.slice(0, group === "org" || group === "key" || group === "operator-token" ? 2 : 1).join(" ")}'`);
  const rest = argv.slice(single ? 1 : 2);
  const { values, positionals } = parseArgs({ args: rest, strict: true, allowPositionals: true, options: { ...COMMON, ...spec.options } });
  if (values.help) return "help";
  if (spec.positional === undefined && positionals.length > 0) throw new UsageError(`'loom admin ${name}' takes no argument '${positionals[0]}'`);
  if (spec.positional !== undefined && positionals.length !== 1) throw new UsageError(`'loom admin ${name}' takes one ${spec.positional}`);
  const positional = positionals[0]!;
  const v = values as Values;
  let command: AdminCommand;
  switch (name) {
    case "org create": {
      const { name: organizationName, ...fields } = settingsPatch(v);
      if (organizationName === undefined) throw new UsageError("--name is required");
      command = { command: "org.create", name: organizationName, ...(Object.keys(fields).length > 0 ? { fields } : {}) };
      break;
    }
    case "org list":
      command = { command: "org.list" };
      break;
    case "org show":
      command = { command: "org.show", organizationId: positional };
      break;
    case "org set": {
      const patch = settingsPatch(v);
      if (Object.keys(patch).length === 0) throw new UsageError("'loom admin org set' needs at least one setting (see loom admin --help)");
      command = { command: "org.set", organizationId: positional, patch };
      break;
    }
    case "org rotate-webhook-secret":
      command = { command: "org.rotate-webhook-secret", organizationId: positional };
      break;
    case "key create": {
      const kind = required(v, "kind");
      if (kind !== "management" && kind !== "inference") throw new UsageError(`--kind must be management or inference, got '${kind}'`);
      const options: KeyOptions = {};
      const limits = { requestsPerMinute: limitFlag(v, "rpm"), tokensPerMinute: limitFlag(v, "tpm"), tokensPerDay: limitFlag(v, "tpd") };
      const given = Object.fromEntries(Object.entries(limits).filter(([, value]) => value !== undefined && value !== null));
      if (Object.keys(given).length > 0) options.limits = given;
      if (v.model !== undefined) options.allowedModels = v.model as string[];
      command = {
        command: "key.create",
        organizationId: required(v, "org"),
        kind,
        name: (v.name as string | undefined) ?? `${kind} key`,
        ...(Object.keys(options).length > 0 ? { options } : {}),
      };
      break;
    }
    case "key list": {
      const kind = v.kind as string | undefined;
      if (kind !== undefined && kind !== "management" && kind !== "inference") throw new UsageError(`--kind must be management or inference, got '${kind}'`);
      command = { command: "key.list", organizationId: required(v, "org"), ...(kind === undefined ? {} : { kind }) };
      break;
    }
    case "key revoke":
      command = { command: "key.revoke", organizationId: required(v, "org"), keyId: positional };
      break;
    case "payments": {
      const limit = v.limit === undefined ? undefined : Number(v.limit);
      if (limit !== undefined && !(Number.isSafeInteger(limit) && limit >= 1)) throw new UsageError(`--limit must be a positive integer, got '${String(v.limit)}'`);
      const status = v.status as string | undefined;
      if (status !== undefined && status !== "settling" && status !== "settled" && status !== "failed") throw new UsageError(`--status must be settling, settled or failed, got '${status}'`);
      command = { command: "payments.list", ...(limit !== undefined ? { limit } : {}), ...(status !== undefined ? { status } : {}) };
      break;
    }
    case "operator-token create":
      command = { command: "operator-token.create", name: required(v, "name") };
      break;
    case "operator-token list":
      command = { command: "operator-token.list" };
      break;
    case "operator-token revoke":
      command = { command: "operator-token.revoke", tokenId: positional };
      break;
    default:
      command = { command: "usage", organizationId: required(v, "org"), ...(typeof v.day === "string" ? { day: v.day } : {}) };
  }
  return { command, values: v };
}

/**
 * One command, then the process ends: V8 compiles PGlite's WebAssembly with its baseline compiler (Liftoff), then
 * recompiles the functions that run hot with TurboFan in background threads, work that pays off only in a process
 * that keeps running (`loom admin org list` on a data dir: 1.0 CPU-second, 0.55 with Liftoff only, and sooner done).
 * Process-wide, for WebAssembly compiled from here on: only the short-lived CLI commands call it (executeAdminCommand),
 * never a server, nor `corpus add` (which may load many documents). Without effect where no PGlite opens (PostgreSQL,
 * or the running server's admin endpoint).
 */
function compileWasmForOneCommand(): void {
  setFlagsFromString("--liftoff-only");
}

/**
 * Runs the command where the data lives: on PostgreSQL (--database-url / LOOM_DATABASE_URL); else in the data dir,
 * opened here, or through the running loom server that holds it (its admin.json).
 */
export async function executeAdminCommand(command: AdminCommand, values: Values): Promise<AdminResult> {
  compileWasmForOneCommand();
  const target = await openAdminTarget(values);
  try {
    return await target.run(command);
  } finally {
    await target.close();
  }
}

/**
 * The database the flags name: --database-url (else LOOM_DATABASE_URL when no --data-dir), else --data-dir, else the
 * default data dir. @throws UsageError when both flags are given.
 */
export function databaseLocationOf(values: Values): { url: string } | { dataDir: string } {
  const flagUrl = values["database-url"] as string | undefined;
  const flagDir = values["data-dir"] as string | undefined;
  if (flagUrl !== undefined && flagDir !== undefined) throw new UsageError("--data-dir and --database-url name two databases: give one");
  const url = flagUrl ?? (flagDir === undefined ? process.env.LOOM_DATABASE_URL || undefined : undefined);
  // Absolute from here on: `loom update` writes it into its journal, which another working folder may read.
  return url !== undefined ? { url } : { dataDir: resolve(flagDir ?? defaultDataDir()) };
}

/** Where admin commands run: the database, or the running server holding it. */
export interface AdminTarget {
  run(command: AdminCommand): Promise<AdminResult>;
  close(): Promise<void>;
}

/** Where commands run, opened once for several (corpus add sends batches). */
export async function openAdminTarget(values: Values): Promise<AdminTarget> {
  const location = databaseLocationOf(values);
  const url = "url" in location ? location.url : undefined;
  const dataDir = "dataDir" in location ? location.dataDir : defaultDataDir();
  let database;
  try {
    database = await openDatabase(url !== undefined ? { url, poolSize: 2 } : { dataDir });
  } catch (error) {
    if (!(error instanceof DataDirLockedError)) throw error;
    const endpoint = readAdminEndpointFile(dataDir);
    if (endpoint === undefined || endpoint.pid !== error.pid) {
      throw new Error(`${error.message}; it offers no admin endpoint (${dataDir}/admin.json): if it is a loom server, it is one without the admin endpoint; otherwise wait for it to finish`);
    }
    return { run: (command) => sendAdminCommand(endpoint, command), close: async () => {} };
  }
  const stores = createPlatformStores(database);
  return { run: (command) => runAdminCommand(stores, command), close: () => database!.close() };
}

/** Runs `loom admin ...`: prints the result (one JSON object with --json) and throws on failure. */
export async function runAdmin(argv: string[]): Promise<void> {
  let parsed: ReturnType<typeof parseAdminArguments>;
  try {
    parsed = parseAdminArguments(argv);
  } catch (error) {
    // With --json even a mistake in the arguments prints one JSON object (and the message on stderr, status 2).
    if (argv.includes("--json")) process.stdout.write(`${JSON.stringify({ error: (error as Error).message })}\n`);
    throw error;
  }
  if (parsed === "help") {
    process.stdout.write(ADMIN_USAGE);
    return;
  }
  const { command, values } = parsed;
  try {
    const result = parsed.corpusAdd === undefined ? await executeAdminCommand(command, values) : await addFiles(parsed.corpusAdd, values);
    process.stdout.write(values.json ? `${JSON.stringify(result)}\n` : formatAdminResult(command.command, result));
  } catch (error) {
    const input = error instanceof PlatformInputError;
    if (values.json) {
      const field = input ? { field: error.field, flag: flagOf(error.field, command.command) } : {};
      process.stdout.write(`${JSON.stringify({ error: (error as Error).message, ...field })}\n`);
    }
    if (input) throw new UsageError(`${flagOf(error.field, command.command)}: ${error.message}`);
    throw error;
  }
}

/** `corpus add`: files read here, their documents sent in batches to one target; skips and progress on stderr. */
async function addFiles(plan: CorpusAddPlan, values: Values): Promise<AdminResult> {
  const target = await openAdminTarget(values);
  try {
    return await addCorpusFiles(plan, (command) => target.run(command), (line) => process.stderr.write(`loom: ${line}\n`));
  } finally {
    await target.close();
  }
}
