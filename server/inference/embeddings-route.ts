// POST /v1/embeddings (OpenAI's shape): authenticate, parse, admit against the key's limits, embed every input on the
// model's engine (its step loop, beside generation), answer, and settle the prompt tokens used. A model whose GGUF
// declares no pooling_type refuses it by name.
import type { HttpRequest } from "uWebSockets.js";
import { EngineError } from "../../engine/request.js";
import { MAX_EMBEDDING_TOTAL_TOKENS, parseEmbeddingsRequest } from "../adapters/embeddings/parse.js";
import { embeddingsResponse } from "../adapters/embeddings/response.js";
import type { ServerContext } from "../http/context.js";
import type { WireEndpoint } from "../http/endpoint.js";
import type { Connection } from "../http/reply.js";
import { metricsName } from "../models.js";
import { ProtocolError } from "../protocol/internal.js";
import { protocolErrorOf } from "../protocol/run.js";
import { admittedEngine, checkCapacity, handleJsonPost, openAIVocabSize, servedOpenAIModel } from "./generation.js";

/** The route's path. */
export const EMBEDDINGS_PATH = "/v1/embeddings";

/**
 * POST /v1/embeddings. `endpoint`: the OpenAI chat-completions endpoint, whose authentication and error shape it
 * shares. NOTE: everything read from `req` is read before the first await.
 */
export function handleEmbeddings(context: ServerContext, endpoint: WireEndpoint, connection: Connection, req: HttpRequest): void {
  const route = EMBEDDINGS_PATH;
  handleJsonPost(context, route, endpoint, connection, req, async (body, principal) => {
    const request = parseEmbeddingsRequest(body, context.options.registry, openAIVocabSize(context));
    const served = servedOpenAIModel(context, request.model);
    const embeddings = served.model.embeddings;
    if (!embeddings) throw new ProtocolError("invalid_request", `model ${request.model} does not produce embeddings (its GGUF declares no pooling_type)`, "model");
    if (request.dimensions !== undefined && request.dimensions > embeddings.dimensions) {
      throw new ProtocolError("invalid_request", `dimensions must be at most ${embeddings.dimensions}, the width of model ${request.model}'s embeddings, got ${request.dimensions}`, "dimensions");
    }
    if (!served.poolEngine) checkCapacity(context, served.engine);
    // Reserved before tokenizing: a token id is one token; a text is at most one token per UTF-8 byte, plus BOS and EOS.
    const bound = request.inputs.reduce((sum, input) => sum + (typeof input === "string" ? Buffer.byteLength(input) + 2 : input.length), 0);
    const admission = await context.options.accountant.admit({
      principal, format: "openai", model: request.model, inputTokens: async () => bound, maxOutputTokens: () => 0,
    });
    let promptTokens = 0;
    try {
      const engine = admittedEngine(context, served, admission.pool);
      if (!engine.embed) throw new ProtocolError("invalid_request", `model ${request.model} is served by an engine that does not produce embeddings`, "model");
      // A client that disconnects stops its inputs: their steps and KV blocks go to the requests still wanted.
      const id = `embd-${connection.requestId}`;
      const embedding = engine.embed({
        id, inputs: request.inputs, maxTotalTokens: MAX_EMBEDDING_TOTAL_TOKENS, ...(request.dimensions !== undefined ? { dimensions: request.dimensions } : {}),
      });
      connection.onAbort(() => engine.abort(id));
      const result = await embedding.catch((error: unknown) => {
        throw error instanceof EngineError ? protocolErrorOf(error) : error;
      });
      promptTokens = result.tokenCounts.reduce((sum, count) => sum + count, 0);
      await admission.settle({ promptTokens, cachedTokens: 0, completionTokens: 0 });
      context.metrics.tokens(promptTokens, 0, 0, metricsName(served));
      context.metrics.request(route, 200);
      connection.sendJson(200, embeddingsResponse(request.model, result, request.encodingFormat), admission.headers);
    } catch (error) {
      if (promptTokens === 0) void admission.settle({ promptTokens: 0, cachedTokens: 0, completionTokens: 0 }).catch((settleError: unknown) => context.options.log.requestError(connection.requestId, route, settleError));
      // Its client left: the abort is what ended it, not a failure to log, and there is no one to answer.
      if (connection.aborted) return;
      throw error;
    }
  });
}
