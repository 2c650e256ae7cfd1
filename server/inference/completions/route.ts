// POST /v1/completions (OpenAI's legacy completions, as vLLM serves it and lm-evaluation-harness scores with it):
// authenticate, read and parse the body, tokenize the prompts, admit the request against the key's limits, run every
// choice (runCompletion), then answer with one JSON body or a server-sent event stream. What it used is settled before
// the response's last byte, whatever its end, as the chat routes settle theirs.
import type { HttpRequest } from "uWebSockets.js";
import type { ServingEngine } from "../../../engine/engine.js";
import { EngineError } from "../../../engine/request.js";
import { type ChoicePrompt, ChoiceWriter, appendDelta } from "../../adapters/completions/choice.js";
import { type CompletionRequest, completionWireField, parseCompletionRequest } from "../../adapters/completions/parse.js";
import { type CollectedCompletionChoice, completionResponse } from "../../adapters/completions/response.js";
import { CompletionStreamWriter } from "../../adapters/completions/stream.js";
import type { ServerContext } from "../../http/context.js";
import type { ResponseMeta, WireEndpoint } from "../../http/endpoint.js";
import { type Connection, EventStream } from "../../http/reply.js";
import { type ServedModel, metricsName } from "../../models.js";
import { type InternalUsage, ProtocolError } from "../../protocol/internal.js";
import { protocolErrorOf } from "../../protocol/run.js";
import { admittedEngine, checkCapacity, handleJsonPost, openAIVocabSize, servedOpenAIModel } from "../generation.js";
import { type ChoiceEvent, type RunningCompletion, runCompletion, scoresPrompt } from "./run.js";

/** The route's path. */
export const COMPLETIONS_PATH = "/v1/completions";

/** A prompt ready to run: its tokens, and what its choices write of it. */
interface PreparedCompletionPrompt extends ChoicePrompt {
  /** How errors name it: `prompt`, or `prompt[i]` when the request has several. */
  path: string;
}

/**
 * POST /v1/completions. `endpoint`: the OpenAI chat-completions endpoint, whose authentication and error shape it
 * shares. NOTE: everything read from `req` is read before the first await.
 */
export function handleCompletion(context: ServerContext, endpoint: WireEndpoint, connection: Connection, req: HttpRequest): void {
  const route = COMPLETIONS_PATH;
  handleJsonPost(context, route, endpoint, connection, req, async (body, principal) => {
    const request = parseCompletionRequest(body, context.options.registry, openAIVocabSize(context));
    const served = servedOpenAIModel(context, request.model);
    if (!served.poolEngine) checkCapacity(context, served.engine);
    const prompts = await preparePrompts(served, request);
    const inputTokens = prompts.reduce((total, prompt) => total + prompt.tokens.length, 0);
    const admission = await context.options.accountant.admit({
      principal, format: "openai", model: request.model,
      inputTokens: async () => inputTokens,
      maxOutputTokens: () => request.maxTokens * request.n * prompts.length,
    });
    const meta: ResponseMeta = { id: `cmpl-${connection.requestId.slice(4)}`, model: request.model, created: Math.floor(Date.now() / 1000) };
    let settlement: Promise<void> | undefined;
    const settle = (usage: InternalUsage) => (settlement ??= admission.settle(usage));
    let running: RunningCompletion;
    try {
      running = runCompletion(admittedEngine(context, served, admission.pool), meta.id, request, prompts.map((prompt) => prompt.tokens));
    } catch (error) {
      void settle({ promptTokens: 0, cachedTokens: 0, completionTokens: 0 }).catch((settleError: unknown) => context.options.log.requestError(connection.requestId, route, settleError));
      throw error;
    }
    connection.onAbort(() => running.abort());
    const writers = prompts.flatMap((prompt) => Array.from({ length: request.n }, () => new ChoiceWriter(prompt, request.echo, request.logprobs !== undefined)));
    const promptLogprobsAsked = scoresPrompt(request);
    /** An engine error as the client sees it, naming the prompt of the choice that failed. */
    const failure = (event: Extract<ChoiceEvent, { type: "error" }>) => {
      const prompt = prompts[Math.floor(event.index / request.n)]!;
      return protocolErrorOf(event.error, (field) => completionWireField(field, prompt.path));
    };
    const deltaOf = (event: ChoiceEvent) => {
      const writer = writers[event.index]!;
      if (event.type === "admitted") return writer.admitted(promptLogprobsAsked);
      if (event.type === "prompt_logprobs") return writer.promptLogprobs(event.logprobs);
      if (event.type === "text") return writer.text(event.text, event.logprobs);
      return undefined;
    };
    const finishMetrics = (usage: InternalUsage) => context.metrics.tokens(usage.promptTokens, usage.cachedTokens, usage.completionTokens, metricsName(served));

    const events = running[Symbol.asyncIterator]();
    try {
      // The status waits for every choice's admission: a request that fails before it gets an HTTP error.
      const early: ChoiceEvent[] = [];
      const admitted = new Set<number>();
      while (admitted.size < writers.length) {
        const next = await events.next();
        if (next.done) return; // aborted by the client
        if (next.value.type === "error") throw failure(next.value);
        if (next.value.type === "admitted" || next.value.type === "finish") admitted.add(next.value.index);
        early.push(next.value);
      }
      const rest = async function* (): AsyncGenerator<ChoiceEvent> {
        yield* early;
        for (let next = await events.next(); !next.done; next = await events.next()) yield next.value;
      };

      if (!request.stream) {
        const choices: CollectedCompletionChoice[] = writers.map(() => ({ text: "", finishReason: "stop" }));
        let finished = 0;
        for await (const event of rest()) {
          if (event.type === "error") throw failure(event);
          if (event.type === "finish") {
            choices[event.index]!.finishReason = event.reason;
            finished++;
          }
          const delta = deltaOf(event);
          if (delta) appendDelta(choices[event.index]!, delta);
        }
        if (connection.closed) return;
        if (finished < choices.length) throw stoppedEarly();
        await running.ended();
        const usage = running.usage();
        await settle(usage);
        if (connection.closed) return;
        finishMetrics(usage);
        context.metrics.request(route, 200);
        connection.sendJson(200, completionResponse(meta, choices, usage), admission.headers);
        return;
      }

      const stream = new EventStream(connection, admission.headers);
      const writer = new CompletionStreamWriter(meta, request.includeUsage);
      let failed = false;
      let finished = 0;
      for await (const event of rest()) {
        if (connection.closed) break;
        const wasStarted = connection.started;
        if (event.type === "error") {
          const error = failure(event);
          if (error.kind === "internal") context.options.log.requestError(connection.requestId, route, error);
          await stream.write(writer.error(error));
          failed = true;
          break;
        }
        const delta = deltaOf(event);
        if (delta) await stream.write(writer.delta(event.index, delta));
        if (event.type === "finish") {
          finished++;
          await stream.write(writer.finish(event.index, event.reason));
        }
        if (!wasStarted && connection.started) context.metrics.request(route, 200);
      }
      if (!failed && !connection.closed && finished < writers.length) {
        // The engine stopped the choices (the server is shutting down): an error, never a truncated answer.
        await stream.write(writer.error(stoppedEarly()));
        failed = true;
      }
      if (!failed && !connection.closed) {
        await running.ended();
        const usage = running.usage();
        // The last frames report usage that is durable first; if it cannot be recorded, the stream ends with an error.
        const unrecorded = await settle(usage).then(() => undefined, (error: unknown) => error);
        if (unrecorded !== undefined) {
          if (!(unrecorded instanceof ProtocolError)) throw unrecorded;
          await stream.write(writer.error(unrecorded));
        } else {
          finishMetrics(usage);
          await stream.write(writer.end(usage));
        }
      }
      stream.end();
    } finally {
      if (connection.aborted) running.abort();
      if (!settlement) {
        void running.ended().then(() => settle(running.usage())).catch((error: unknown) => context.options.log.requestError(connection.requestId, `${route} (usage of an unfinished request)`, error));
      }
    }
  });
}

/**
 * Each prompt's tokens (a text tokenized as the engine tokenizes text input: with the model's BOS and special tokens)
 * and its text (token ids decoded); with echo and logprobs, each token's bytes. A prompt that cannot fit the context
 * is refused here, naming it.
 */
async function preparePrompts(served: ServedModel, request: CompletionRequest): Promise<PreparedCompletionPrompt[]> {
  const engine: ServingEngine = served.engine;
  const several = request.prompts.length > 1;
  const piecesNeeded = request.echo && request.logprobs !== undefined;
  return await Promise.all(request.prompts.map(async (prompt, index): Promise<PreparedCompletionPrompt> => {
    const path = several ? `prompt[${index}]` : "prompt";
    try {
      const tokens = "tokens" in prompt ? prompt.tokens : await engine.tokenize({ text: prompt.text, addSpecial: true });
      if (tokens.length === 0) throw new ProtocolError("invalid_request", `${path} is empty: it must hold at least one token`, path);
      const context = served.model.contextSize;
      if (tokens.length > context) throw new ProtocolError("invalid_request", `${path} has ${tokens.length} tokens, more than this model's context of ${context}`, path);
      const decoded = "text" in prompt && !piecesNeeded ? undefined : await engine.detokenize({ tokens, pieces: piecesNeeded });
      return { path, tokens, text: "text" in prompt ? prompt.text : decoded!.text, ...(decoded?.pieces ? { pieces: decoded.pieces } : {}) };
    } catch (error) {
      if (error instanceof EngineError) throw protocolErrorOf(error, (field) => (field === "text" ? path : completionWireField(field, path)));
      throw error;
    }
  }));
}

/** A completion whose choices the engine stopped before they finished, its client still there (a shutdown). */
function stoppedEarly(): ProtocolError {
  return new ProtocolError("overloaded", "the server stopped this completion before it finished (it is shutting down or restarting its engine); retry", undefined, 1);
}
