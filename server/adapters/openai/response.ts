// Builds the non-streaming chat-completions response (spec 2.2) from a finished generation.
import type { InternalEvent } from "../../protocol/internal.js";
import { DEFAULT_THINK_TAGS, finishReason, wireUsage, type ChatCompletionBody, type CompletionMeta, type ThinkTags } from "./wire.js";

/** A finished generation: its reasoning (empty when thinking was off), its answer, and the finish event. */
export interface CompletionResult {
  reasoning: string;
  text: string;
  finish: Extract<InternalEvent, { type: "finish" }>;
}

/**
 * The `chat.completion` body for a finished generation.
 *
 * Per spec 2.2 the reasoning is visible: when non-empty, `content` is the reasoning between the think tags followed by
 * the answer (`<think>reasoning</think>answer`), exactly what the streamed content concatenates to.
 */
export function chatCompletionResponse(meta: CompletionMeta, result: CompletionResult, thinkTags: ThinkTags = DEFAULT_THINK_TAGS): ChatCompletionBody {
  const content = result.reasoning === "" ? result.text : `${thinkTags.open}${result.reasoning}${thinkTags.close}${result.text}`;
  return {
    id: meta.id,
    object: "chat.completion",
    created: meta.created,
    model: meta.model,
    choices: [
      {
        index: 0,
        message: { role: "assistant", content, refusal: null },
        finish_reason: finishReason(result.finish.reason),
        logprobs: null,
      },
    ],
    usage: wireUsage(result.finish.usage),
  };
}
