// Builds the non-streaming chat-completions response (spec 2.2) from a finished generation.
import type { TokenLogprob } from "../../../engine/request.js";
import type { InternalEvent, InternalToolCall } from "../../protocol/internal.js";
import { wireLogprobs } from "./logprobs.js";
import { DEFAULT_THINK_TAGS, finishReason, wireToolCall, wireUsage, type ChatCompletionBody, type CompletionMeta, type ThinkTags } from "./wire.js";

/** A finished generation: its reasoning (empty when thinking was off), its answer, its tool calls, and the finish event. */
export interface CompletionResult {
  reasoning: string;
  text: string;
  /** The model's tool calls, in order (none when absent). */
  toolCalls?: readonly InternalToolCall[];
  /** With `logprobs: true`: the log-probabilities of the reasoning's and the answer's tokens, in order. */
  logprobs?: readonly TokenLogprob[];
  /** The last finish: its usage is the response's (of every choice). */
  finish: Extract<InternalEvent, { type: "finish" }>;
  /** With `n` > 1: each choice, by index (the fields above but `finish` are then unused). */
  choices?: readonly Omit<CompletionResult, "choices">[];
}

/**
 * The `chat.completion` body for a finished generation.
 *
 * Per spec 2.2 the reasoning is visible: when non-empty, `content` is the reasoning between the think tags followed by
 * the answer (`<think>reasoning</think>answer`), exactly what the streamed content concatenates to. Tool calls go in
 * `message.tool_calls`, arguments as JSON strings; `content` is then null when there is no text.
 */
export function chatCompletionResponse(meta: CompletionMeta, result: CompletionResult, thinkTags: ThinkTags = DEFAULT_THINK_TAGS): ChatCompletionBody {
  return {
    id: meta.id,
    object: "chat.completion",
    created: meta.created,
    model: meta.model,
    choices: (result.choices ?? [result]).map((choice, index) => wireChoice(choice, index, thinkTags)),
    usage: wireUsage(result.finish.usage),
  };
}

/** One choice of the body. */
function wireChoice(result: Omit<CompletionResult, "choices">, index: number, thinkTags: ThinkTags): ChatCompletionBody["choices"][number] {
  const text = result.reasoning === "" ? result.text : `${thinkTags.open}${result.reasoning}${thinkTags.close}${result.text}`;
  const toolCalls = result.toolCalls ?? [];
  const message: ChatCompletionBody["choices"][number]["message"] = { role: "assistant", content: text === "" && toolCalls.length > 0 ? null : text, refusal: null };
  if (toolCalls.length > 0) message.tool_calls = toolCalls.map(wireToolCall);
  return {
    index,
    message,
    finish_reason: finishReason(result.finish.reason),
    logprobs: result.logprobs ? { content: wireLogprobs(result.logprobs), refusal: null } : null,
  };
}
