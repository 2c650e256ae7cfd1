// The OpenAI chat-completions response shapes this adapter writes, and the mappings the whole response and the stream
// share: finish reasons, usage, tool calls, and the think tags that wrap visible reasoning inside `content` (spec 2.2).
import type { InternalStopReason, InternalToolCall, InternalUsage } from "../../protocol/internal.js";
import type { OpenAiTokenLogprob } from "./logprobs.js";

/** What identifies one completion on the wire: the same on every chunk of a stream. */
export interface CompletionMeta {
  /** Completion id, e.g. `chatcmpl-...`. */
  id: string;
  /** The model slug the client asked for. */
  model: string;
  /** Unix time in seconds. */
  created: number;
}

// The tag pair that delimits reasoning inside `content` is the one the server splits output at.
export { DEFAULT_THINK_TAGS, type ThinkTags } from "../../protocol/think-splitter.js";

/** OpenAI finish reasons this server produces. */
export type OpenAiFinishReason = "stop" | "length" | "tool_calls";

/** OpenAI `usage`. */
export interface OpenAiUsage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  prompt_tokens_details: { cached_tokens: number };
}

/** An assistant tool call: arguments as a JSON string. */
export interface OpenAiToolCall {
  id: string;
  type: "function";
  function: { name: string; arguments: string };
}

/**
 * A tool-call chunk item: the first for a call carries its id, type and name (arguments ""), later ones only
 * `index` and an arguments fragment, as OpenAI streams them.
 */
export interface OpenAiToolCallDelta {
  index: number;
  id?: string;
  type?: "function";
  function: { name?: string; arguments: string };
}

/**
 * A choice's `logprobs` (with `logprobs: true`): its content tokens', in order (reasoning included, since it is
 * content here; tool calls' tokens not); null on a chunk without content.
 */
export interface OpenAiChoiceLogprobs {
  content: OpenAiTokenLogprob[] | null;
  refusal: null;
}

/** A `chat.completion` response body. */
export interface ChatCompletionBody {
  id: string;
  object: "chat.completion";
  created: number;
  model: string;
  choices: Array<{
    index: number;
    /** `content` is null when the model only called tools; `tool_calls` is present only when it called some. */
    message: { role: "assistant"; content: string | null; refusal: null; tool_calls?: OpenAiToolCall[] };
    finish_reason: OpenAiFinishReason;
    logprobs: OpenAiChoiceLogprobs | null;
  }>;
  usage: OpenAiUsage;
}

/** A `chat.completion.chunk` stream frame's body. */
export interface ChatCompletionChunkBody {
  id: string;
  object: "chat.completion.chunk";
  created: number;
  model: string;
  /** One choice; empty on the usage chunk. */
  choices: Array<{
    index: number;
    delta: { role?: "assistant"; content?: string; tool_calls?: OpenAiToolCallDelta[] };
    logprobs: OpenAiChoiceLogprobs | null;
    finish_reason: OpenAiFinishReason | null;
  }>;
  /** Present only with `include_usage`: null except on the usage chunk. */
  usage?: OpenAiUsage | null;
}

/** Maps the internal stop reason: natural end and stop strings -> "stop", token limit -> "length", tool call -> "tool_calls". */
export function finishReason(reason: InternalStopReason): OpenAiFinishReason {
  switch (reason) {
    case "end_turn":
    case "stop_sequence":
      return "stop";
    case "max_tokens":
      return "length";
    case "tool_use":
      return "tool_calls";
  }
}

/** Maps internal usage to OpenAI's, total included. */
export function wireUsage(usage: InternalUsage): OpenAiUsage {
  return {
    prompt_tokens: usage.promptTokens,
    completion_tokens: usage.completionTokens,
    total_tokens: usage.promptTokens + usage.completionTokens,
    prompt_tokens_details: { cached_tokens: usage.cachedTokens },
  };
}

/** An internal tool call on the wire: same id, arguments serialised to a JSON string. */
export function wireToolCall(call: InternalToolCall): OpenAiToolCall {
  return { id: call.id, type: "function", function: { name: call.name, arguments: call.argumentsText ?? JSON.stringify(call.arguments) } };
}
