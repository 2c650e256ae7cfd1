// Runs an InternalRequest on the serving engine and turns the engine's events into InternalEvents: the one place
// where the server's request type meets the engine's. Reasoning is split from the answer at the think tags.
import type { Engine } from "../../engine/engine.js";
import type { EngineError, EngineEvent, EngineRequest } from "../../engine/request.js";
import { type InternalEvent, type InternalRequest, type InternalUsage, ProtocolError } from "./internal.js";
import { DEFAULT_THINK_TAGS, type ThinkTags, ThinkSplitter } from "./think-splitter.js";

/** A running request: its events, and a way to stop it (client gone). */
export interface RunningRequest extends AsyncIterable<InternalEvent> {
  readonly id: string;
  abort(): void;
}

/** Builds the engine request: the conversation, template variables, limits and sampling. */
export function toEngineRequest(id: string, request: InternalRequest, defaultMaxTokens: number): EngineRequest {
  return {
    id,
    input: {
      messages: request.messages,
      tools: request.tools?.map((tool) => ({ type: "function", function: { name: tool.name, description: tool.description, parameters: tool.parameters } })),
      templateKwargs: { enable_thinking: request.thinking.enabled },
    },
    maxTokens: request.maxTokens ?? defaultMaxTokens,
    sampling: {
      temperature: request.sampling.temperature,
      topP: request.sampling.topP,
      topK: request.sampling.topK,
      frequencyPenalty: request.sampling.frequencyPenalty,
      presencePenalty: request.sampling.presencePenalty,
      seed: request.sampling.seed,
    },
    stop: request.stop,
    enableAutoCompaction: request.autoCompaction,
    thinkingBudget: request.thinking.enabled && request.thinking.budgetTokens !== undefined ? { tokens: request.thinking.budgetTokens } : undefined,
  };
}

/** Maps an engine failure to what the client sees. */
export function protocolErrorOf(error: EngineError): ProtocolError {
  const param = error.field?.startsWith("input") ? "messages" : error.field;
  if (error.kind === "internal") return new ProtocolError("internal", `the model failed while generating: ${error.message}`);
  return new ProtocolError("invalid_request", error.message, param);
}

/** Submits `request` and streams its InternalEvents. */
export function runRequest(engine: Engine, id: string, request: InternalRequest, options: { defaultMaxTokens: number; thinkTags?: ThinkTags }): RunningRequest {
  const stream = engine.submit(toEngineRequest(id, request, options.defaultMaxTokens));
  const splitter = request.thinking.enabled ? new ThinkSplitter(options.thinkTags ?? DEFAULT_THINK_TAGS) : undefined;
  async function* events(): AsyncGenerator<InternalEvent> {
    let cachedTokens = 0;
    let promptTokens = 0;
    for await (const event of stream as AsyncIterable<EngineEvent>) {
      switch (event.type) {
        case "start":
          promptTokens = event.promptTokens;
          break;
        case "admitted":
          cachedTokens = event.reusedPrefixTokens + event.reusedSuffixTokens;
          yield { type: "start", usage: { promptTokens, cachedTokens, completionTokens: 0 } };
          break;
        case "text":
          if (!splitter) yield { type: "text", text: event.text };
          else for (const piece of splitter.push(event.text)) yield { type: piece.kind, text: piece.text };
          break;
        case "finish": {
          if (event.reason === "aborted") return;
          if (splitter) for (const piece of splitter.flush()) yield { type: piece.kind, text: piece.text };
          const usage: InternalUsage = {
            promptTokens: event.usage.promptTokens,
            cachedTokens: event.usage.reusedPrefixTokens + event.usage.reusedSuffixTokens,
            completionTokens: event.usage.completionTokens,
          };
          const reason = event.stopSequence !== undefined ? "stop_sequence" : event.reason === "length" ? "max_tokens" : "end_turn";
          yield { type: "finish", reason, stopSequence: event.stopSequence, usage };
          return;
        }
        case "error":
          yield { type: "error", error: protocolErrorOf(event.error) };
          return;
      }
    }
  }
  return { id, abort: () => engine.abort(id), [Symbol.asyncIterator]: () => events() };
}
