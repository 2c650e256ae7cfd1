// Builds the non-streaming chat-completions response (spec 2.2) from a finished generation.
import type { InternalEvent, InternalToolCall } from "../../protocol/internal.js";
import { DEFAULT_THINK_TAGS, finishReason, wireToolCall, wireUsage, type ChatCompletionBody, type CompletionMeta, type ThinkTags } from "./wire.js";

/** A finished generation: its reasoning (empty when thinking was off), its answer, its tool calls, and the finish event. */
export interface CompletionResult {
  reasoning: string;
  text: string;
  /** The model's tool calls, in order (none when absent). */
  toolCalls?: readonly InternalToolCall[];
  finish: Extract<InternalEvent, { type: "finish" }>;
}

/**
 * The `chat.completion` body for a finished generation.
 *
 * Per spec 2.2 the reasoning is visible: when non-empty, `content` is the reasoning between the think tags followed by
 * the answer (`<think>reasoning</think>answer`), exactly what the streamed content concatenates to. Tool calls go in
 * `message.tool_calls`, arguments as JSON strings; `content` is then null when there is no text.
 */
export function chatCompletionResponse(meta: CompletionMeta, result: CompletionResult, thinkTags: ThinkTags = DEFAULT_THINK_TAGS): ChatCompletionBody {
  const text = result.reasoning === "" ? result.text : `${thinkTags.open}${result.reasoning}${thinkTags.close}${result.text}`;
  const toolCalls = result.toolCalls ?? [];
  const message: ChatCompletionBody["choices"][number]["message"] = { role: "assistant", content: text === "" && toolCalls.length > 0 ? null : text, refusal: null };
  if (toolCalls.length > 0) message.tool_calls = toolCalls.map(wireToolCall);
  return {
    id: meta.id,
    object: "chat.completion",
    created: meta.created,
    model: meta.model,
    choices: [
      {
        index: 0,
        message,
        finish_reason: finishReason(result.finish.reason),
        logprobs: null,
      },
    ],
    usage: wireUsage(result.finish.usage),
  };
}
