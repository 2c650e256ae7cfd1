// `loom serve`: load a model, put a serving engine on it, and serve the OpenAI and Anthropic formats over HTTP.
import { existsSync } from "node:fs";
import { resolve } from "node:path";
import { parseArgs } from "node:util";
import { UsageError, parseBackend, parseInteger, parseSimd } from "../../engine/cli/arguments.js";
import { ProgressBar } from "../../engine/cli/progress-bar.js";
import type { ModelInfo } from "../../engine/host/messages.js";
import { WorkerEngine } from "../../engine/host/worker-engine.js";
import { PromptCounter } from "../../engine/prompt-counter.js";
import { createEndpoints } from "../adapters/endpoints.js";
import { type Authenticator, OpenAccess, StaticKeys, keysFromEnvironment } from "../http/auth.js";
import { type LoomServer, startServer } from "../server.js";
import { type PlatformOptions, openPlatform } from "../platform/platform.js";
import { logFailure } from "../http/log.js";
import { redactUrls } from "../http/redact.js";
import { loadUws } from "../http/uws.js";
import { ModelRegistry, defaultSlugs } from "../models.js";
import type { ImageLimits } from "../images/limits.js";
import { type CheckedServeConfig, type ModelConfigEntry, type ServeConfig, readServeConfig } from "./config.js";
import { modelPath, resolveModelPath } from "./default-model.js";
import { isHubModelName, parseHubModelName } from "./hub-files.js";
import { openMachines } from "../machines/machines.js";
import type { PaymentsSettings } from "../machines/payments-config.js";
import { openRuns } from "../runs/runs.js";
import { guardedCallbackPost, runToolFactories } from "../runs/run-tools.js";
import { defaultDataDir } from "../platform/db/data-dir.js";
import { openResponseStorage } from "../platform/store/response-storage.js";
import { DashboardSessionCleanup } from "../platform/store/dashboard-session-cleanup.js";
import { DashboardSessionStore } from "../platform/store/dashboard-session-store.js";
import { type DashboardFiles, dashboardUnavailableSurface, loadDashboardFiles } from "../dashboard/static-files.js";
import { dashboardSurfaces } from "../dashboard/surfaces.js";
import { runServicesOf } from "../dashboard/data-surfaces.js";
import type { WorkerLoadSource } from "../cluster/worker-load.js";
import { defaultInstallDir } from "../release/install/layout.js";
import { recordThisProcess, recoverInstall } from "../release/install/this-process.js";
import { EXIT_CLOSE_FAILED, EXIT_REQUESTS_CUT, describeDrainEnd, drainMsOf, stopOnSignals } from "./stop-signals.js";
import { checkNoAuthAddress } from "./no-auth-address.js";

export const SERVE_USAGE = `Usage: loom serve [--model <file-or-dir>] [options]

  --model <path>       GGUF file (a split one's first part), Hugging Face model directory, or
                       hf:<org>/<repo>[:<quant>]: the repository's GGUF of that quantization (default Q4_K_M),
                       downloaded once into the cache (HF_TOKEN for gated repositories; see docs/models.md).
                       Default: LOOM_MODEL, else a cached download of HuggingFaceTB/SmolLM2-135M-Instruct into
                       ~/.cache/loom (LOOM_CACHE_DIR; HF_ENDPOINT for a Hub mirror), else, offline, the bundled
                       stories260K. With models in the config, it picks one of them (served with its settings)
  --mmproj <path>      the model's vision projector (an mmproj GGUF, as llama.cpp's flag): Gemma 3 then takes images
                       (docs/api/images.md); with models in the config, "mmproj" beside "path" in an entry
  --host <address>     address to listen on (default 127.0.0.1)
  --port N             port (default 8080; 0 = any free port)
  --config <file>      JSON config, every field checked (see docs/configuration.md): { "apiKeys": [...],
                       "models": [{ "path": "... or hf:<org>/<repo>[:<quant>]", "slugs": { "openai": [...], "anthropic": [...] }, "contextSize": N,
                       "maxSequences": N, "kvCache": { "bytes": N | "memoryFraction": F, "dtype": "f16" },
                       "stepTargetMs": N, "backgroundStepMs": N }], "maxQueue": N, "maxBodyBytes": N,
                       "maxBufferedBodyBytes": N, "bodyTimeoutSeconds": N, "maxImagesPerRequest": N, "maxImageBytes": N,
                       "maxImagePixels": N, "jsonWhitespace": "compact" | "pretty",
                       "runs": { "concurrency": N, "leaseSeconds": N, "maxActivePerOrganization": N, "engines": {...},
                       "network": { "allowPrivate": B, "allowHosts": [...] }, "searchUrl": "..." },
                       "payments": { "payTo": "0x...", "network": "base", "settlement": { "mode": "facilitator",
                       "url": "..." } }, "responses": { "retentionDays": N }, "trustedProxies": ["10.0.0.0/8"] }
                       (docs/machine-payments.md, docs/api/responses.md, docs/reverse-proxy.md)
  --no-auth            accept requests without an API key (local use: refused on an address other than loopback
                       unless --allow-no-auth-on-network says so too); otherwise keys come from the config
                       or LOOM_API_KEYS (comma-separated), or from the platform's database:
  --data-dir <dir>     turn the platform on (organizations, keys, usage, limits) with its embedded database
                       (PGlite) in <dir>; manage it with loom admin (see docs/platform.md)
  --database-url <url> the platform on PostgreSQL instead (or LOOM_DATABASE_URL), e.g. postgres://host/db
  --redis-url <url>    share rate-limit counters with other loom processes through Redis (or LOOM_REDIS_URL);
                       LOOM_REDIS_KEY_PREFIX names their keys (default loom:limits:): processes sharing limits
                       share it, separate deployments on one Redis each take their own
  --limits-fail-open   admit requests when Redis cannot be reached (default: refuse them with 503 / 529)
  --search-url <url>   agent runs' web_search asks this SearXNG-compatible endpoint (default: the local corpus,
                       filled with loom admin corpus add; or the config's runs.searchUrl)
  --install-dir <dir>  where loom update unpacks releases and finds this process to restart (default: the
                       config's updates.installDir, else <data-dir>/install with --data-dir; see
                       docs/releases.md)
  --context N          context size (default: the config's, else min(model, 4096))
  --threads N          compute threads (default: all cores)
  --backend B          wasm, webgpu or auto (default auto: WebGPU on a hardware GPU, else WebAssembly)
  --simd S             WebAssembly kernels: relaxed (relaxed SIMD int8 dot products), plain, or auto (default:
                       relaxed where this Node runs it correctly); the results are identical
  --drain-seconds N    on SIGTERM / SIGINT, stop taking connections and let the requests in flight (streams
                       included) finish for up to N seconds before stopping (default 30; 0 = no wait); a second
                       signal stops at once; exit status 0 when all finished, 3 when some were cut, 1 when closing
                       failed (docs/api/limits.md, "Stopping")
`;

/**
 * The models to serve: the config's, or the one named by --model / LOOM_MODEL (else the default model). A model named
 * both ways must be one of the config's, and is served with its settings; anything else is ambiguous and refused.
 */
async function modelsToServe(config: ServeConfig, flag: string | undefined, mmproj: string | undefined): Promise<ModelConfigEntry[]> {
  const entries = await namedModels(config, flag);
  if (mmproj === undefined) return entries;
  if (entries.length !== 1) throw new UsageError(`--mmproj applies to one model; the config serves ${entries.length}: give each its "mmproj" in the config`);
  if (!existsSync(mmproj)) throw new UsageError(`--mmproj ${mmproj}: no such file`);
  return [{ ...entries[0]!, mmproj }];
}

async function namedModels(config: ServeConfig, flag: string | undefined): Promise<ModelConfigEntry[]> {
  const named = flag ?? process.env.LOOM_MODEL;
  if (!config.models) return [{ path: await resolveModelPath(flag) }];
  // A config entry's path may be an `hf:` name too: each is downloaded (or found in the cache) before any loads.
  const local = async (entry: ModelConfigEntry) => ({ ...entry, path: await modelPath(entry.path) });
  if (named === undefined) {
    const entries = [];
    for (const entry of config.models) entries.push(await local(entry));
    return entries;
  }
  const how = flag !== undefined ? "--model" : "LOOM_MODEL";
  const match = config.models.find((entry) => sameModel(entry.path, named));
  if (match) return [await local(match)];
  throw new UsageError(
    `${how} ${named} is not one of the config's models (${config.models.map((entry) => entry.path).join(", ")}): ` +
      `drop ${how} to serve the config's models, or add ${named} to them`,
  );
}

/** Whether two model names mean the same model: `hf:` names alike but for the case of the quantization, paths once resolved. */
function sameModel(a: string, b: string): boolean {
  if (isHubModelName(a) || isHubModelName(b)) {
    if (!isHubModelName(a) || !isHubModelName(b)) return false;
    const [x, y] = [parseHubModelName(a), parseHubModelName(b)];
    return x.repository === y.repository && x.quant.toUpperCase() === y.quant.toUpperCase();
  }
  return resolve(a) === resolve(b);
}

/** The command's flags (deploy/systemd-checks.ts checks the example systemd unit against them). */
export const SERVE_OPTIONS = {
  model: { type: "string" }, mmproj: { type: "string" }, host: { type: "string" }, port: { type: "string" }, config: { type: "string" },
  "no-auth": { type: "boolean" }, "allow-no-auth-on-network": { type: "boolean" }, "data-dir": { type: "string" }, "database-url": { type: "string" }, "redis-url": { type: "string" },
  "limits-fail-open": { type: "boolean" }, "search-url": { type: "string" }, context: { type: "string" }, threads: { type: "string" }, backend: { type: "string" }, simd: { type: "string" }, "drain-seconds": { type: "string" },
  "install-dir": { type: "string" }, help: { type: "boolean", short: "h" },
} as const;

/** Runs `loom serve`; resolves once the server listens (it then runs until the process ends). */
export async function runServe(argv: string[]): Promise<void> {
  const { values } = parseArgs({
    args: argv,
    strict: true,
    options: SERVE_OPTIONS,
  });
  if (values.help) {
    process.stdout.write(SERVE_USAGE);
    return;
  }
  const config = readServeConfig(values.config);
  const platformOptions = platformOptionsOf(values);
  const searchUrl = values["search-url"] ?? config.runs?.searchUrl;
  if (values["search-url"] !== undefined && !/^https?:\/\//.test(values["search-url"])) throw new UsageError(`--search-url must be an http:// or https:// URL, got ${JSON.stringify(values["search-url"].slice(0, 100))}`);
  if (!platformOptions && (values["search-url"] !== undefined || config.runs !== undefined)) {
    throw new UsageError("agent runs (--search-url, the config's runs) need the platform: add --data-dir or --database-url");
  }
  if (!platformOptions && config.payments !== undefined) {
    throw new UsageError("the machine endpoints (the config's payments) keep their payments and runs in the platform's database: add --data-dir or --database-url");
  }
  const keys = [...(config.apiKeys ?? []), ...keysFromEnvironment(process.env.LOOM_API_KEYS)];
  if (platformOptions && values["no-auth"]) throw new UsageError("--no-auth and the platform (--data-dir, --database-url) exclude each other: the platform's keys are its authentication");
  if (!platformOptions && !values["no-auth"] && keys.length === 0) {
    throw new UsageError("no API keys: put them in the config (apiKeys) or LOOM_API_KEYS, turn the platform on (--data-dir or --database-url), or pass --no-auth for local use");
  }
  const port = parseInteger("--port", values.port, 8080, 0);
  const host = values.host ?? "127.0.0.1";
  const noAuthWarning = checkNoAuthAddress(host, values["no-auth"] ?? false, values["allow-no-auth-on-network"] ?? false);
  const threads = values.threads === undefined ? undefined : parseInteger("--threads", values.threads, 1, 1);
  const backend = parseBackend(values.backend);
  const simd = parseSimd(values.simd);
  const context = values.context === undefined ? undefined : parseInteger("--context", values.context, 4096, 1);
  const drainMs = drainMsOf(values["drain-seconds"]);
  // Before any model is read or downloaded: where no uWebSockets.js build loads, say so at once.
  await loadUws();
  // With the embedded database, its install folder is the default: an update cut off by a crash is finished first.
  const installDir = values["install-dir"] ?? config.updates?.installDir ?? (platformOptions?.dataDir !== undefined ? defaultInstallDir(platformOptions.dataDir) : undefined);
  if (installDir !== undefined) await recoverInstall(installDir);
  const entries = await modelsToServe(config, values.model, values.mmproj);

  const served = [];
  for (const entry of entries) {
    const bar = new ProgressBar(`loading ${entry.path}`);
    // Each model's engine runs on its own thread, so forward passes never hold up the sockets.
    const engine = await WorkerEngine.start(entry.path, {
      load: { threads, backend, simd, contextSize: context ?? entry.contextSize, maxSequences: entry.maxSequences, kvCache: entry.kvCache, ...(entry.mmproj ? { mmproj: entry.mmproj } : {}) },
      engine: {
        ...(entry.stepTargetMs === undefined ? {} : { stepTargetMs: entry.stepTargetMs }),
        ...(entry.backgroundStepMs === undefined ? {} : { backgroundStepMs: entry.backgroundStepMs }),
      },
      onProgress: ({ loadedBytes, totalBytes }) => bar.update(loadedBytes, totalBytes),
    });
    bar.finish();
    const model = engine.model;
    const defaults = defaultSlugs(model);
    served.push({
      model,
      engine,
      // The platform counts prompts for admission on this thread (tokenizer and template only, not the weights).
      ...(platformOptions ? { promptCounter: PromptCounter.open(entry.path, entry.mmproj) } : {}),
      slugs: { openai: entry.slugs?.openai ?? defaults.openai, anthropic: entry.slugs?.anthropic ?? defaults.anthropic },
      created: Math.floor(Date.now() / 1000),
    });
  }
  const registry = new ModelRegistry(served);
  checkRunEngines(config, registry);
  const service = await startService({ config, registry, platformOptions, noAuth: values["no-auth"] ?? false, keys, host, port, searchUrl, drainMs, engineSequences: entries[0]?.maxSequences });
  const describe = (model: ModelInfo) =>
    `${model.path} (${model.device}${model.chatTemplate === "default" ? "; no chat template of its own: chat uses the default, ChatML" : ""}` +
    `${model.vision ? `; takes images: ${model.vision.path}, ${model.vision.tokensPerImage} tokens an image` : ""})`;
  process.stderr.write(
    `loom: serving ${served.map(({ model }) => describe(model)).join(", ")} on http://${host}:${service.server.port} (${service.authentication}; ${service.server.http})\n` +
      `  POST /v1/chat/completions  model ${registry.names("openai").join(", ")}\n` +
      `  POST /v1/messages          model ${registry.names("anthropic").join(", ")}\n` +
      `  POST /v1/responses         model ${registry.names("openai").join(", ")} (stored responses: ${service.responsesLocation})\n` +
      service.surfaces +
      (noAuthWarning === undefined ? "" : `loom: ${noAuthWarning}\n`),
  );
  if (installDir !== undefined) recordThisProcess(installDir, "serve", host, service.server.port);
  // Print the port on stdout for scripts and tests that start the server on port 0.
  process.stdout.write(`${JSON.stringify({ listening: { host, port: service.server.port } })}\n`);
}

/** What startService needs: the served models and how the service around them is configured. */
export interface ServiceSetup {
  config: CheckedServeConfig;
  registry: ModelRegistry;
  platformOptions: PlatformOptions | undefined;
  noAuth: boolean;
  keys: string[];
  host: string;
  port: number;
  searchUrl: string | undefined;
  /** On SIGTERM / SIGINT, how long the requests in flight may take to finish before they are cut (--drain-seconds). */
  drainMs: number;
  /** Sequences the first model's engine runs at once, when known (agent runs size their concurrency by it). */
  engineSequences?: number;
  /** The engine workers' load behind a gateway (the operator's dashboard); absent on `loom serve`. */
  workers?: WorkerLoadSource;
  /** Runs once the service has drained and closed on SIGINT / SIGTERM, before the process exits (a gateway's directory). */
  onClose?: () => Promise<void>;
}

/** A started service: its HTTP server, and lines for the banner. */
export interface StartedService {
  server: LoomServer;
  /** "platform: ...", "no auth" or "N API key(s)". */
  authentication: string;
  /** The banner's lines on the platform, runs and machine surfaces (empty without the platform). */
  surfaces: string;
  /** Where stored responses are kept, for the banner. */
  responsesLocation: string;
}

/**
 * Opens the platform (when configured), agent runs and machine endpoints on the registry's models and listens: what
 * `loom serve` and `loom gateway` share.
 */
export async function startService(setup: ServiceSetup): Promise<StartedService> {
  const { config, registry, platformOptions, keys, host, port, searchUrl } = setup;
  // The platform opens after the models (a bad model fails before the database is touched) and before listening.
  const platform = platformOptions ? await openPlatform(platformOptions) : undefined;
  const network = config.runs?.network ?? {};
  const runs = platform
    ? openRuns(platform, registry, {
        engines: config.runs?.engines,
        concurrency: config.runs?.concurrency,
        leaseSeconds: config.runs?.leaseSeconds,
        maxActivePerOrganization: config.runs?.maxActivePerOrganization,
        engineSequences: setup.engineSequences,
        tools: runToolFactories(platform.database, { network, ...(searchUrl !== undefined ? { searchUrl } : {}) }),
        callbacks: { post: guardedCallbackPost(network) },
      })
    : undefined;
  const machines = platform && runs ? openMachines(platform, runs, config.paymentSettings) : undefined;
  const auth: Authenticator = platform ? platform.authenticator : setup.noAuth ? new OpenAccess() : new StaticKeys(keys);
  // Stored responses live in the platform's database; without the platform, in the embedded one of the data dir.
  const responses = openResponseStorage({
    ...(platform ? { database: platform.database } : { dataDir: defaultDataDir() }),
    ...(config.responses?.retentionDays !== undefined ? { retentionDays: config.responses.retentionDays } : {}),
    // A conversation too big to send as one request body is too big to keep continuing.
    ...(config.maxBodyBytes !== undefined ? { maxConversationBytes: config.maxBodyBytes } : {}),
    onError: (error) => logFailure("removing expired stored responses failed", error),
  });
  // The web dashboard: where the platform is (someone to sign in), with the cleanup of its ended sessions.
  const dashboardSessions = platform ? new DashboardSessionStore(platform.database) : undefined;
  const dashboardFiles = platform ? loadDashboardFiles() : undefined;
  const sessionCleanup = dashboardSessions
    ? new DashboardSessionCleanup(dashboardSessions, { onError: (error) => logFailure("removing ended dashboard sessions failed", error) })
    : undefined;
  sessionCleanup?.start();
  const dashboard = platform && runs && dashboardSessions && dashboardFiles
    ? dashboardSurfaces({ platform, runs: runServicesOf(runs), sessions: dashboardSessions, files: dashboardFiles, ...(setup.workers ? { workers: setup.workers } : {}) }).surfaces
    : [dashboardUnavailableSurface("the web dashboard needs the platform: start loom serve with --data-dir or --database-url (see docs/platform.md)")];
  const { maxQueue, maxBodyBytes, maxBufferedBodyBytes, bodyTimeoutSeconds, jsonWhitespace, trustedProxies } = config;
  const endpoints = createEndpoints(registry, { responses: responses.storage, chatCompletions: responses.chatCompletions });
  // Image URLs are fetched under read_page's address policy (runs.network).
  const images = { limits: imageLimitsOf(config), network };
  const options = { registry, auth, accountant: platform?.accountant, endpoints, responses: responses.storage, chatCompletions: responses.chatCompletions, maxQueue, maxBodyBytes, maxBufferedBodyBytes, bodyTimeoutSeconds, images, jsonWhitespace, trustedProxies };
  let server: LoomServer;
  try {
    server = await startServer(options, host, port, platform && runs && machines ? [platform.surface, runs.surface, machines.surface, ...dashboard] : dashboard);
  } catch (error) {
    await sessionCleanup?.stop();
    await responses.close();
    await machines?.close();
    await runs?.close();
    await platform?.close();
    throw error;
  }
  if (platform && runs && machines) platform.offerAdminEndpoint(server.port);
  // In order: stop taking work, then what runs on the database, then the database.
  closeOnSignals(server, setup.drainMs, [() => machines?.close(), () => runs?.close(), () => responses.close(), () => sessionCleanup?.stop(), () => platform?.close(), () => setup.onClose?.()]);
  const authentication = platform ? `platform: ${platform.description}` : setup.noAuth ? "no auth" : `${keys.length} API key(s)`;
  const surfaces =
    (platform ? "  GET  /api/v1/usage, /api/v1/management/api-keys (platform)\n" : "") +
    (runs ? `  POST /v1/runs, GET /v1/runs/{id}  agent runs (${runs.worker.concurrency} at once; web_search on ${searchUrl ?? "the local corpus"})\n` : "") +
    (machines ? `  POST /v1/machines/searches, /v1/machines/runs  ${describePayments(config.paymentSettings)}\n` : "") +
    (dashboardFiles ? `  GET  /dashboard/  the web dashboard: ${describeDashboard(dashboardFiles, `http://${host}:${server.port}/dashboard/`)}\n` : "");
  const responsesLocation = `${platform ? "the platform's database" : `PGlite in ${defaultDataDir()}, opened at first use`}, kept ${config.responses?.retentionDays ?? 30} days`;
  return { server, authentication, surfaces, responsesLocation };
}

/** The image limits the config sets (the others keep their defaults). */
function imageLimitsOf(config: ServeConfig): Partial<ImageLimits> {
  return {
    ...(config.maxImagesPerRequest !== undefined ? { maxPerRequest: config.maxImagesPerRequest } : {}),
    ...(config.maxImageBytes !== undefined ? { maxBytes: config.maxImageBytes } : {}),
    ...(config.maxImagePixels !== undefined ? { maxPixels: config.maxImagePixels } : {}),
  };
}

/** The platform's options from the flags and environment, or undefined when it is off. */
export function platformOptionsOf(values: { "data-dir"?: string; "database-url"?: string; "redis-url"?: string; "limits-fail-open"?: boolean }): PlatformOptions | undefined {
  const databaseUrl = values["database-url"] ?? (process.env.LOOM_DATABASE_URL || undefined);
  const dataDir = values["data-dir"];
  if (dataDir !== undefined && databaseUrl !== undefined) {
    throw new UsageError(`--data-dir and ${values["database-url"] !== undefined ? "--database-url" : "LOOM_DATABASE_URL"} exclude each other: the platform keeps its data in one database`);
  }
  const redisUrl = values["redis-url"] ?? (process.env.LOOM_REDIS_URL || undefined);
  if (dataDir === undefined && databaseUrl === undefined) {
    if (redisUrl !== undefined || values["limits-fail-open"]) throw new UsageError("--redis-url and --limits-fail-open apply to the platform: add --data-dir or --database-url");
    return undefined;
  }
  if (databaseUrl !== undefined && !/^postgres(ql)?:\/\//.test(databaseUrl)) throw new UsageError(`--database-url must be a postgres:// or postgresql:// URL, got ${JSON.stringify(databaseUrl.slice(0, 100))}`);
  if (redisUrl !== undefined && !/^rediss?:\/\//.test(redisUrl)) throw new UsageError(`--redis-url must be a redis:// or rediss:// URL, got ${JSON.stringify(redisUrl.slice(0, 100))}`);
  const redisKeyPrefix = process.env.LOOM_REDIS_KEY_PREFIX || undefined;
  return {
    ...(dataDir !== undefined ? { dataDir: resolve(dataDir) } : { databaseUrl }),
    ...(redisUrl !== undefined ? { redisUrl, ...(redisKeyPrefix !== undefined ? { redisKeyPrefix } : {}) } : {}),
    failOpen: values["limits-fail-open"] ?? false,
  };
}

/**
 * The config's engines must name served models (a typo would otherwise only show when a run is created).
 * @throws UsageError naming the engine and the slugs served.
 */
function checkRunEngines(config: ServeConfig, registry: ModelRegistry): void {
  for (const [name, engine] of Object.entries(config.runs?.engines ?? {})) {
    const slug = engine?.model;
    if (typeof slug === "string" && !registry.find(slug, "openai")) {
      throw new UsageError(`--config: runs.engines.${name}.model '${slug}' is not a served model; the chat-completions models are ${registry.names("openai").join(", ")}`);
    }
  }
}

/** The banner's words on the web dashboard: its URL, or why it is not there. */
function describeDashboard(files: DashboardFiles, url: string): string {
  return files.available ? `${url} (sign in with a management key or an operator token)` : `${url} answers 503: ${files.reason} (run npm run build)`;
}

/** The banner's line on the machine endpoints: their prices and how payments settle, or that they are off. */
function describePayments(settings: PaymentsSettings | undefined): string {
  if (!settings) return "off (503): no payments in the config";
  const { prices, network, asset, settlement } = settings;
  // The banner is the log: an RPC endpoint's or a facilitator's key in its URL stays out of it.
  const how = settlement.mode === "facilitator" ? `facilitator ${redactUrls(settlement.url)}` : `direct through ${redactUrls(settlement.rpcUrl)}`;
  return `pay per run over x402: ${prices.search.usd} / ${prices.run.usd} USD in ${asset.name} (${asset.address}) on ${network.caip2} to ${settings.payTo}, settled ${how}`;
}

/**
 * On SIGINT or SIGTERM: stop listening and drain the requests in flight (up to `drainMs`; a second signal stops the
 * wait), then close each part in order (give running runs back, stop the stored responses' cleanup, commit pending
 * usage, close the database), then exit: 0 when every request finished and every part closed (stop-signals.ts).
 */
function closeOnSignals(server: LoomServer, drainMs: number, closers: ReadonlyArray<() => Promise<void> | undefined>): void {
  const log = (message: string) => process.stderr.write(`loom: ${message}\n`);
  stopOnSignals(async (hurry, signal) => {
    const running = server.inFlight;
    if (running > 0 && drainMs > 0) log(`${signal}: stopping; waiting up to ${drainMs / 1000} s for ${running} request(s) in flight (${signal} again stops at once)`);
    const { ended, cut } = await server.drain({ timeoutMs: drainMs, signal: hurry });
    if (cut > 0) log(`cut ${cut} request(s) still running (${describeDrainEnd(ended, signal, drainMs)}): their streams end without a last event; exiting ${EXIT_REQUESTS_CUT}`);
    for (const closer of closers) await closer();
    return { cut };
  }, (error) => log(`closing the platform failed: ${error.message}; exiting ${EXIT_CLOSE_FAILED}`));
}
