// `loom serve`: load a model, put a serving engine on it, and serve the OpenAI and Anthropic formats over HTTP.
import { resolve } from "node:path";
import { parseArgs } from "node:util";
import { UsageError, parseBackend, parseInteger } from "../../engine/cli/arguments.js";
import { ProgressBar } from "../../engine/cli/progress-bar.js";
import type { ModelInfo } from "../../engine/host/messages.js";
import { WorkerEngine } from "../../engine/host/worker-engine.js";
import { createEndpoints } from "../adapters/endpoints.js";
import { type Authenticator, OpenAccess, StaticKeys, keysFromEnvironment } from "../http/auth.js";
import { startServer } from "../server.js";
import { loadUws } from "../http/uws.js";
import { ModelRegistry, defaultSlugs } from "../models.js";
import { type ModelConfigEntry, type ServeConfig, readServeConfig } from "./config.js";
import { resolveModelPath } from "./default-model.js";

export const SERVE_USAGE = `Usage: loom serve [--model <file-or-dir>] [options]

  --model <path>       GGUF file or Hugging Face model directory (default: LOOM_MODEL, else a cached download of
                       HuggingFaceTB/SmolLM2-135M-Instruct into ~/.cache/loom (LOOM_CACHE_DIR; HF_ENDPOINT for a
                       Hub mirror), else, offline, the bundled stories260K); with models in the config, it picks
                       one of them (served with its settings)
  --host <address>     address to listen on (default 127.0.0.1)
  --port N             port (default 8080; 0 = any free port)
  --config <file>      JSON config, every field checked (see README "Configuration"): { "apiKeys": [...],
                       "models": [{ "path": "...", "slugs": { "openai": [...], "anthropic": [...] }, "contextSize": N,
                       "maxSequences": N, "kvCache": { "bytes": N | "memoryFraction": F, "dtype": "f16" },
                       "stepTargetMs": N }], "maxQueue": N, "maxBodyBytes": N, "maxBufferedBodyBytes": N,
                       "bodyTimeoutSeconds": N, "jsonWhitespace": "compact" | "pretty" }
  --no-auth            accept requests without an API key (local use); otherwise keys come from the config
                       or LOOM_API_KEYS (comma-separated)
  --context N          context size (default: the config's, else min(model, 4096))
  --threads N          compute threads (default: all cores)
  --backend B          wasm, webgpu or auto (default auto: WebGPU on a hardware GPU, else WebAssembly)
`;

/**
 * The models to serve: the config's, or the one named by --model / LOOM_MODEL (else the default model). A model named
 * both ways must be one of the config's, and is served with its settings; anything else is ambiguous and refused.
 */
async function modelsToServe(config: ServeConfig, flag: string | undefined): Promise<ModelConfigEntry[]> {
  const named = flag ?? process.env.LOOM_MODEL;
  if (!config.models) return [{ path: await resolveModelPath(flag) }];
  if (named === undefined) return config.models;
  const how = flag !== undefined ? "--model" : "LOOM_MODEL";
  const match = config.models.find((entry) => resolve(entry.path) === resolve(named));
  if (match) return [match];
  throw new UsageError(
    `${how} ${named} is not one of the config's models (${config.models.map((entry) => entry.path).join(", ")}): ` +
      `drop ${how} to serve the config's models, or add ${named} to them`,
  );
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
  const config = readServeConfig(values.config);
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
  // Before any model is read or downloaded: where no uWebSockets.js build loads, say so at once.
  await loadUws();
  const entries = await modelsToServe(config, values.model);

  const served = [];
  for (const entry of entries) {
    const bar = new ProgressBar(`loading ${entry.path}`);
    // Each model's engine runs on its own thread, so forward passes never hold up the sockets.
    const engine = await WorkerEngine.start(entry.path, {
      load: { threads, backend, contextSize: context ?? entry.contextSize, maxSequences: entry.maxSequences, kvCache: entry.kvCache },
      engine: entry.stepTargetMs === undefined ? {} : { stepTargetMs: entry.stepTargetMs },
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
  const { maxQueue, maxBodyBytes, maxBufferedBodyBytes, bodyTimeoutSeconds, jsonWhitespace } = config;
  const server = await startServer({ registry, auth, endpoints: createEndpoints(registry), maxQueue, maxBodyBytes, maxBufferedBodyBytes, bodyTimeoutSeconds, jsonWhitespace }, host, port);
  const describe = (model: ModelInfo) => `${model.path} (${model.device}${model.chatTemplate === "default" ? "; no chat template of its own: chat uses the default, ChatML" : ""})`;
  process.stderr.write(
    `loom: serving ${served.map(({ model }) => describe(model)).join(", ")} on http://${host}:${server.port} (${values["no-auth"] ? "no auth" : `${keys.length} API key(s)`}; ${server.http})\n` +
      `  POST /v1/chat/completions  model ${registry.slugs("openai").join(", ")}\n` +
      `  POST /v1/messages          model ${registry.slugs("anthropic").join(", ")}\n`,
  );
  // Print the port on stdout for scripts and tests that start the server on port 0.
  process.stdout.write(`${JSON.stringify({ listening: { host, port: server.port } })}\n`);
}
