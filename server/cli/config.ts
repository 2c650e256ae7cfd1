// The `loom serve` config file (--config loom.json): read, then checked field by field, so that a mistyped or
// out-of-range value stops the server at start with a message naming the field, instead of changing behaviour
// silently (`maxQueue: -1` refusing everything, `maxBodyBytes: "8MB"` turning the limit off).
import { type MaintenanceWindow, UPDATE_POLICIES, type UpdatePolicy, windowProblem } from "../release/update-policy.js";
import { readFileSync } from "node:fs";
import { dirname, isAbsolute, resolve } from "node:path";
import { UsageError } from "../../engine/cli/arguments.js";
import { trustedProxiesProblem } from "../http/client-address.js";
import { SERVER_DEFAULTS } from "../http/context.js";
import { PaymentsConfigError, type PaymentsSettings, resolvePaymentsConfig } from "../machines/payments-config.js";
import { ENGINE_NAMES, type EngineOverrides } from "../runs/engines.js";

/** One served model in the config file. */
export interface ModelConfigEntry {
  /** GGUF file or Hugging Face directory. */
  path: string;
  /** The model's vision projector (an mmproj GGUF): Gemma 3 then takes images. */
  mmproj?: string;
  /** Public slugs per format (default: the spec's forms with the model's name). */
  slugs?: { openai?: string[]; anthropic?: string[] };
  contextSize?: number;
  maxSequences?: number;
  kvCache?: { bytes?: number; memoryFraction?: number; dtype?: "f32" | "f16"; keepWindowKv?: boolean };
  /** While requests decode, the longest a step may take (prefill is chunked to fit; default 200 ms). */
  stepTargetMs?: number;
  /** While interactive requests come in, how long a step of agent-run work may take (default 20 ms; 0: no limit). */
  backgroundStepMs?: number;
}

/** The config file's shape (every field optional). */
export interface ServeConfig {
  apiKeys?: string[];
  /** Models to serve; `--model` (or the default model) is served when absent. */
  models?: ModelConfigEntry[];
  maxQueue?: number;
  maxBodyBytes?: number;
  maxBufferedBodyBytes?: number;
  bodyTimeoutSeconds?: number;
  /** Images one request may carry, a stored conversation's included (default 8; 0 turns image input off). */
  maxImagesPerRequest?: number;
  /** Bytes of one image as sent (after base64 decoding) or fetched, before it is decoded (default 20 MiB). */
  maxImageBytes?: number;
  /** Pixels (width x height) of one image, read from its header before it is decoded (default 50,000,000). */
  maxImagePixels?: number;
  /** Whitespace structured output may use between JSON tokens (default "compact"). */
  jsonWhitespace?: "compact" | "pretty";
  /** Agent runs (with the platform on; docs/agent-runs.md). */
  runs?: RunsConfig;
  /** Machine endpoints' payments (docs/machine-payments.md); checked by server/machines/payments-config.ts. */
  payments?: unknown;
  /** The Responses API's stored responses (docs/api/responses.md). */
  responses?: { retentionDays?: number };
  /** Release feeds and their signers (loom update check; server/release/README.md). */
  updates?: UpdatesConfig;
  /** Reverse proxies whose X-Forwarded-For / -Proto are believed: addresses and CIDR ranges (docs/configuration.md). */
  trustedProxies?: string[];
}

/** The config file's `updates`. */
export interface UpdatesConfig {
  /** The feed `loom update check` reads when --feed is not given: a folder or an https:// URL. */
  feed?: string;
  /** Public keys whose signatures on a release manifest are trusted: PEM text, or paths relative to the config file. */
  trustedKeys?: string[];
  /** When releases are applied (default "manual"; server/release/update-policy.ts). */
  policy?: UpdatePolicy;
  /** The maintenance window of the "window" policy (UTC). */
  window?: MaintenanceWindow;
  /** Where releases are unpacked (default `<data-dir>/install`); a relative path is the config file's. */
  installDir?: string;
  /** How long a stopping process may finish its streams and runs (default 30). */
  drainSeconds?: number;
  /** How long a new version has to answer /health before the update rolls back by itself (default 120). */
  healthTimeoutSeconds?: number;
}

/** A checked config file, with the machine endpoints' payment settings resolved (undefined: the endpoints are off). */
export interface CheckedServeConfig extends ServeConfig {
  paymentSettings?: PaymentsSettings;
}

/** The config file's `runs`. */
export interface RunsConfig {
  /** Runs processed at once by this process. */
  concurrency?: number;
  /** Seconds a worker's take of a run lasts without renewal. */
  leaseSeconds?: number;
  /** Most runs an organization may have queued or processing at once. */
  maxActivePerOrganization?: number;
  /** Per engine name, the settings to change (see server/runs/engines.ts). */
  engines?: EngineOverrides;
  /** Where read_page, callbacks and image URLs may connect besides public addresses (SSRF rules). */
  network?: { allowPrivate?: boolean; allowHosts?: string[] };
  /** A SearXNG-compatible search endpoint for web_search (default: the local corpus). */
  searchUrl?: string;
}

/** A value's check: returns nothing, or the rule it breaks ("a positive integer"). */
type Rule = (value: unknown) => string | undefined;

const integer = (min: number, max = Number.MAX_SAFE_INTEGER): Rule => (value) =>
  typeof value === "number" && Number.isSafeInteger(value) && value >= min && value <= max ? undefined : max === Number.MAX_SAFE_INTEGER ? `an integer >= ${min}` : `an integer from ${min} to ${max}`;
const number = (min: number, max: number, minExclusive = false): Rule => (value) =>
  typeof value === "number" && Number.isFinite(value) && (minExclusive ? value > min : value >= min) && value <= max ? undefined : `a number in ${minExclusive ? "(" : "["}${min}, ${max}]`;
const nonEmptyStrings: Rule = (value) =>
  Array.isArray(value) && value.every((item) => typeof item === "string" && item.length > 0) ? undefined : "an array of non-empty strings";
const oneOf = (...options: string[]): Rule => (value) => (typeof value === "string" && options.includes(value) ? undefined : `one of ${options.map((o) => JSON.stringify(o)).join(", ")}`);
const nonEmptyString: Rule = (value) => (typeof value === "string" && value.length > 0 ? undefined : "a non-empty string");
const boolean: Rule = (value) => (typeof value === "boolean" ? undefined : "true or false");
const slugOrNull: Rule = (value) => (value === null || (typeof value === "string" && value.length > 0) ? undefined : "a served model's chat-completions slug, or null (no model for this engine)");
const httpUrl: Rule = (value) => {
  try {
    return typeof value === "string" && /^https?:$/.test(new URL(value).protocol) ? undefined : "an http:// or https:// URL";
  } catch {
    return "an http:// or https:// URL";
  }
};

/** A nested object's fields and their rules (a nested Shape for objects). */
interface Shape {
  [field: string]: Rule | Shape;
}

const KV_CACHE: Shape = { bytes: integer(1), memoryFraction: number(0, 1, true), dtype: oneOf("f32", "f16"), keepWindowKv: boolean };
const MODEL: Shape = {
  path: nonEmptyString,
  mmproj: nonEmptyString,
  slugs: { openai: nonEmptyStrings, anthropic: nonEmptyStrings },
  contextSize: integer(16),
  maxSequences: integer(1, 1024),
  kvCache: KV_CACHE,
  stepTargetMs: integer(0, 60_000),
  backgroundStepMs: integer(0, 60_000),
};
const AGENT_ENGINE: Shape = {
  model: slugOrNull,
  thinking: boolean,
  maxSteps: integer(1, 100),
  maxToolCalls: integer(0, 1000),
  maxStepTokens: integer(1, 65_536),
  forcedToolTurns: integer(0, 100),
  temperature: number(0, 2),
};
const RUNS: Shape = {
  concurrency: integer(1, 256),
  leaseSeconds: integer(2, 3600),
  maxActivePerOrganization: integer(1, 1_000_000),
  engines: Object.fromEntries(ENGINE_NAMES.map((name) => [name, AGENT_ENGINE])),
  network: { allowPrivate: boolean, allowHosts: nonEmptyStrings },
  searchUrl: httpUrl,
};
const TOP: Shape = {
  apiKeys: nonEmptyStrings,
  maxQueue: integer(1),
  // A body becomes one string to parse: V8 strings stop at about 512 MiB.
  maxBodyBytes: integer(1024, 256 * 1024 ** 2),
  maxBufferedBodyBytes: integer(1024, 64 * 1024 ** 3),
  bodyTimeoutSeconds: number(0, 3600, true),
  maxImagesPerRequest: integer(0, 1000),
  maxImageBytes: integer(1024, 256 * 1024 ** 2),
  // sharp's own ceiling (0x3FFF squared).
  maxImagePixels: integer(1, 0x3fff * 0x3fff),
  jsonWhitespace: oneOf("compact", "pretty"),
  trustedProxies: trustedProxiesProblem,
  runs: RUNS,
  responses: { retentionDays: number(0, 3650, true) },
  // The keys' contents are checked where they are used (loom update check), naming updates.trustedKeys[i].
  updates: {
    feed: nonEmptyString, trustedKeys: nonEmptyStrings, policy: oneOf(...UPDATE_POLICIES), window: windowProblem, installDir: nonEmptyString,
    drainSeconds: integer(0, 3600), healthTimeoutSeconds: integer(1, 3600),
  },
  // Checked as a whole by resolvePaymentsConfig (its rules depend on the settlement mode).
  payments: (value) => (typeof value === "object" && value !== null && !Array.isArray(value) ? undefined : "an object: { payTo, network, settlement, ... }"),
};

/** Reads and checks the config file; `{}` without one. @throws UsageError naming the file, the field and the rule. */
export function readServeConfig(path: string | undefined, env: Record<string, string | undefined> = process.env): CheckedServeConfig {
  if (!path) return {};
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(path, "utf8"));
  } catch (error) {
    throw new UsageError(`--config ${path}: ${(error as Error).message}`);
  }
  const fail = (message: string): never => {
    throw new UsageError(`--config ${path}: ${message}`);
  };
  if (!isPlainObject(parsed)) return fail("must be a JSON object");
  checkShape(parsed, { ...TOP, models: MODEL }, "", fail);
  let config = parsed as ServeConfig;
  // Paths in the file are the file's: the same install folder whichever folder serve or update is started from.
  const installDir = config.updates?.installDir;
  if (installDir !== undefined && !isAbsolute(installDir)) config = { ...config, updates: { ...config.updates, installDir: resolve(dirname(path), installDir) } };
  // Compared as the server will run them, defaults included.
  const maxBody = config.maxBodyBytes ?? SERVER_DEFAULTS.maxBodyBytes;
  const buffered = config.maxBufferedBodyBytes ?? SERVER_DEFAULTS.maxBufferedBodyBytes;
  if (buffered < maxBody) {
    const named = (field: string, value: number, set: boolean) => `${field} (${value}${set ? "" : ", the default"})`;
    fail(`${named("maxBufferedBodyBytes", buffered, config.maxBufferedBodyBytes !== undefined)} must be at least ${named("maxBodyBytes", maxBody, config.maxBodyBytes !== undefined)}, or a body of the largest size could never be received`);
  }
  if (config.payments === undefined) return config;
  try {
    return { ...config, paymentSettings: resolvePaymentsConfig(config.payments, env) };
  } catch (error) {
    if (error instanceof PaymentsConfigError) return fail(error.message);
    throw error;
  }
}

/** Checks every field of `object` against `shape` (models: an array of MODEL entries); unknown fields fail too. */
function checkShape(object: Record<string, unknown>, shape: Shape, prefix: string, fail: (message: string) => never): void {
  for (const [field, value] of Object.entries(object)) {
    const path = `${prefix}${field}`;
    if (!Object.hasOwn(shape, field)) fail(`${path} is not a config field (known: ${Object.keys(shape).join(", ")})`);
    const rule = shape[field];
    if (field === "models" && prefix === "") {
      if (!Array.isArray(value) || value.length === 0) fail("models must be a non-empty array of { path, ... } entries");
      (value as unknown[]).forEach((entry, index) => {
        if (!isPlainObject(entry)) fail(`models[${index}] must be an object with a path`);
        if (entry.path === undefined) fail(`models[${index}].path is required: a model file or directory`);
        checkShape(entry, rule as Shape, `models[${index}].`, fail);
      });
      continue;
    }
    if (typeof rule === "function") {
      const broken = rule(value);
      if (broken) fail(`${path} must be ${broken}, got ${JSON.stringify(value)?.slice(0, 80)}`);
    } else {
      if (!isPlainObject(value)) fail(`${path} must be an object, got ${JSON.stringify(value)?.slice(0, 80)}`);
      checkShape(value, rule, `${path}.`, fail);
    }
  }
  if (prefix.endsWith("kvCache.") && object.bytes !== undefined && object.memoryFraction !== undefined) {
    fail(`${prefix}bytes and ${prefix}memoryFraction: give one, not both`);
  }
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
