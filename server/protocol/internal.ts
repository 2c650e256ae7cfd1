// The one internal request and event type between the wire-format adapters (OpenAI chat completions, Anthropic
// messages) and the serving engine: a superset of both formats (content blocks, thinking, tool calls). Adapters parse
// a wire body into an InternalRequest and turn InternalEvents into a wire response or stream; nothing else in the
// server knows either format, and the engine never sees one.
import type { ChatMessage } from "../../engine/chat/messages.js";
import type { TokenLogprob } from "../../engine/request.js";
import type { PendingImage } from "../images/source.js";

/** Which wire format a request arrived in (for error shapes and metrics only). */
export type WireFormat = "openai" | "anthropic";

/** A tool the model may call: a JSON schema for its arguments. */
export interface ToolDefinition {
  name: string;
  description?: string;
  /** JSON schema of the arguments (OpenAI `function.parameters`, Anthropic `input_schema`). */
  parameters: Record<string, unknown>;
}

/** How the model must use tools: freely, not at all, some tool, or one named tool. */
export type ToolChoice = { type: "auto" } | { type: "none" } | { type: "any" } | { type: "tool"; name: string };

/** A parsed generation request, format-independent. */
export interface InternalRequest {
  format: WireFormat;
  /** The public model slug as the client sent it (already checked against the served models by the adapter). */
  model: string;
  /**
   * The conversation: system messages first, assistant thinking as `reasoning_content`, tool calls as `tool_calls`,
   * tool results as role "tool" messages. Images are rejected by the adapter when the model has no vision; a vision
   * model's are in `images` until they are resolved, then on their messages (`ChatMessage.images`).
   */
  messages: ChatMessage[];
  /**
   * The images of `messages` as parsed, in order, not yet fetched or decoded: server/images/resolve.ts decodes them
   * onto their messages (and removes this) before the request is counted or run.
   */
  images?: PendingImage[];
  tools?: ToolDefinition[];
  toolChoice?: ToolChoice;
  /** false: at most one tool call (OpenAI `parallel_tool_calls`, Anthropic `disable_parallel_tool_use`). */
  parallelToolCalls?: boolean;
  /** OpenAI `response_format` json_object / json_schema: the answer is that JSON (constrained decoding). */
  responseFormat?: { type: "json_object" } | { type: "json_schema"; schema: unknown };
  /** Most tokens to generate; undefined = the server's default. */
  maxTokens?: number;
  sampling: {
    temperature?: number;
    topP?: number;
    topK?: number;
    frequencyPenalty?: number;
    presencePenalty?: number;
    seed?: number;
  };
  /** Stop strings (OpenAI `stop`, Anthropic `stop_sequences`). */
  stop: string[];
  stream: boolean;
  /** OpenAI `stream_options.include_usage`: a final usage chunk. */
  includeUsage: boolean;
  /**
   * Reasoning: OpenAI `chat_template_kwargs.enable_thinking`, Anthropic `thinking.type: enabled` (with its budget);
   * `effort` where the wire format names one (Responses `reasoning.effort`), for templates that take an effort rather
   * than a budget (gpt-oss's `Reasoning: low|medium|high`).
   */
  thinking: { enabled: boolean; budgetTokens?: number; effort?: "low" | "medium" | "high" };
  /** `chat_template_kwargs.enable_auto_compaction` (default true). */
  autoCompaction: boolean;
  /**
   * OpenAI `n`: how many choices to generate for the one prompt (absent: 1). Each runs as its own engine request of
   * one fork group (server/protocol/choices.ts); with a seed, choice i samples with seed + i.
   */
  choices?: number;
  /**
   * Report the generated tokens' log-probabilities with the `top` (0-20) most likely at each position (OpenAI
   * `logprobs`/`top_logprobs`, Responses `include: ["message.output_text.logprobs"]`): they come on `text` and
   * `thinking` events.
   */
  logprobs?: { top: number };
  /** Generate at least this many tokens (vLLM's and llama.cpp's `min_tokens`). */
  minTokens?: number;
  /** Keep generating through end-of-generation tokens (vLLM's `ignore_eos`), up to the token limit. */
  ignoreEndOfGeneration?: boolean;
  /** Anthropic `metadata.user_id`, OpenAI `user`: for logs and accounting only. */
  userId?: string;
  /** OpenAI `prompt_cache_key`: a gateway's routing affinity key (EngineRequest.affinityKey). */
  cacheKey?: string;
  /**
   * Engine request fields the client sent under another of the format's names (OpenAI `max_completion_tokens` for
   * `maxTokens`), so that an error names the field as the client sent it.
   */
  fieldNames?: Record<string, string>;
  /**
   * What a stateful wire format keeps with the request between parsing and answering (the Responses API's items and
   * stored conversation). Opaque outside its adapter; the engine never sees it.
   */
  wireState?: unknown;
}

/** Token counts as both formats report them. */
export interface InternalUsage {
  promptTokens: number;
  /** Prompt tokens served from the cache (prefix plus relocated section). */
  cachedTokens: number;
  completionTokens: number;
  /** Of the completion tokens, those of the reasoning (its tags included); set on a finish when thinking was on. */
  reasoningTokens?: number;
}

/** Why generation ended, format-independent: adapters map it (OpenAI stop/length, Anthropic end_turn/max_tokens/stop_sequence/tool_use). */
export type InternalStopReason = "end_turn" | "max_tokens" | "stop_sequence" | "tool_use";

/** A tool call the model made. */
export interface InternalToolCall {
  /** Format-neutral call id (`call_` and 24 hex digits), used as is: OpenAI `tool_calls[].id`, Anthropic `tool_use.id`. */
  id: string;
  /** The tool's name, as the model wrote it. */
  name: string;
  /**
   * The parsed arguments (Anthropic `input`). When generation stopped inside them, they are read as far as they were
   * written: complete members kept, a partial trailing one dropped, open brackets closed ({} before anything complete),
   * which is what the Anthropic SDK makes of the same JSON streamed (server/protocol/partial-json.ts).
   */
  arguments: Record<string, unknown>;
  /**
   * The arguments' JSON as the model wrote it, when the call streamed or was cut short (OpenAI `arguments`, equal to
   * its streamed fragments joined; incomplete, or "", when cut); absent: OpenAI gets `arguments` serialised.
   */
  argumentsText?: string;
}

/**
 * What the server tells an adapter while a request runs, in order: one `start` (once the prompt is admitted and its
 * cache reuse known), then `thinking` deltas (reasoning, when on) before `text` deltas, then tool calls, then one
 * `finish`; or an `error` at any point (before `start`: the request failed; after: the stream failed). Nothing
 * follows an aborted request's last event. NOTE: whole and streamed responses are both built in this order, so they
 * have the same blocks in the same order.
 *
 * A tool call is one complete `tool_call`, preceded (when it streamed as it was generated) by a `tool_call_start`
 * with its id and name and `tool_call_delta`s with fragments of its arguments' JSON. Streaming adapters send the
 * start and fragments as they come and close the call at `tool_call`; others use `tool_call` alone.
 *
 * The finish reason is "tool_use" when there were tool calls, each with its arguments whole; otherwise the reason
 * generation stopped. NOTE: template markup (think tags, tool-call tags, a call's JSON) never reaches `thinking` or
 * `text`, wherever generation stopped. Cut short (by the token limit, "max_tokens", or a stop sequence,
 * "stop_sequence"), a call whose name was written is still a `tool_call`, with its arguments as far as written (see
 * InternalToolCall), and one cut before its name is dropped; the finish keeps the reason that cut it.
 *
 * With InternalRequest.logprobs, `thinking` and `text` events carry the log-probabilities of the generated tokens
 * whose text they bring, in order (server/protocol/logprobs.ts says which tokens count): a token whose text a reader
 * held back comes with the next event that has text; the tokens of tool calls and of markup the readers drop come
 * with none.
 *
 * With several choices, each choice's events come in this order among themselves (its `finish` included), tagged with
 * `choice`, interleaved as they are generated, after one `start`; a last untagged `finish` ends the request.
 */
export type InternalEvent = (
  | { type: "start"; usage: InternalUsage }
  | { type: "thinking"; text: string; logprobs?: TokenLogprob[] }
  | { type: "text"; text: string; logprobs?: TokenLogprob[] }
  | { type: "tool_call_start"; index: number; id: string; name: string }
  | { type: "tool_call_delta"; index: number; arguments: string }
  | ({ type: "tool_call"; index: number } & InternalToolCall)
  | { type: "finish"; reason: InternalStopReason; stopSequence?: string; usage: InternalUsage }
  | { type: "error"; error: ProtocolError }
) & {
  /**
   * With InternalRequest.choices > 1 (server/protocol/choices.ts): the index of the choice an event belongs to, on
   * every event but the one `start`, an `error` and the last `finish` (which sums the choices' usage).
   */
  choice?: number;
};

/** Error kinds, with the HTTP status each maps to in both formats. */
export const ERROR_STATUS = {
  invalid_request: 400,
  authentication: 401,
  permission: 403,
  not_found: 404,
  /** The route exists, for other methods. */
  method_not_allowed: 405,
  /** The body did not arrive in time. */
  request_timeout: 408,
  request_too_large: 413,
  /** The request's headers are larger than the server serves. */
  headers_too_large: 431,
  /** A per-key or per-organization limit. */
  rate_limit: 429,
  /**
   * A prepaid organization's credit balance cannot pay for the request. OpenAI clients get 429 `insufficient_quota`,
   * Anthropic's a 400 `invalid_request_error` (as each vendor answers a spent balance).
   */
  insufficient_quota: 429,
  /** Something the server depends on (the platform's database) could not answer: 502. */
  bad_gateway: 502,
  internal: 500,
  /** The request's framing uses an HTTP feature the server does not implement (a transfer coding other than chunked). */
  not_implemented: 501,
  /** The server as a whole is at capacity (queue or body budget full); OpenAI clients get 503, Anthropic's 529. */
  overloaded: 529,
} as const;

export type ProtocolErrorKind = keyof typeof ERROR_STATUS;

/** A client-visible failure: its kind (hence status), a message naming what to fix, and the field at fault if any. */
export class ProtocolError extends Error {
  override readonly name = "ProtocolError";
  constructor(
    readonly kind: ProtocolErrorKind,
    message: string,
    /** The request field at fault, dotted (`messages[2].content`), when there is one. */
    readonly param?: string,
    /** Seconds a client should wait before retrying (rate limits, overload). */
    readonly retryAfterSeconds?: number,
    /** Machine-readable details a format's error body carries (Anthropic `error.details`, e.g. an `error_code`). */
    readonly details?: Record<string, unknown>,
  ) {
    super(message);
  }

  /**
   * Headers the error response carries besides the format's own (rate-limit headers on a 429). Set by whoever refuses
   * the request; the HTTP layer adds them.
   */
  responseHeaders?: Record<string, string>;

  get status(): number {
    return ERROR_STATUS[this.kind];
  }
}

/** What an adapter needs to know about the served models when it parses a request. */
export interface ServedModels {
  /** The slugs a format accepts, for `model` checks and 404s. */
  slugs(format: WireFormat): readonly string[];
  /**
   * The other names a format accepts (a model's own name, `default`), each with the slug it stands for; absent: none.
   * A request naming one is parsed as if it named that slug.
   */
  aliases?(format: WireFormat): ReadonlyMap<string, string>;
  /** Whether the model behind a slug (of `format`, when given) takes images. */
  hasVision(slug: string, format?: WireFormat): boolean;
  /**
   * Whether the model behind a slug can reason (engine ModelInfo.reasons): false refuses a reasoning effort; undefined
   * (or absent): not known, accepted.
   */
  canReason?(slug: string, format?: WireFormat): boolean | undefined;
}

/** The slug a request's `model` stands for in a format (itself, or an alias's slug); undefined when not served. */
export function servedSlug(models: ServedModels, name: string, format: WireFormat): string | undefined {
  return models.slugs(format).includes(name) ? name : models.aliases?.(format).get(name);
}

/** Every name a format accepts, slugs first then aliases, for messages saying what is served. */
export function servedNames(models: ServedModels, format: WireFormat): string[] {
  return [...models.slugs(format), ...(models.aliases?.(format).keys() ?? [])];
}
