// Turns InternalEvents into chat-completions server-sent events (spec 2.3 and 6.1): a role chunk, content deltas with
// reasoning first between think tags, tool calls as OpenAI streams them (id and name, then argument fragments), a final empty-delta chunk with the
// finish reason, the usage chunk, [DONE].
import type { InternalEvent } from "../../protocol/internal.js";
import { openAiErrorObject } from "./errors.js";
import {
  DEFAULT_THINK_TAGS,
  finishReason,
  wireToolCall,
  wireUsage,
  type ChatCompletionChunkBody,
  type CompletionMeta,
  type OpenAiFinishReason,
  type ThinkTags,
} from "./wire.js";

/** Stream options from the request. */
export interface StreamWriterOptions {
  /** `stream_options.include_usage`: `usage: null` on every chunk, then a usage chunk with `choices: []`. */
  includeUsage: boolean;
  /** The tags that wrap reasoning inside `content`; default `<think>`/`</think>`. */
  thinkTags?: ThinkTags;
}

/** One SSE frame. */
function frame(data: unknown): string {
  return `data: ${JSON.stringify(data)}\n\n`;
}

/**
 * Writes one chat-completions stream: feed it every InternalEvent in order and write what `event` returns.
 *
 * NOTE: reasoning streams inside `content` (spec 2.2: visible reasoning between tags): the open tag prefixes the
 * first thinking delta and the close tag prefixes the first text delta (or its own chunk at finish), so the
 * concatenated content equals the non-streaming response's content.
 */
export class ChatCompletionStreamWriter {
  readonly #meta: CompletionMeta;
  readonly #includeUsage: boolean;
  readonly #thinkTags: ThinkTags;
  #started = false;
  #ended = false;
  #thinkingOpen = false;
  #content = "";
  /** Indexes of the tool calls that streamed (start and fragments), so their final event adds nothing. */
  readonly #streamedCalls = new Set<number>();

  constructor(meta: CompletionMeta, options: StreamWriterOptions) {
    this.#meta = meta;
    this.#includeUsage = options.includeUsage;
    this.#thinkTags = options.thinkTags ?? DEFAULT_THINK_TAGS;
  }

  /** Whether any frame has been produced (before that, the HTTP layer may still answer an error with a status). */
  get started(): boolean {
    return this.#started;
  }

  /** Whether the stream is over (after finish's [DONE], or an error frame); later events produce nothing. */
  get ended(): boolean {
    return this.#ended;
  }

  /** All content streamed so far, think tags included. */
  get completionText(): string {
    return this.#content;
  }

  /** The SSE text to write for one event: zero or more `data: ...\n\n` frames. */
  event(event: InternalEvent): string {
    if (this.#ended) return "";
    switch (event.type) {
      case "start":
        return this.#start();
      case "thinking": {
        if (event.text === "") return this.#start();
        const open = this.#thinkingOpen ? "" : this.#thinkTags.open;
        this.#thinkingOpen = true;
        return this.#start() + this.#contentChunk(open + event.text);
      }
      case "text": {
        if (event.text === "") return this.#start();
        return this.#start() + this.#contentChunk(this.#closeThinking() + event.text);
      }
      case "tool_call_start": {
        // OpenAI's order: the call's id, type and name with empty arguments, then argument fragments.
        this.#streamedCalls.add(event.index);
        return this.#beforeToolCall() + this.#chunk({ tool_calls: [{ index: event.index, id: event.id, type: "function", function: { name: event.name, arguments: "" } }] }, null);
      }
      case "tool_call_delta":
        return this.#chunk({ tool_calls: [{ index: event.index, function: { arguments: event.arguments } }] }, null);
      case "tool_call": {
        if (this.#streamedCalls.has(event.index)) return "";
        // A call that did not stream (written in another layout): one chunk, whole.
        return this.#beforeToolCall() + this.#chunk({ tool_calls: [{ index: event.index, ...wireToolCall(event) }] }, null);
      }
      case "finish": {
        let out = this.#start();
        const close = this.#closeThinking();
        if (close !== "") out += this.#contentChunk(close);
        out += this.#chunk({}, finishReason(event.reason));
        if (this.#includeUsage) out += frame({ ...this.#header(), choices: [], usage: wireUsage(event.usage) });
        this.#ended = true;
        return `${out}data: [DONE]\n\n`;
      }
      case "error":
        // OpenAI streams end an error with the error object and no [DONE].
        this.#ended = true;
        this.#started = true;
        return frame({ error: openAiErrorObject(event.error) });
    }
  }

  /** The role chunk if not sent, and the close tag if reasoning is open: what must precede a tool call. */
  #beforeToolCall(): string {
    let out = this.#start();
    const close = this.#closeThinking();
    if (close !== "") out += this.#contentChunk(close);
    return out;
  }

  /** The role chunk, once. */
  #start(): string {
    if (this.#started) return "";
    this.#started = true;
    return this.#chunk({ role: "assistant", content: "" }, null);
  }

  /** The close tag if reasoning is open (and marks it closed), else "". */
  #closeThinking(): string {
    if (!this.#thinkingOpen) return "";
    this.#thinkingOpen = false;
    return this.#thinkTags.close;
  }

  /** A content delta chunk. */
  #contentChunk(text: string): string {
    this.#content += text;
    return this.#chunk({ content: text }, null);
  }

  #header(): Pick<ChatCompletionChunkBody, "id" | "object" | "created" | "model"> {
    return { id: this.#meta.id, object: "chat.completion.chunk", created: this.#meta.created, model: this.#meta.model };
  }

  #chunk(delta: ChatCompletionChunkBody["choices"][number]["delta"], finish: OpenAiFinishReason | null): string {
    const chunk: ChatCompletionChunkBody = { ...this.#header(), choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }] };
    if (this.#includeUsage) chunk.usage = null;
    return frame(chunk);
  }
}
