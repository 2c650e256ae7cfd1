// The legacy completions response body (`object: "text_completion"`): every choice, by index, with its text, logprobs
// and finish reason, and the usage of the whole request.
import type { InternalUsage } from "../../protocol/internal.js";
import type { ResponseMeta } from "../../http/endpoint.js";
import type { LegacyLogprobs } from "./logprobs.js";

/** Why a choice ended, as the legacy API says it. */
export type CompletionFinishReason = "stop" | "length";

/** One choice as collected whole. */
export interface CollectedCompletionChoice {
  text: string;
  logprobs?: LegacyLogprobs;
  finishReason: CompletionFinishReason;
}

/** The legacy API's usage object (with chat completions' cached-token details). */
export function completionUsage(usage: InternalUsage): Record<string, unknown> {
  return {
    prompt_tokens: usage.promptTokens,
    completion_tokens: usage.completionTokens,
    total_tokens: usage.promptTokens + usage.completionTokens,
    prompt_tokens_details: { cached_tokens: usage.cachedTokens },
  };
}

/** The whole response. `choices` are in index order. */
export function completionResponse(meta: ResponseMeta, choices: readonly CollectedCompletionChoice[], usage: InternalUsage): Record<string, unknown> {
  return {
    id: meta.id,
    object: "text_completion",
    created: meta.created,
    model: meta.model,
    system_fingerprint: null,
    choices: choices.map((choice, index) => ({ index, text: choice.text, logprobs: choice.logprobs ?? null, finish_reason: choice.finishReason })),
    usage: completionUsage(usage),
  };
}
