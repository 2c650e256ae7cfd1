// The inference surface: each wire format's generation route (and token-count route, where it has one), legacy
// completions and the tokenizer routes, the model listings both formats share, and the operator's /health and /metrics.
import type { HttpRequest } from "uWebSockets.js";
import type { ServerContext } from "../http/context.js";
import type { WireEndpoint } from "../http/endpoint.js";
import type { ErrorResponder } from "../http/guard.js";
import type { EngineGauges } from "../http/metrics.js";
import type { Routes, Surface } from "../http/routes.js";
import { type ModelRegistry, metricsName } from "../models.js";
import { handleGeneration, handleTokenCount } from "./generation.js";
import { COMPLETIONS_PATH, handleCompletion } from "./completions/route.js";
import { EMBEDDINGS_PATH, handleEmbeddings } from "./embeddings-route.js";
import { handleModels } from "./models-route.js";
import { DETOKENIZE_PATH, TOKENIZE_PATH, handleDetokenize, handleTokenize } from "./tokenize-routes.js";
import { registerStoredResponseRoutes } from "./responses-routes.js";
import { registerStoredCompletionRoutes } from "./stored-completions-routes.js";
import { LOOM_VERSION } from "../version.js";

/** The inference routes of a server. */
export function inferenceSurface(context: ServerContext): Surface {
  const { endpoints, registry } = context.options;
  const shapeOf = (endpoint: WireEndpoint) => (): ErrorResponder => endpoint.error;
  /** Routes both formats share answer in the shape the request's headers claim. */
  const sharedShape = (req: HttpRequest): ErrorResponder => context.endpointFor((name) => req.getHeader(name)).error;
  const anthropic = endpoints.find((endpoint) => endpoint.format === "anthropic");
  return {
    register(routes: Routes) {
      for (const endpoint of endpoints) {
        routes.add("POST", endpoint.path, shapeOf(endpoint), (connection, req) => handleGeneration(context, endpoint, connection, req));
        const counter = endpoint.tokenCount;
        if (counter) routes.add("POST", counter.path, shapeOf(endpoint), (connection, req) => handleTokenCount(context, endpoint, connection, req));
      }
      // Legacy completions and the tokenizer routes answer as chat completions do (its keys, its error shape).
      const chat = endpoints.find((endpoint) => endpoint.path === "/v1/chat/completions");
      if (chat) {
        routes.add("POST", COMPLETIONS_PATH, shapeOf(chat), (connection, req) => handleCompletion(context, chat, connection, req));
        routes.add("POST", EMBEDDINGS_PATH, shapeOf(chat), (connection, req) => handleEmbeddings(context, chat, connection, req));
        routes.add("POST", TOKENIZE_PATH, shapeOf(chat), (connection, req) => handleTokenize(context, chat, connection, req));
        routes.add("POST", DETOKENIZE_PATH, shapeOf(chat), (connection, req) => handleDetokenize(context, chat, connection, req));
      }
      const responses = endpoints.find((endpoint) => endpoint.path === "/v1/responses");
      if (responses && context.options.responses) registerStoredResponseRoutes(context, routes, responses, context.options.responses);
      if (chat && context.options.chatCompletions) registerStoredCompletionRoutes(context, routes, chat, context.options.chatCompletions);
      routes.add("GET", "/v1/models", sharedShape, (connection, req) => handleModels(context, connection, req));
      routes.add("GET", "/v1/models/*", sharedShape, (connection, req) => handleModels(context, connection, req), "/v1/models");
      routes.add("GET", "/health", sharedShape, (connection) => {
        const down = registry.entries.filter((entry) => entry.engine.unavailable);
        // Models loaded, not the names they answer to (slugs and aliases).
        const models = registry.entries.length;
        // Stopping: a load balancer sends no more work here, while the requests in flight finish.
        // inFlight: the requests it waits for, besides this one.
        if (context.requests.draining) return connection.sendJson(503, { status: "draining", models, inFlight: context.requests.count - 1, version: LOOM_VERSION });
        if (down.length === 0) return connection.sendJson(200, { status: "ok", models, version: LOOM_VERSION });
        const unavailable = down.map((entry) => ({ model: entry.slugs.openai[0] ?? entry.slugs.anthropic[0], error: entry.engine.unavailable?.message }));
        connection.sendJson(503, { status: "unavailable", models, unavailable, version: LOOM_VERSION });
      });
      routes.add("GET", "/metrics", sharedShape, async (connection) => {
        // An engine that cannot answer (unavailable, restarting) is left out of the gauges rather than failing the scrape.
        const settled = await Promise.allSettled(registry.entries.map(gaugesOf));
        const gauges = settled.flatMap((result) => (result.status === "fulfilled" ? [result.value] : []));
        connection.send(200, context.metrics.render(gauges), { "content-type": "text/plain; version=0.0.4" });
      });
    },
    // Unknown paths under /v1/messages answer in the Anthropic shape; other /v1/ paths in the shape the headers claim.
    // Paths outside /v1/ are left to the surfaces that own them (/api/, /admin/, /dashboard/); the server's fallback
    // for paths nobody owns is the same shape as here.
    errorShapeFor(url, header) {
      if (anthropic && url.startsWith("/v1/messages")) return anthropic.error;
      if (!url.startsWith("/v1/")) return undefined;
      return context.endpointFor(header).error;
    },
  };
}

/** A served model's gauges as /metrics exports them, sampled now. */
export async function gaugesOf(entry: ModelRegistry["entries"][number]): Promise<EngineGauges> {
  const stats = await entry.engine.stats();
  return {
    model: metricsName(entry),
    running: stats.running,
    waiting: stats.waiting,
    kvBlocksUsed: stats.kvBlocks.used,
    kvBlocksCached: stats.kvBlocks.cached,
    kvBlocksFree: stats.kvBlocks.free,
    lookups: stats.cache.lookups,
    prefixHits: stats.cache.prefixHits,
    sectionHits: stats.cache.sectionHits,
    computedPromptTokens: stats.tokens.computedPrompt,
    forkedPromptTokens: stats.tokens.forkedPrompt,
    ...(entry.routing ? { routing: entry.routing() } : {}),
  };
}
