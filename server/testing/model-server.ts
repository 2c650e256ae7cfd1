// A real loom server for end-to-end tests: a random-weight test model on an engine thread, as `loom serve` runs it,
// behind a key, with an engine wrapper that records what the server asked of the engine (each request) and what the
// engine wrote back (each request's raw text and finish), and clients of both official SDKs pointed at it.
import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";
import type { EngineStream, ServingEngine } from "../../engine/engine.js";
import { WorkerEngine } from "../../engine/host/worker-engine.js";
import type { EmbeddingRequest, EmbeddingResult } from "../../engine/embed/request.js";
import { PromptCounter } from "../../engine/prompt-counter.js";
import type { PreparedPrompt } from "../../engine/prompt.js";
import type { EngineEvent, EngineFinishReason, EngineRequest, EngineStats, EngineUsage } from "../../engine/request.js";
import type { DetokenizeRequest, Detokenized, TokenizeRequest } from "../../engine/tokenize.js";
import { ensureTestModel } from "../../scripts/test-models.js";
import { rmSync } from "node:fs";
import { createEndpoints } from "../adapters/endpoints.js";
import { type OpenedResponseStorage, openResponseStorage } from "../platform/store/response-storage.js";
import { StaticKeys } from "../http/auth.js";
import { type Platform, type PlatformOptions, openPlatform } from "../platform/platform.js";
import { migratedDataDir } from "../platform/testing/pglite-template.js";
import { type LoomServer, type ServerOptions, type SurfaceFactory, startServer } from "../server.js";
import { ModelRegistry, defaultSlugs } from "../models.js";

/** What the engine wrote for one request (keyed by its id, which is the response's id), before the server read it. */
export interface RawOutput {
  text: string;
  reason?: EngineFinishReason;
  stopSequence?: string;
  /** The engine's counts at the finish (aborted requests included): what the request computed. */
  usage?: EngineUsage;
}

/** Passes every call to an engine, recording each request as submitted and each request's raw output. */
export class RecordingEngine implements ServingEngine {
  readonly requests: EngineRequest[] = [];
  /** The prompt handed to each submit (undefined where none was), in the order of `requests`. */
  readonly handed: Array<PreparedPrompt | undefined> = [];
  /** The prompts prepareAhead() gave (undefined where it gave none). */
  readonly prepared: Array<PreparedPrompt | undefined> = [];
  readonly outputs = new Map<string, RawOutput>();
  constructor(private readonly inner: ServingEngine) {}

  submit(request: EngineRequest, prepared?: PreparedPrompt): EngineStream {
    this.requests.push(structuredClone(request));
    this.handed.push(prepared);
    const stream = this.inner.submit(request, prepared);
    const output: RawOutput = { text: "" };
    this.outputs.set(stream.id, output);
    return {
      id: stream.id,
      async *[Symbol.asyncIterator](): AsyncGenerator<EngineEvent> {
        for await (const event of stream) {
          if (event.type === "text") output.text += event.text;
          if (event.type === "finish") Object.assign(output, { reason: event.reason, stopSequence: event.stopSequence, usage: event.usage });
          yield event;
        }
      },
    };
  }

  abort(id: string): boolean {
    return this.inner.abort(id);
  }

  get queueDepth(): number {
    return this.inner.queueDepth;
  }

  stats(): EngineStats | Promise<EngineStats> {
    return this.inner.stats();
  }

  countTokens(request: EngineRequest): number | Promise<number> {
    return this.inner.countTokens(request);
  }

  embed(request: EmbeddingRequest): Promise<EmbeddingResult> {
    if (!this.inner.embed) return Promise.reject(new Error("the inner engine does not embed"));
    return this.inner.embed(request);
  }

  tokenize(request: TokenizeRequest): number[] | Promise<number[]> {
    return this.inner.tokenize(request);
  }

  detokenize(request: DetokenizeRequest): Detokenized | Promise<Detokenized> {
    return this.inner.detokenize(request);
  }

  async prepareAhead(request: EngineRequest): Promise<PreparedPrompt | undefined> {
    const prepared = await this.inner.prepareAhead?.(request);
    this.prepared.push(prepared);
    return prepared;
  }

  get unavailable(): Error | undefined {
    return this.inner.unavailable;
  }
}

/** What {@link startModelServer} loads. */
export interface ModelServerOptions {
  /** The test model preset (default tiny-qwen3: the Qwen3 tokenizer and its tool-calling template). */
  preset?: string;
  /** A model file or directory to load instead of a preset (the bundled stories260K, say). */
  modelPath?: string;
  /** The model's vision projector (an mmproj GGUF). */
  mmproj?: string;
  contextSize?: number;
  kvBytes?: number;
  /**
   * The engine's compute threads (default 2). A test model's kernels are too small to gain from a second thread, which
   * spins between them: 1 where a test does not need the work split (tool-call-cuts: a third less CPU time).
   */
  threads?: number;
  key?: string;
  /** Test only: start the engine with testHooks, so that `worker.exitThreadForTesting()` can end its thread. */
  engineTestHooks?: boolean;
  /** Further server settings. */
  server?: Partial<ServerOptions>;
  /** Turns the platform on (its keys, limits and routes replace the static key). */
  platform?: PlatformOptions;
  /**
   * Serves the Responses API and stored chat completions, kept in the platform's database, or without the platform in
   * an embedded database in a temporary data dir (removed on close).
   */
  responses?: boolean;
  /** Further surfaces on the platform (the dashboard's), made once it is open. */
  surfaces?: (platform: Platform) => SurfaceFactory[];
}

/** A running model server. */
export interface ModelServer {
  /** `http://127.0.0.1:<port>` (no path). */
  base: string;
  key: string;
  /** The slugs for chat completions and for messages. */
  chatModel: string;
  messagesModel: string;
  engine: RecordingEngine;
  /** The engine thread's host, under the recording wrapper. */
  worker: WorkerEngine;
  /** The platform, when it is on (its stores create organizations and keys for the test). */
  platform?: Platform;
  /** Clients of the official SDKs, without retries. */
  openai(options?: ConstructorParameters<typeof OpenAI>[0]): OpenAI;
  anthropic(options?: ConstructorParameters<typeof Anthropic>[0]): Anthropic;
  close(): Promise<void>;
}

/** Loads the model on an engine thread and starts a server on a free port. */
export async function startModelServer(options: ModelServerOptions = {}): Promise<ModelServer> {
  const key = options.key ?? "sk-test";
  const path = options.modelPath ?? (await ensureTestModel(options.preset ?? "tiny-qwen3", "gguf", "q8_0"));
  const load = {
    contextSize: options.contextSize ?? 1024, threads: options.threads ?? 2, kvCache: { bytes: options.kvBytes ?? 32 * 1024 * 1024 },
    ...(options.mmproj ? { mmproj: options.mmproj } : {}),
  };
  const worker = await WorkerEngine.start(path, { load, testHooks: options.engineTestHooks });
  const engine = new RecordingEngine(worker);
  const slugs = defaultSlugs(worker.model);
  const promptCounter = options.platform ? PromptCounter.open(path, options.mmproj) : undefined;
  const registry = new ModelRegistry([{ model: worker.model, engine, slugs, created: 1_700_000_000, ...(promptCounter ? { promptCounter } : {}) }]);
  let server: LoomServer;
  let platform: Platform | undefined;
  let responses: OpenedResponseStorage | undefined;
  // A migrated copy of the test template: opening it costs a fraction of creating a database.
  const responsesDir = options.responses && !options.platform ? await migratedDataDir() : undefined;
  const removeResponsesDir = () => responsesDir !== undefined && rmSync(responsesDir, { recursive: true, force: true });
  try {
    platform = options.platform ? await openPlatform(options.platform) : undefined;
    if (options.responses) responses = openResponseStorage(platform ? { database: platform.database } : { dataDir: responsesDir! });
    const access = platform ? { auth: platform.authenticator, accountant: platform.accountant } : { auth: new StaticKeys([key]) };
    const stored = responses ? { responses: responses.storage, chatCompletions: responses.chatCompletions } : {};
    server = await startServer({ registry, ...access, endpoints: createEndpoints(registry, stored), ...stored, ...options.server }, "127.0.0.1", 0, platform ? [platform.surface, ...(options.surfaces?.(platform) ?? [])] : []);
    platform?.offerAdminEndpoint(server.port);
  } catch (error) {
    await responses?.close();
    removeResponsesDir();
    await platform?.close();
    await worker.close();
    throw error;
  }
  const base = `http://127.0.0.1:${server.port}`;
  return {
    base,
    key,
    chatModel: slugs.openai[0]!,
    messagesModel: slugs.anthropic[0]!,
    engine,
    worker,
    platform,
    openai: (extra) => new OpenAI({ apiKey: key, baseURL: `${base}/v1`, maxRetries: 0, ...extra }),
    anthropic: (extra) => new Anthropic({ apiKey: key, baseURL: base, maxRetries: 0, ...extra }),
    async close() {
      server.close();
      await responses?.close();
      removeResponsesDir();
      await platform?.close();
      await worker.close();
    },
  };
}
