// One real loom server for the client-library tests (server/clients/*.test.ts): the random-weight tiny-qwen3 model
// (Qwen3 tokenizer and tool-calling template) on an engine thread, as `loom serve` runs it, behind a key. Every
// request the server hands the engine is recorded, and so is every HTTP body a client sends through `fetch`, so a
// test can check what a library put on the wire and what the server made of it (a tool result in the next turn).
import type { EngineStream, ServingEngine } from "../../engine/engine.js";
import { WorkerEngine } from "../../engine/host/worker-engine.js";
import type { EngineRequest, EngineStats } from "../../engine/request.js";
import { ensureTestModel } from "../../scripts/test-models.js";
import { createEndpoints } from "../adapters/endpoints.js";
import { StaticKeys } from "../http/auth.js";
import { type LoomServer, startServer } from "../http/app.js";
import { ModelRegistry, defaultSlugs } from "../models.js";

/** The key every client of the test server uses. */
export const TEST_KEY = "sk-clients";

/** An HTTP request a client sent: its path and parsed JSON body. */
export interface SentRequest {
  path: string;
  body: Record<string, unknown>;
}

/** Passes every call to an engine and records the requests (what the adapters made of the wire request). */
class RecordingEngine implements ServingEngine {
  readonly requests: EngineRequest[] = [];
  constructor(private readonly inner: ServingEngine) {}
  submit(request: EngineRequest): EngineStream {
    this.requests.push(structuredClone(request));
    return this.inner.submit(request);
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
  get unavailable(): Error | undefined {
    return this.inner.unavailable;
  }
}

/** A running test server and what it saw. */
export interface ClientTestServer {
  /** `http://127.0.0.1:<port>` (no path). */
  base: string;
  /** The model slug for chat completions. */
  chatModel: string;
  /** The model slug for messages. */
  messagesModel: string;
  /** Requests the engine was given, oldest first. */
  engineRequests: EngineRequest[];
  /** JSON bodies sent through {@link ClientTestServer.fetch}, oldest first. */
  sent: SentRequest[];
  /** A fetch that records the JSON body of each request, for the clients' `fetch` option. */
  fetch: typeof globalThis.fetch;
  close(): Promise<void>;
}

/**
 * Starts the model and the server on a free port. The context is 4096 tokens, room for a schema-laden prompt plus
 * the explicit `max_tokens` every test sets (the server refuses a limit the context cannot hold).
 */
export async function startClientTestServer(): Promise<ClientTestServer> {
  const path = await ensureTestModel("tiny-qwen3", "gguf", "q8_0");
  const worker = await WorkerEngine.start(path, { load: { contextSize: 4096, threads: 2, kvCache: { bytes: 64 * 1024 * 1024 } } });
  const engine = new RecordingEngine(worker);
  const slugs = defaultSlugs(worker.model);
  const registry = new ModelRegistry([{ model: worker.model, engine, slugs, created: 1_700_000_000 }]);
  let server: LoomServer;
  try {
    server = await startServer({ registry, auth: new StaticKeys([TEST_KEY]), endpoints: createEndpoints(registry) }, "127.0.0.1", 0);
  } catch (error) {
    await worker.close();
    throw error;
  }
  const sent: SentRequest[] = [];
  const recordingFetch: typeof globalThis.fetch = async (input, init) => {
    const url = new URL(input instanceof Request ? input.url : String(input));
    const body = init?.body ?? (input instanceof Request ? await input.clone().text() : undefined);
    if (typeof body === "string" && body.length > 0) sent.push({ path: url.pathname, body: JSON.parse(body) as Record<string, unknown> });
    return globalThis.fetch(input, init);
  };
  return {
    base: `http://127.0.0.1:${server.port}`,
    chatModel: slugs.openai[0]!,
    messagesModel: slugs.anthropic[0]!,
    engineRequests: engine.requests,
    sent,
    fetch: recordingFetch,
    async close() {
      server.close();
      await worker.close();
    },
  };
}
