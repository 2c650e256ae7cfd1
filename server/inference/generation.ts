// One POST to a generation endpoint (chat completions, messages) and to a token-count endpoint: authenticate, read the
// body within its limits, parse it in the endpoint's wire format, fetch and decode its images (server/images/), admit
// it against the queue and the key's limits, run
// it on the model's engine, then answer with one JSON body or a server-sent event stream. What it used is settled
// (durably, when the platform meters it) before the response's last byte, whatever its end.
import type { HttpRequest } from "uWebSockets.js";
import type { ServingEngine } from "../../engine/engine.js";
import type { PreparedPrompt } from "../../engine/prompt.js";
import { EngineError } from "../../engine/request.js";
import type { Admission } from "../http/accounting.js";
import type { Principal } from "../http/auth.js";
import { readJsonBody } from "../http/body.js";
import type { ServerContext } from "../http/context.js";
import type { CollectedChoice, CollectedResult, WireEndpoint } from "../http/endpoint.js";
import { type Connection, EventStream } from "../http/reply.js";
import { type ServedModel, engineFor, metricsName, outputFormatOf } from "../models.js";
import { type InternalEvent, type InternalRequest, type InternalUsage, ProtocolError } from "../protocol/internal.js";
import { runChoices } from "../protocol/choices.js";
import { type RunningRequest, protocolErrorOf, toEngineRequest } from "../protocol/run.js";
import { admissionRequestOf } from "./admission-request.js";
import { resolveImages } from "../images/resolve.js";

/** The request head a body handler needs, read before the first await (uWS request objects die then). */
interface RequestHead {
  authorization: string;
  xApiKey: string;
  contentType: string;
  contentLength: string;
}

function readHead(req: HttpRequest): RequestHead {
  return {
    authorization: req.getHeader("authorization"),
    xApiKey: req.getHeader("x-api-key"),
    contentType: req.getHeader("content-type"),
    contentLength: req.getHeader("content-length"),
  };
}

/**
 * The common front of every POST route: authentication and the body, then `serve` with the parsed JSON and the
 * principal (the guard has checked the framing). A key refused at once is refused before the body is read; one that
 * needs a lookup is looked up while the body arrives.
 * Failures answer in the endpoint's error shape; a failure before the body was read to its end closes the
 * connection (its rest is still on the wire).
 */
export function handleJsonPost(context: ServerContext, route: string, endpoint: WireEndpoint, connection: Connection, req: HttpRequest, serve: (body: unknown, principal: Principal) => Promise<void>): void {
  const head = readHead(req);
  const fail = (error: ProtocolError, closeConnection = false) => answerError(context, route, endpoint, connection, error, closeConnection);
  const authenticated = context.options.auth.authenticate({ authorization: head.authorization, xApiKey: head.xApiKey }, endpoint.format);
  if (authenticated instanceof ProtocolError) return fail(authenticated, true);
  readJsonBody(connection, context.bodyLimits, head, (body, complete) => {
    if (body instanceof ProtocolError) return fail(body, !complete);
    const run = async () => {
      const principal = await authenticated;
      if (principal instanceof ProtocolError) throw principal;
      await serve(body, principal);
    };
    // A ProtocolError is the client's; anything else is logged and answered 500 by the guard.
    run().catch((error: unknown) => (error instanceof ProtocolError ? fail(error) : connection.fail(error)));
  });
}

/** Answers `error` in the endpoint's shape (logging server-side failures with the request id). */
export function answerError(context: ServerContext, route: string, endpoint: WireEndpoint, connection: Connection, error: ProtocolError, closeConnection = false): void {
  if (connection.started) {
    // A stream already under way cannot take an error response: cut it, so the client sees it fail, never hang.
    context.options.log.requestError(connection.requestId, route, error);
    connection.terminate();
    return;
  }
  if (error.kind === "internal") context.options.log.requestError(connection.requestId, route, error);
  const { status, body, headers } = endpoint.error(error);
  context.metrics.request(route, status);
  connection.sendJson(status, body, error.responseHeaders ? { ...error.responseHeaders, ...headers } : headers, closeConnection);
}

/** How a request's engine fields are named on the wire: as the client sent them, else as the format names them. */
function wireFieldOf(endpoint: WireEndpoint, request: InternalRequest): (field: string) => string {
  return (field) => request.fieldNames?.[field] ?? endpoint.wireField(field);
}

/** The served model a request names, and room in its queue. */
function admit(context: ServerContext, endpoint: WireEndpoint, request: InternalRequest): ServedModel {
  const registry = context.options.registry;
  const served = registry.find(request.model, endpoint.format);
  if (!served) throw new ProtocolError("not_found", `The model '${request.model}' does not exist; available: ${registry.names(endpoint.format).join(", ")}`, "model");
  // With pools (a gateway), the engine is known only once admission has read the organization: checked then.
  if (!served.poolEngine) checkCapacity(context, served.engine);
  return served;
}

/** Refuses a request its engine cannot take now (unavailable, or its queue full). */
export function checkCapacity(context: ServerContext, engine: ServingEngine): void {
  if (engine.unavailable) throw new ProtocolError("overloaded", `the model is unavailable: ${engine.unavailable.message}`, undefined, 30);
  if (engine.queueDepth >= context.maxQueue) {
    throw new ProtocolError("overloaded", "the server is at capacity: too many requests are waiting; retry shortly", undefined, 2);
  }
}

/**
 * The engine that runs an admitted request for `served`: the organization's dedicated pool's, or the model's own;
 * a pool's engine is checked for room here (the model's own was checked before admission).
 * @throws ProtocolError "permission" when this server does not have the pool, "overloaded" when its engine is full.
 */
export function admittedEngine(context: ServerContext, served: ServedModel, pool: string | undefined): ServingEngine {
  const engine = engineFor(served, pool);
  if (!engine) throw new ProtocolError("permission", `this organization runs on the dedicated pool '${pool}', which this server does not have: send its requests to a gateway (loom gateway)`);
  if (served.poolEngine) checkCapacity(context, engine);
  return engine;
}

/**
 * The served model behind an OpenAI-format slug (the parsers have checked it is one: this narrows the type).
 * @throws ProtocolError "not_found" naming `model`.
 */
export function servedOpenAIModel(context: ServerContext, slug: string): ServedModel {
  const served = context.options.registry.find(slug, "openai");
  if (!served) throw new ProtocolError("not_found", `The model '${slug}' does not exist`, "model");
  return served;
}

/** The vocabulary size of the model behind an OpenAI-format slug (0: none), for parsers that check token ids. */
export function openAIVocabSize(context: ServerContext): (slug: string) => number {
  return (slug) => context.options.registry.find(slug, "openai")?.model.vocabSize ?? 0;
}

/**
 * Admits a request against its key's limits, counting its prompt only where a token limit needs it; with the prompt
 * its engine prepared to count it, if it did (the request runs with it).
 */
async function admitUsage(context: ServerContext, endpoint: WireEndpoint, served: ServedModel, request: InternalRequest, principal: Principal): Promise<{ admission: Admission; prepared: PreparedPrompt | undefined }> {
  const admissionRequest = admissionRequestOf(served, request, principal, endpoint.format, wireFieldOf(endpoint, request));
  const admission = await context.options.accountant.admit(admissionRequest);
  return { admission, prepared: admissionRequest.prepared() };
}

/** POST to a generation endpoint. NOTE: everything read from `req` is read before the first await. */
export function handleGeneration(context: ServerContext, endpoint: WireEndpoint, connection: Connection, req: HttpRequest): void {
  const route = endpoint.path;
  handleJsonPost(context, route, endpoint, connection, req, async (body, principal) => {
    const id = `${endpoint.idPrefix}${connection.requestId.slice(4)}`;
    const request = endpoint.parse(body, id);
    const served = admit(context, endpoint, request);
    if (endpoint.prepare) await endpoint.prepare(request, principal);
    // Before the prompt is counted: its images are part of it.
    await resolveImages(request, context.images);
    const { admission, prepared } = await admitUsage(context, endpoint, served, request, principal);
    const meta = { id, model: request.model, created: Math.floor(Date.now() / 1000) };
    const started = performance.now();
    // What the request used, whatever its end (the engine's counts; see UsageObserver), settled exactly once.
    let used: InternalUsage = { promptTokens: 0, cachedTokens: 0, completionTokens: 0 };
    let settlement: Promise<void> | undefined;
    const settle = (usage: InternalUsage) => (settlement ??= admission.settle(usage));
    let running: RunningRequest;
    try {
      running = runChoices(admittedEngine(context, served, admission.pool), meta.id, request, { ...outputFormatOf(served), wireField: wireFieldOf(endpoint, request), whitespace: context.options.jsonWhitespace, prepared, onUsage: (usage) => { used = usage; } });
    } catch (error) {
      // Never submitted: nothing used, but the admission's reservations are given back.
      void settle(used).catch((settleError: unknown) => context.options.log.requestError(connection.requestId, route, settleError));
      throw error;
    }
    connection.onAbort(() => running.abort());
    const events = running[Symbol.asyncIterator]();
    const metrics = context.metrics;
    let lastTokenAt: number | undefined;
    const observe = (event: InternalEvent) => {
      // A choice's own finish is counted in the last one (several choices: server/protocol/choices.ts).
      if (event.type === "finish" && event.choice === undefined) metrics.tokens(event.usage.promptTokens, event.usage.cachedTokens, event.usage.completionTokens, metricsName(served));
      if (event.type !== "text" && event.type !== "thinking") return;
      const now = performance.now();
      if (lastTokenAt === undefined) metrics.timeToFirstToken((now - started) / 1000);
      else metrics.interTokenLatency((now - lastTokenAt) / 1000);
      lastTokenAt = now;
    };

    try {
      // The first event decides the status: a request that fails before it starts gets an HTTP error.
      const first = await events.next();
      if (first.done) return; // aborted by the client
      if (first.value.type === "error") throw first.value.error;

      if (!request.stream) {
        const result: CollectedResult = { thinking: "", text: "", toolCalls: [], finish: undefined as never };
        if (request.logprobs) result.logprobs = { thinking: [], text: [] };
        for (let next: IteratorResult<InternalEvent> = first; !next.done; next = await events.next()) {
          const event = next.value;
          observe(event);
          if (event.type === "error") throw event.error;
          collect(event.choice === undefined ? result : choiceOf(result, event.choice, request), event);
        }
        if (connection.closed || !result.finish) return;
        // Durable before the answer goes out: a response the client has is never missing from usage.
        await settle(result.finish.usage);
        if (connection.closed) return;
        const answer = await endpoint.respond(meta, result, request);
        if (connection.closed) return;
        metrics.request(route, 200);
        connection.sendJson(200, answer, admission.headers);
        return;
      }

      const stream = new EventStream(connection, admission.headers);
      const encoder = endpoint.stream(meta, request);
      const pingEvery = context.pingSeconds * 1000;
      const ping = encoder.ping ? setInterval(connection.guard(() => {
        if (performance.now() - stream.lastWriteAt >= pingEvery) void stream.write(encoder.ping!());
      }), Math.min(pingEvery, 1000)) : undefined;
      try {
        for (let next: IteratorResult<InternalEvent> = first; !next.done && !connection.closed; next = await events.next()) {
          const event = next.value;
          observe(event);
          if (event.type === "error" && event.error.kind === "internal") context.options.log.requestError(connection.requestId, route, event.error);
          // The finish frames are the stream's last: the usage they report is durable before they are written. If it
          // cannot be recorded, the stream ends with an error event instead of a finish.
          const unrecorded = event.type === "finish" && event.choice === undefined ? await settle(event.usage).then(() => undefined, (error: unknown) => error) : undefined;
          if (unrecorded !== undefined) {
            if (!(unrecorded instanceof ProtocolError)) throw unrecorded;
            context.options.log.requestError(connection.requestId, route, unrecorded);
            await stream.write(await encoder.event({ type: "error", error: unrecorded }));
            break;
          }
          const wasStarted = connection.started;
          await stream.write(await encoder.event(event));
          // Counted once the status line went out: a stream that fails before that is answered (and counted) as a 500.
          if (!wasStarted && connection.started) metrics.request(route, 200);
          if (event.type === "error") break;
        }
        stream.end();
      } finally {
        if (ping) clearInterval(ping);
      }
    } finally {
      if (connection.aborted) running.abort();
      if (!settlement) void settleAfterEnd(context, route, connection, events, () => used, settle);
    }
  });
}

/** Adds one event of a whole generation to its result (or its choice's). */
function collect(into: CollectedChoice, event: InternalEvent): void {
  if (event.type === "thinking" || event.type === "text") into.logprobs?.[event.type].push(...(event.logprobs ?? []));
  if (event.type === "thinking") into.thinking += event.text;
  else if (event.type === "text") into.text += event.text;
  else if (event.type === "tool_call") into.toolCalls.push({ id: event.id, name: event.name, arguments: event.arguments, argumentsText: event.argumentsText });
  else if (event.type === "finish") into.finish = event;
}

/** Choice `index` of a whole generation of several choices, made on its first event. */
function choiceOf(result: CollectedResult, index: number, request: InternalRequest): CollectedChoice {
  result.choices ??= [];
  return (result.choices[index] ??= { thinking: "", text: "", toolCalls: [], finish: undefined as never, ...(request.logprobs ? { logprobs: { thinking: [], text: [] } } : {}) });
}

/**
 * Settles a request that ended without its finish being settled (aborted by the client, failed, or its response
 * abandoned): reads its events to their end, where the engine reports what it computed, then records that.
 */
async function settleAfterEnd(context: ServerContext, route: string, connection: Connection, events: AsyncIterator<InternalEvent>, used: () => InternalUsage, settle: (usage: InternalUsage) => Promise<void>): Promise<void> {
  try {
    while (!(await events.next()).done) {
      // Drained: the engine stops an aborted request at its next step.
    }
    await settle(used());
  } catch (error) {
    context.options.log.requestError(connection.requestId, `${route} (usage of an unfinished request)`, error);
  }
}

/** POST to a token-count endpoint (Anthropic's /v1/messages/count_tokens): the prompt tokens the request would use. */
export function handleTokenCount(context: ServerContext, endpoint: WireEndpoint, connection: Connection, req: HttpRequest): void {
  const counter = endpoint.tokenCount!;
  handleJsonPost(context, counter.path, endpoint, connection, req, async (body) => {
    const request = counter.parse(body);
    const served = admit(context, endpoint, request);
    await resolveImages(request, context.images);
    let count: number;
    try {
      count = await served.engine.countTokens(toEngineRequest("count", request, outputFormatOf(served)));
    } catch (error) {
      if (error instanceof EngineError) throw protocolErrorOf(error, wireFieldOf(endpoint, request));
      throw error;
    }
    context.metrics.request(counter.path, 200);
    connection.sendJson(200, counter.respond(count));
  });
}
