// Turns InternalEvents into chat-completions server-sent events (spec 2.3 and 6.1): a role chunk, content deltas with
// reasoning first between think tags, tool calls as OpenAI streams them (id and name, then argument fragments), a final empty-delta chunk with the
// finish reason, the usage chunk, [DONE].
import type { TokenLogprob } from "../../../engine/request.js";
import type { InternalEvent } from "../../protocol/internal.js";
import { wireLogprobs } from "./logprobs.js";
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
  /** `n`: how many choices the events carry (default 1); with more, each event but the last finish names its choice. */
  choices?: number;
  /** `logprobs: true`: content chunks carry their tokens' log-probabilities (`logprobs.content`), others null. */
  logprobs?: boolean;
}

/** One SSE frame. */
function frame(data: unknown): string {
  return `data: ${JSON.stringify(data)}\n\n`;
}

/** What the stream keeps per choice. */
interface ChoiceState {
  started: boolean;
  thinkingOpen: boolean;
  /** Indexes of the tool calls that streamed (start and fragments), so their final event adds nothing. */
  streamedCalls: Set<number>;
}

/**
 * Writes one chat-completions stream: feed it every InternalEvent in order and write what `event` returns.
 *
 * NOTE: reasoning streams inside `content` (spec 2.2: visible reasoning between tags): the open tag prefixes the
 * first thinking delta and the close tag prefixes the first text delta (or its own chunk at finish), so the
 * concatenated content equals the non-streaming response's content. With several choices, each chunk carries one
 * choice (its `index`), chunks of different choices interleave as they are generated, each choice ends with its own
 * finish chunk, and the usage chunk (of every choice) comes once at the end.
 */
export class ChatCompletionStreamWriter {
  readonly #meta: CompletionMeta;
  readonly #includeUsage: boolean;
  readonly #thinkTags: ThinkTags;
  readonly #choiceCount: number;
  readonly #logprobs: boolean;
  readonly #choices = new Map<number, ChoiceState>();
  #started = false;
  #ended = false;
  /** Choice 0's content so far. */
  #content = "";

  constructor(meta: CompletionMeta, options: StreamWriterOptions) {
    this.#meta = meta;
    this.#includeUsage = options.includeUsage;
    this.#thinkTags = options.thinkTags ?? DEFAULT_THINK_TAGS;
    this.#choiceCount = options.choices ?? 1;
    this.#logprobs = options.logprobs ?? false;
  }

  /** Whether any frame has been produced (before that, the HTTP layer may still answer an error with a status). */
  get started(): boolean {
    return this.#started;
  }

  /** Whether the stream is over (after finish's [DONE], or an error frame); later events produce nothing. */
  get ended(): boolean {
    return this.#ended;
  }

  /** All content of choice 0 streamed so far, think tags included. */
  get completionText(): string {
    return this.#content;
  }

  /** The SSE text to write for one event: zero or more `data: ...\n\n` frames. */
  event(event: InternalEvent): string {
    if (this.#ended) return "";
    const index = event.choice ?? 0;
    switch (event.type) {
      case "start": {
        let out = "";
        for (let choice = 0; choice < this.#choiceCount; choice++) out += this.#start(choice);
        return out;
      }
      case "thinking": {
        if (event.text === "") return this.#start(index);
        const state = this.#state(index);
        const open = state.thinkingOpen ? "" : this.#thinkTags.open;
        state.thinkingOpen = true;
        return this.#start(index) + this.#contentChunk(index, open + event.text, event.logprobs);
      }
      case "text": {
        if (event.text === "") return this.#start(index);
        return this.#start(index) + this.#contentChunk(index, this.#closeThinking(index) + event.text, event.logprobs);
      }
      case "tool_call_start": {
        // OpenAI's order: the call's id, type and name with empty arguments, then argument fragments.
        this.#state(index).streamedCalls.add(event.index);
        return this.#beforeToolCall(index) + this.#chunk(index, { tool_calls: [{ index: event.index, id: event.id, type: "function", function: { name: event.name, arguments: "" } }] }, null);
      }
      case "tool_call_delta":
        return this.#chunk(index, { tool_calls: [{ index: event.index, function: { arguments: event.arguments } }] }, null);
      case "tool_call": {
        if (this.#state(index).streamedCalls.has(event.index)) return "";
        // A call that did not stream (written in another layout): one chunk, whole.
        return this.#beforeToolCall(index) + this.#chunk(index, { tool_calls: [{ index: event.index, ...wireToolCall(event) }] }, null);
      }
      case "finish": {
        // With several choices, a choice's finish closes that choice; the last (untagged) one ends the stream.
        const endsChoice = this.#choiceCount === 1 || event.choice !== undefined;
        const endsStream = this.#choiceCount === 1 || event.choice === undefined;
        let out = "";
        if (endsChoice) {
          out += this.#start(index);
          const close = this.#closeThinking(index);
          if (close !== "") out += this.#contentChunk(index, close, undefined);
          out += this.#chunk(index, {}, finishReason(event.reason));
        }
        if (!endsStream) return out;
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

  #state(index: number): ChoiceState {
    let state = this.#choices.get(index);
    if (!state) this.#choices.set(index, (state = { started: false, thinkingOpen: false, streamedCalls: new Set() }));
    return state;
  }

  /** The role chunk if not sent, and the close tag if reasoning is open: what must precede a tool call. */
  #beforeToolCall(index: number): string {
    let out = this.#start(index);
    const close = this.#closeThinking(index);
    if (close !== "") out += this.#contentChunk(index, close, undefined);
    return out;
  }

  /** A choice's role chunk, once. */
  #start(index: number): string {
    const state = this.#state(index);
    if (state.started) return "";
    state.started = true;
    this.#started = true;
    return this.#chunk(index, { role: "assistant", content: "" }, null);
  }

  /** The close tag if the choice's reasoning is open (and marks it closed), else "". */
  #closeThinking(index: number): string {
    const state = this.#state(index);
    if (!state.thinkingOpen) return "";
    state.thinkingOpen = false;
    return this.#thinkTags.close;
  }

  /** A content delta chunk, with the log-probabilities of the tokens it brings when they were asked for. */
  #contentChunk(index: number, text: string, logprobs: readonly TokenLogprob[] | undefined): string {
    if (index === 0) this.#content += text;
    return this.#chunk(index, { content: text }, null, logprobs);
  }

  #header(): Pick<ChatCompletionChunkBody, "id" | "object" | "created" | "model"> {
    return { id: this.#meta.id, object: "chat.completion.chunk", created: this.#meta.created, model: this.#meta.model };
  }

  #chunk(index: number, delta: ChatCompletionChunkBody["choices"][number]["delta"], finish: OpenAiFinishReason | null, logprobs?: readonly TokenLogprob[]): string {
    const wired = this.#logprobs && delta.content !== undefined && delta.role === undefined ? { content: wireLogprobs(logprobs ?? []), refusal: null } : null;
    const chunk: ChatCompletionChunkBody = { ...this.#header(), choices: [{ index, delta, logprobs: wired, finish_reason: finish }] };
    if (this.#includeUsage) chunk.usage = null;
    return frame(chunk);
  }
}
