// A finished generation -> the Anthropic messages response body (non-streaming), and the usage mapping that the
// stream shares.
import type { InternalEvent, InternalStopReason, InternalUsage } from "../../protocol/internal.js";
import type { ThinkingSigner } from "./thinking-signature.js";

/** Anthropic's usage object. */
export interface AnthropicUsage {
  /** Prompt tokens NOT read from the cache: Anthropic counts cached input apart, total input = the sum of all three. */
  input_tokens: number;
  output_tokens: number;
  /** Prompt tokens read from the cache. */
  cache_read_input_tokens: number;
  /** Always 0: this server caches prompts on its own, nothing is written at a client's request (or billed so). */
  cache_creation_input_tokens: number;
}

/** A response content block this server produces. */
export type AnthropicContentBlock = { type: "thinking"; thinking: string; signature: string } | { type: "text"; text: string };

/** The Anthropic messages response body. */
export interface AnthropicMessage {
  id: string;
  type: "message";
  role: "assistant";
  model: string;
  content: AnthropicContentBlock[];
  stop_reason: InternalStopReason | null;
  stop_sequence: string | null;
  usage: AnthropicUsage;
}

/** What the server knows about the response before generating: its id and the model slug the client asked for. */
export interface MessageMeta {
  id: string;
  model: string;
}

/** A whole generation: the thinking and text, concatenated, and the finish event. */
export interface MessageResult {
  thinking: string;
  text: string;
  finish: Extract<InternalEvent, { type: "finish" }>;
}

/**
 * Maps internal usage to Anthropic's. NOTE Anthropic's `input_tokens` excludes cached tokens: it is
 * promptTokens - cachedTokens, and `cache_read_input_tokens` is cachedTokens.
 */
export function anthropicUsage(usage: InternalUsage): AnthropicUsage {
  const cached = Math.min(usage.cachedTokens, usage.promptTokens);
  return {
    input_tokens: usage.promptTokens - cached,
    output_tokens: usage.completionTokens,
    cache_read_input_tokens: cached,
    cache_creation_input_tokens: 0,
  };
}

/**
 * The non-streaming response body: a signed thinking block when there was thinking, then the text block. The text
 * block is left out only when there was thinking and no text (a response cut off while thinking), as Anthropic does;
 * an empty response still has one (empty) text block.
 */
export function messagesResponse(meta: MessageMeta, result: MessageResult, signer: ThinkingSigner): AnthropicMessage {
  const content: AnthropicContentBlock[] = [];
  if (result.thinking.length > 0) content.push({ type: "thinking", thinking: result.thinking, signature: signer.sign(result.thinking) });
  if (result.text.length > 0 || content.length === 0) content.push({ type: "text", text: result.text });
  return {
    id: meta.id,
    type: "message",
    role: "assistant",
    model: meta.model,
    content,
    stop_reason: result.finish.reason,
    stop_sequence: result.finish.stopSequence ?? null,
    usage: anthropicUsage(result.finish.usage),
  };
}
