// One real loom server for the client-library tests (server/clients/*.test.ts): server/testing/model-server.ts on
// the random-weight tiny-qwen3 model (Qwen3 tokenizer and tool-calling template), behind a key, with the Responses API
// and its stored responses (in a temporary data dir). Every request the
// server hands the engine is recorded, and so is every HTTP body a client sends through `fetch`, so a test can check
// what a library put on the wire and what the server made of it (a tool result in the next turn).
import type { EngineRequest } from "../../engine/request.js";
import { startModelServer } from "../testing/model-server.js";

/** The key every client of the test server uses. */
export const TEST_KEY = "sk-clients";

/** An HTTP request a client sent: its path and parsed JSON body. */
export interface SentRequest {
  path: string;
  body: Record<string, unknown>;
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
  const model = await startModelServer({ key: TEST_KEY, contextSize: 4096, kvBytes: 64 * 1024 * 1024, responses: true });
  const sent: SentRequest[] = [];
  const recordingFetch: typeof globalThis.fetch = async (input, init) => {
    const url = new URL(input instanceof Request ? input.url : String(input));
    const body = init?.body ?? (input instanceof Request ? await input.clone().text() : undefined);
    if (typeof body === "string" && body.length > 0) sent.push({ path: url.pathname, body: JSON.parse(body) as Record<string, unknown> });
    return globalThis.fetch(input, init);
  };
  return {
    base: model.base,
    chatModel: model.chatModel,
    messagesModel: model.messagesModel,
    engineRequests: model.engine.requests,
    sent,
    fetch: recordingFetch,
    close: () => model.close(),
  };
}
