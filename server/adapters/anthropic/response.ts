// A finished generation -> the Anthropic messages response body (non-streaming), and the usage mapping that the
// stream shares.
import type { InternalEvent, InternalStopReason, InternalToolCall, InternalUsage } from "../../protocol/internal.js";
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
export type AnthropicContentBlock =
  | { type: "thinking"; thinking: string; signature: string }
  | { type: "text"; text: string }
  | { type: "tool_use"; id: string; name: string; input: Record<string, unknown> };

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

/** A whole generation: the thinking and text, concatenated, the tool calls, and the finish event. */
export interface MessageResult {
  thinking: string;
  text: string;
  /** The model's tool calls, in order (none when absent). */
  toolCalls?: readonly InternalToolCall[];
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

/** A tool call as a `tool_use` block: the call's id as is, its arguments as `input`. */
export function toolUseBlock(call: InternalToolCall): Extract<AnthropicContentBlock, { type: "tool_use" }> {
  return { type: "tool_use", id: call.id, name: call.name, input: call.arguments };
}

/**
 * The non-streaming response body: a signed thinking block when there was thinking, then the text block, then a
 * tool_use block per tool call. An empty text block is left out when there was thinking or a tool call (as Anthropic
 * does); an otherwise empty response still has one (empty) text block.
 */
export function messagesResponse(meta: MessageMeta, result: MessageResult, signer: ThinkingSigner): AnthropicMessage {
  const content: AnthropicContentBlock[] = [];
  if (result.thinking.length > 0) content.push({ type: "thinking", thinking: result.thinking, signature: signer.sign(result.thinking) });
  const toolCalls = result.toolCalls ?? [];
  if (result.text.length > 0 || (content.length === 0 && toolCalls.length === 0)) content.push({ type: "text", text: result.text });
  for (const call of toolCalls) content.push(toolUseBlock(call));
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
