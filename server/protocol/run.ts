// Runs an InternalRequest on the serving engine and turns the engine's events into InternalEvents: the one place
// where the server's request type meets the engine's. Reasoning is split from the answer, and when the request offers
// tools, the model's tool calls are taken out of it, in the syntax of the model's chat template: think and tool-call
// tags, Mistral's `[TOOL_CALLS]`, or harmony channels (server/protocol/output-readers.ts).
import type { ServingEngine } from "../../engine/engine.js";
import type { PreparedPrompt } from "../../engine/prompt.js";
import type { EngineError, EngineEvent, EngineRequest } from "../../engine/request.js";
import { type ConstraintTags, constraintSpecOf } from "./constraint.js";
import { harmonyReasoningEffort } from "./harmony.js";
import { type InternalEvent, type InternalRequest, type InternalUsage, ProtocolError } from "./internal.js";
import { LogprobAttribution } from "./logprobs.js";
import { HarmonyOutputReader, type OutputReader, TaggedOutputReader } from "./output-readers.js";
import { DEFAULT_THINK_TAGS, type ThinkTags } from "./think-splitter.js";
import { HERMES_TOOL_CALL_TAGS, type ToolCallTags } from "./tool-calls.js";

/** A running request: its events, and a way to stop it (client gone). */
export interface RunningRequest extends AsyncIterable<InternalEvent> {
  readonly id: string;
  abort(): void;
}

/**
 * What a request used, whatever its end: the engine's own counts at its finish (aborted included); for a request that
 * failed, its prompt (once admitted) and the text pieces it produced, each at least one token (the engine's error
 * carries no counts): a lower bound.
 */
export type UsageObserver = (usage: InternalUsage) => void;

/**
 * Builds the engine request: the conversation, template variables, limits, sampling and output constraint. Without a
 * client limit, generation may run until the context is full; with one, a prompt that leaves too little room is an
 * error naming both counts. A harmony template takes the thinking settings as its reasoning effort (the model always
 * reasons), and its reasoning has no tags for a token budget to close.
 */
export function toEngineRequest(id: string, request: InternalRequest, tags: OutputFormat = {}): EngineRequest {
  const constraint = constraintSpecOf(request, tags);
  const harmony = tags.syntax === "harmony";
  return {
    ...(constraint ? { constraint } : {}),
    id,
    input: {
      messages: request.messages,
      tools: request.tools?.map((tool) => ({ type: "function", function: { name: tool.name, description: tool.description, parameters: tool.parameters } })),
      templateKwargs: harmony ? { enable_thinking: request.thinking.enabled, reasoning_effort: harmonyReasoningEffort(request.thinking) } : { enable_thinking: request.thinking.enabled },
    },
    maxTokens: request.maxTokens ?? "context",
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
    ...(request.logprobs ? { logprobs: { top: request.logprobs.top } } : {}),
    ...(request.minTokens !== undefined ? { minTokens: request.minTokens } : {}),
    ...(request.cacheKey !== undefined ? { affinityKey: request.cacheKey } : {}),
    ...(request.ignoreEndOfGeneration ? { ignoreEndOfGeneration: true } : {}),
    thinkingBudget: reasonsInTags(tags) && request.thinking.enabled && request.thinking.budgetTokens !== undefined
      ? { tokens: request.thinking.budgetTokens, ...(tags.thinkTags ? { open: tags.thinkTags.open, close: tags.thinkTags.close } : {}) }
      : undefined,
  };
}

/** Whether the model's reasoning is between think tags (not harmony's channels; for Mistral, only with `[THINK]`). */
function reasonsInTags(format: OutputFormat): boolean {
  if (format.syntax === "harmony") return false;
  return !(format.syntax === "mistral" || format.syntax === "mistral-args") || format.thinkTags !== undefined;
}

/** The wire name of an engine request field (`sampling.topP` -> `top_p`), as each wire format spells it. */
export type WireFieldNames = (field: string) => string;

/**
 * Maps an engine failure to what the client sees. The field at fault is named as the client sent it: in `param`,
 * and where the engine's message names the field, in the message too.
 */
export function protocolErrorOf(error: EngineError, wireField: WireFieldNames = (field) => field): ProtocolError {
  if (error.kind === "internal") return new ProtocolError("internal", `the model failed while generating: ${error.message}`);
  if (error.field === undefined) return new ProtocolError("invalid_request", error.message);
  const param = wireField(error.field);
  // Engine messages name the field by its path, or a sampling parameter by its own name ("sampling parameter topP").
  const named = [error.field, error.field.replace(/^sampling\./, "")].find((name) => new RegExp(`\\b${escapeRegExp(name)}(?![\\w.])`).test(error.message));
  const message = named === undefined ? error.message : error.message.replace(new RegExp(`\\b${escapeRegExp(named)}(?![\\w.])`), param);
  return new ProtocolError("invalid_request", message, param);
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

/**
 * How engine output is written and read: its syntax (tags, Mistral's `[TOOL_CALLS]`, or harmony channels for gpt-oss),
 * the think and tool-call tags of the model's chat template (for tags; think tags for Mistral's `[THINK]`), the JSON
 * layout.
 */
export interface OutputFormat extends ConstraintTags {
  thinkTags?: ThinkTags;
  toolCallTags?: ToolCallTags;
}

/** The reader of one request's output in `format`'s syntax. */
export function outputReaderOf(request: InternalRequest, format: OutputFormat): OutputReader {
  if (format.syntax === "harmony") return new HarmonyOutputReader(extractsToolCalls(request));
  const mistral = format.syntax === "mistral" ? "json" : format.syntax === "mistral-args" ? "args" : undefined;
  const gemma4 = format.syntax === "gemma4";
  // Mistral's reasoning models think whatever the request says (their system prompt asks them to), as gpt-oss does;
  // Gemma 4's thought channel is unmistakable markup, read whatever the setting, as llama.cpp reads it.
  const alwaysReasons = (mistral !== undefined || gemma4) && format.thinkTags !== undefined;
  const thinkTags = gemma4 ? "gemma4-channels" : format.thinkTags ?? DEFAULT_THINK_TAGS;
  return new TaggedOutputReader({
    think: (request.thinking.enabled || alwaysReasons) && reasonsInTags(format) ? thinkTags : undefined,
    // Calls are constrained to the template's layout whenever they are extracted, so they can stream as generated.
    toolCall: !extractsToolCalls(request) ? undefined : mistral ? { mistral } : gemma4 ? { gemma4: true } : format.toolCallTags ?? HERMES_TOOL_CALL_TAGS,
  });
}

/** Whether tool calls are taken out of the answer: the request offers tools and does not forbid calling them. */
export function extractsToolCalls(request: InternalRequest): boolean {
  return (request.tools?.length ?? 0) > 0 && request.toolChoice?.type !== "none";
}

/**
 * Turns one request's engine events into InternalEvents (see InternalEvent for their order). Ends after the engine's
 * finish or error; yields nothing more for an aborted request.
 */
export async function* internalEvents(stream: AsyncIterable<EngineEvent>, request: InternalRequest, format: OutputFormat & { wireField?: WireFieldNames; onUsage?: UsageObserver } = {}): AsyncGenerator<InternalEvent> {
  const reader = outputReaderOf(request, format);
  const logprobs = new LogprobAttribution();
  let cachedTokens = 0;
  let promptTokens = 0;
  let admitted = false;
  let textPieces = 0;
  /** Generated tokens of the reasoning, its tags included. */
  let reasoningTokens = 0;
  for await (const event of stream) {
    switch (event.type) {
      case "start":
        promptTokens = event.promptTokens;
        break;
      case "admitted":
        admitted = true;
        cachedTokens = event.reusedPrefixTokens + event.reusedSuffixTokens;
        yield { type: "start", usage: { promptTokens, cachedTokens, completionTokens: 0 } };
        break;
      case "text": {
        textPieces += 1;
        const wasReasoning = reader.reasoning;
        logprobs.add(event.logprobs);
        const events = logprobs.attach(reader.push(event.text));
        if (reader.readsReasoning && (wasReasoning || reader.reasoning)) reasoningTokens += event.tokens ?? 1;
        yield* events;
        break;
      }
      case "finish": {
        const { promptTokens: prompt, reusedPrefixTokens, reusedSuffixTokens, completionTokens } = event.usage;
        format.onUsage?.({ promptTokens: prompt, cachedTokens: reusedPrefixTokens + reusedSuffixTokens, completionTokens });
        if (event.reason === "aborted") return;
        // Cut short, the output may end inside a tag or a call: what is held back then is markup, not text.
        const cut = event.reason === "length" || event.stopSequence !== undefined;
        yield* logprobs.attach(reader.flush(cut), true);
        const usage: InternalUsage = {
          promptTokens: event.usage.promptTokens,
          cachedTokens: event.usage.reusedPrefixTokens + event.usage.reusedSuffixTokens,
          completionTokens: event.usage.completionTokens,
        };
        if (reader.readsReasoning) usage.reasoningTokens = Math.min(reasoningTokens, usage.completionTokens);
        const reason = event.stopSequence !== undefined ? "stop_sequence" : event.reason === "length" ? "max_tokens" : "end_turn";
        // tool_use asks the client to run the calls, so only whole ones: a call cut short keeps the reason that cut it.
        if (reader.calls > 0 && reason !== "max_tokens" && !reader.endedInsideCall) yield { type: "finish", reason: "tool_use", usage };
        else yield { type: "finish", reason, stopSequence: event.stopSequence, usage };
        return;
      }
      case "error":
        format.onUsage?.(admitted ? { promptTokens, cachedTokens, completionTokens: textPieces } : { promptTokens: 0, cachedTokens: 0, completionTokens: 0 });
        yield { type: "error", error: protocolErrorOf(event.error, format.wireField) };
        return;
    }
  }
}

/**
 * Submits `request` and streams its InternalEvents (engine errors with their fields named as `wireField` says).
 * `priority`: the engine's priority class (smaller first; interactive requests 0, agent runs after them);
 * `maxTokensUpToContext`: a token limit the context cannot hold is cut to it instead of failing (agent turns);
 * `prepared`: the prompt `engine.prepareAhead` gave for this request (admission counted it), so that it is not prepared again.
 */
export function runRequest(engine: ServingEngine, id: string, request: InternalRequest, options: RunOptions = {}): RunningRequest {
  const stream = engine.submit(engineRequestOf(id, request, options), options.prepared);
  return { id, abort: () => engine.abort(id), [Symbol.asyncIterator]: () => internalEvents(stream, request, options) };
}

/** How runRequest (and runChoices) run a request: see runRequest. */
export type RunOptions = { wireField?: WireFieldNames; onUsage?: UsageObserver; priority?: number; maxTokensUpToContext?: boolean; prepared?: PreparedPrompt } & OutputFormat;

/** The engine request runRequest submits: toEngineRequest with the run's priority and token-limit policy. */
export function engineRequestOf(id: string, request: InternalRequest, options: RunOptions): EngineRequest {
  const engineRequest = toEngineRequest(id, request, options);
  if (options.priority !== undefined) engineRequest.priority = options.priority;
  if (options.maxTokensUpToContext) engineRequest.maxTokensUpToContext = true;
  return engineRequest;
}
