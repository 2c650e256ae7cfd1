// `loom serve`: load a model, put a serving engine on it, and serve the OpenAI and Anthropic formats over HTTP.
import { readFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { UsageError, parseBackend, parseInteger } from "../../engine/cli/arguments.js";
import { ProgressBar } from "../../engine/cli/progress-bar.js";
import { WorkerEngine } from "../../engine/host/worker-engine.js";
import { createEndpoints } from "../adapters/endpoints.js";
import { type Authenticator, OpenAccess, StaticKeys, keysFromEnvironment } from "../http/auth.js";
import { startServer } from "../http/app.js";
import { ModelRegistry, defaultSlugs } from "../models.js";
import { resolveModelPath } from "./default-model.js";

export const SERVE_USAGE = `Usage: loom serve [--model <file-or-dir>] [options]

  --model <path>       GGUF file or Hugging Face model directory (default: LOOM_MODEL, else a cached download of
                       HuggingFaceTB/SmolLM2-135M-Instruct into ~/.cache/loom)
  --host <address>     address to listen on (default 127.0.0.1)
  --port N             port (default 8080; 0 = any free port)
  --config <file>      JSON config (see README "HTTP API"): { "apiKeys": [...], "models": [{ "path": "...",
                       "slugs": { "openai": [...], "anthropic": [...] }, "contextSize": N, "maxSequences": N,
                       "kvCache": { "bytes": N | "memoryFraction": F, "dtype": "f16" } }], "maxQueue": N }
  --no-auth            accept requests without an API key (local use); otherwise keys come from the config
                       or LOOM_API_KEYS (comma-separated)
  --context N          context size (default: the config's, else min(model, 4096))
  --threads N          compute threads (default: all cores)
  --backend B          wasm, webgpu or auto (default auto: WebGPU on a hardware GPU, else WebAssembly)
`;

/** One served model in the config file. */
interface ModelConfigEntry {
  /** GGUF file or Hugging Face directory. */
  path: string;
  /** Public slugs per format (default: the spec's forms with the model's name). */
  slugs?: { openai?: string[]; anthropic?: string[] };
  contextSize?: number;
  maxSequences?: number;
  kvCache?: { bytes?: number; memoryFraction?: number; dtype?: "f32" | "f16" };
}

/** The config file's shape (every field optional). */
interface ServeConfig {
  apiKeys?: string[];
  /** Models to serve; `--model` (or the default model) is served when absent. */
  models?: ModelConfigEntry[];
  maxQueue?: number;
  maxBodyBytes?: number;
}

function readConfig(path: string | undefined): ServeConfig {
  if (!path) return {};
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(path, "utf8"));
  } catch (error) {
    throw new UsageError(`--config ${path}: ${(error as Error).message}`);
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) throw new UsageError(`--config ${path}: must be a JSON object`);
  const config = parsed as ServeConfig;
  if (config.apiKeys !== undefined && (!Array.isArray(config.apiKeys) || !config.apiKeys.every((key) => typeof key === "string" && key.length > 0))) {
    throw new UsageError(`--config ${path}: apiKeys must be an array of non-empty strings`);
  }
  if (config.models !== undefined) {
    if (!Array.isArray(config.models) || config.models.length === 0) throw new UsageError(`--config ${path}: models must be a non-empty array`);
    config.models.forEach((entry, i) => {
      if (typeof entry?.path !== "string" || entry.path === "") throw new UsageError(`--config ${path}: models[${i}].path must be a model file or directory`);
    });
  }
  return config;
}

/** Runs `loom serve`; resolves once the server listens (it then runs until the process ends). */
export async function runServe(argv: string[]): Promise<void> {
  const { values } = parseArgs({
    args: argv,
    strict: true,
    options: {
      model: { type: "string" }, host: { type: "string" }, port: { type: "string" }, config: { type: "string" },
      "no-auth": { type: "boolean" }, context: { type: "string" }, threads: { type: "string" }, backend: { type: "string" }, help: { type: "boolean", short: "h" },
    },
  });
  if (values.help) {
    process.stdout.write(SERVE_USAGE);
    return;
  }
  const config = readConfig(values.config);
  const keys = [...(config.apiKeys ?? []), ...keysFromEnvironment(process.env.LOOM_API_KEYS)];
  if (!values["no-auth"] && keys.length === 0) {
    throw new UsageError("no API keys: put them in the config (apiKeys) or LOOM_API_KEYS, or pass --no-auth for local use");
  }
  const auth: Authenticator = values["no-auth"] ? new OpenAccess() : new StaticKeys(keys);
  const port = parseInteger("--port", values.port, 8080, 0);
  const host = values.host ?? "127.0.0.1";
  const threads = values.threads === undefined ? undefined : parseInteger("--threads", values.threads, 1, 1);
  const backend = parseBackend(values.backend);
  const context = values.context === undefined ? undefined : parseInteger("--context", values.context, 4096, 1);
  const entries: ModelConfigEntry[] = values.model || !config.models ? [{ path: await resolveModelPath(values.model) }] : config.models;

  const served = [];
  for (const entry of entries) {
    const bar = new ProgressBar(`loading ${entry.path}`);
    // Each model's engine runs on its own thread, so forward passes never hold up the sockets.
    const engine = await WorkerEngine.start(entry.path, {
      load: { threads, backend, contextSize: context ?? entry.contextSize, maxSequences: entry.maxSequences, kvCache: entry.kvCache },
      onProgress: ({ loadedBytes, totalBytes }) => bar.update(loadedBytes, totalBytes),
    });
    bar.finish();
    const model = engine.model;
    const defaults = defaultSlugs(model);
    served.push({
      model,
      engine,
      slugs: { openai: entry.slugs?.openai ?? defaults.openai, anthropic: entry.slugs?.anthropic ?? defaults.anthropic },
      created: Math.floor(Date.now() / 1000),
    });
  }
  const registry = new ModelRegistry(served);
  const server = await startServer({ registry, auth, endpoints: createEndpoints(registry), maxQueue: config.maxQueue, maxBodyBytes: config.maxBodyBytes }, host, port);
  process.stderr.write(
    `loom: serving ${served.map(({ model }) => `${model.path} (${model.device})`).join(", ")} on http://${host}:${server.port} (${values["no-auth"] ? "no auth" : `${keys.length} API key(s)`})\n` +
      `  POST /v1/chat/completions  model ${registry.slugs("openai").join(", ")}\n` +
      `  POST /v1/messages          model ${registry.slugs("anthropic").join(", ")}\n`,
  );
  // Print the port on stdout for scripts and tests that start the server on port 0.
  process.stdout.write(`${JSON.stringify({ listening: { host, port: server.port } })}\n`);
}
