// The serving engine's request and event types: plain data, the one internal shape the server's wire-format
// adapters translate to and from.
import type { ChatMessage } from "./chat/messages.js";
import type { CompactionResult } from "./compaction/index.js";
import type { ConstraintSpec } from "./grammar/answer.js";
import type { SamplingParams } from "./sample/params.js";
import type { PrefixCacheChange } from "./kv/prefix-index.js";

/** What to continue: a conversation rendered with the model's chat template, raw text, or token ids. */
export type EngineInput =
  | {
      messages: ChatMessage[];
      /** Tool definitions passed to the chat template. */
      tools?: unknown[];
      /** Extra chat-template variables, e.g. `{ enable_thinking: true }`. */
      templateKwargs?: Record<string, unknown>;
    }
  | { text: string }
  | { tokens: number[] };

/** One generation request. */
export interface EngineRequest {
  /** Unique id (default: generated); abort(id) and every event refer to it. */
  id?: string;
  input: EngineInput;
  /**
   * Most tokens to generate. A number must fit: a prompt that leaves less room in the context fails the request with
   * an error naming both counts (as OpenAI, vLLM and Anthropic answer). "context": until the context is full (a
   * server's default when the client sets no limit). Absent: 256, or what the context leaves if that is less.
   */
  maxTokens?: number | "context";
  /** A number `maxTokens` larger than what the context leaves generates until the context is full, without an error. */
  maxTokensUpToContext?: boolean;
  sampling?: Partial<SamplingParams>;
  /** Strings that end generation; not included in the output (at most 16). */
  stop?: string[];
  /**
   * Texts that end generation as an end-of-generation token does: not included in the output, and the finish names no
   * stop sequence (at most 16). Messages rendered with the default chat template add its turn markers themselves;
   * callers that render a prompt elsewhere pass them here (`loom generate --chat`).
   */
  endOfTurn?: readonly string[];
  /** Priority class: smaller is served first (default 0); FCFS within a class. */
  priority?: number;
  /**
   * Requests with the same key go to the same worker of a gateway while it is connected and has room, so that the
   * prefix they share is cached there (OpenAI's `prompt_cache_key`; server/cluster/affinity.ts). Routing only: an
   * engine ignores it.
   */
  affinityKey?: string;
  /** Compact long conversations (messages input only) to fit the working-memory budget (default true). */
  enableAutoCompaction?: boolean;
  /** Keep generating through end-of-generation tokens (benchmarks). */
  ignoreEndOfGeneration?: boolean;
  /**
   * Caps reasoning: once `tokens` tokens were generated inside the think tags (output that opens with `open`, or a
   * prompt that ends with it), the engine writes `close` itself and the answer follows (Anthropic `budget_tokens`).
   */
  thinkingBudget?: { tokens: number; open?: string; close?: string };
  /**
   * Constrains the output to a grammar (engine/grammar): a JSON object, a JSON Schema document, or tool calls, after
   * free reasoning when `thinking` is set. Only tokens that keep the output a valid prefix are sampled, and generation
   * stops once the output is complete.
   */
  constraint?: ConstraintSpec;
  /**
   * Report the log-probabilities of generated tokens: each token's, and the `top` (0-20) most likely tokens at its
   * position. Computed from the model's logits as they come out of the model, before any sampling transform
   * (penalties, temperature, truncation, a grammar's mask, minTokens' mask), as OpenAI and vLLM report them. They
   * arrive on the `text` events (the tokens each completes) and whole on `finish`. Tokens the engine writes itself
   * (the thinking budget's close tag) were drawn from no distribution: logprob 0, no `top`. Such a request is sampled
   * on the host (a GPU runner reads its logits back rather than sampling on the device).
   */
  logprobs?: { top: number };
  /**
   * Report the prompt tokens' log-probabilities, each given the tokens before it (the first token has none), with the
   * `top` (0-20) most likely at each position (legacy completions' `echo`, scoring). Needs logits for every prompt
   * row, so the prompt is computed in full (no KV reuse from the prefix cache); they arrive on one `prompt_logprobs`
   * event before any `text`. Its prompt runs in chunks of at most 64 rows (each row's logits are reduced to the
   * logprobs at once). With it, `maxTokens` may be 0: the prompt is scored, and the request finishes (reason
   * `length`) with no token. Refused for a prompt with images (their placeholder tokens have no log-probability).
   */
  promptLogprobs?: { top: number };
  /**
   * Generate at least this many tokens (vLLM's and llama.cpp's `min_tokens`): before then, end-of-generation tokens
   * are never sampled and stop sequences do not end generation (one that completes in a later token's text still
   * does). At most maxTokens. A grammar (constraint) that completes its output earlier ends generation regardless.
   * Default 0.
   */
  minTokens?: number;
  /**
   * This request is one of `size` choices of one client request (OpenAI `n`), submitted together with the same
   * `group`, input and settings but its own id and seed: the engine computes their prompt once and forks its KV into
   * each (the full blocks shared, the last partial block copied), so n choices cost one prefill.
   * The first member to arrive leads and starts at once; the others wait only for its prompt, then fork all of it but
   * the last token, which each computes itself (one row), so that each member's tokens equal those of the same seeded
   * request alone. A member's usage reports the forked tokens as `reusedPrefixTokens`; stats count them in
   * `tokens.forkedPrompt`. Nothing waits for members that never come, and a member that is aborted, fails or is
   * preempted leaves the others running. `size`: 2 to MAX_FORKS (16, engine/sched/fork-groups.ts); the members of a
   * group must have the same prompt. A request with `promptLogprobs` computes its whole prompt and never forks; it may
   * lead its group, whose other members then fork the prompt it computed: the n choices of a scoring request (legacy
   * completions' `echo`) cost one prefill when only the first member asks for promptLogprobs.
   */
  fork?: { group: string; size: number };
}

/** A token's log-probability (natural log) and the most likely tokens at its position. */
export interface TokenLogprob {
  token: number;
  logprob: number;
  /**
   * The token's own piece as bytes (the tokenizer's `tokenBytes`: a partial UTF-8 sequence stays partial), so that a
   * server without the tokenizer (a worker thread, a gateway) can name it on the wire (OpenAI's `token` and `bytes`).
   * Set by the serving engine; optional only for engines that report no pieces.
   */
  bytes?: number[];
  /** The most likely tokens at this position, most likely first (lower id first on ties); as many as asked. */
  top: { token: number; logprob: number; bytes?: number[] }[];
}

/** Why a request ended. `length`: maxTokens, the context, or the KV budget was reached. */
export type EngineFinishReason = "stop" | "length" | "aborted";

/** Token counts of a request. */
export interface EngineUsage {
  promptTokens: number;
  /** Prompt tokens whose KV came from the cache in place (prefix hit). */
  reusedPrefixTokens: number;
  /** Prompt tokens whose KV was relocated from after a pruned span (section hit). */
  reusedSuffixTokens: number;
  completionTokens: number;
}

/** Timings of a request, in seconds. */
export interface EngineTimings {
  /** From submit to the first generated token. */
  timeToFirstToken: number;
  /** From submit to the end. */
  total: number;
  /** Decode tokens per second after the first token (0 with fewer than two tokens). */
  decodeTokensPerSecond: number;
}

/**
 * Events of one request, in order: `start` (accepted), `admitted` (first scheduled: its cache reuse is known),
 * zero or more `text`, then one `finish` or one `error` (an error or abort can also come before `admitted`).
 */
export type EngineEvent =
  | {
      type: "start";
      requestId: string;
      promptTokens: number;
      /** What auto compaction pruned, when it ran. */
      compaction?: CompactionResult;
    }
  | { type: "admitted"; requestId: string; promptTokens: number; reusedPrefixTokens: number; reusedSuffixTokens: number }
  /** `tokens`: generated tokens this text completes (0 or more: text can wait for the tokens after it). */
  | {
      type: "text";
      requestId: string;
      text: string;
      tokens?: number;
      /** With EngineRequest.logprobs: those of the `tokens` generated tokens this text completes, in order. */
      logprobs?: TokenLogprob[];
    }
  /**
   * With EngineRequest.promptLogprobs, once, after `admitted` and before any `text`: one entry per prompt token, null
   * for the first (nothing precedes it).
   */
  | { type: "prompt_logprobs"; requestId: string; logprobs: (TokenLogprob | null)[] }
  | {
      type: "finish";
      requestId: string;
      reason: EngineFinishReason;
      /** The stop string that ended generation, if one did. */
      stopSequence?: string;
      /** Every generated token id, including one that ended generation. */
      tokens: number[];
      /** With EngineRequest.logprobs: one per token of `tokens`, in order. */
      logprobs?: TokenLogprob[];
      /** With a constraint: whether the constrained output is complete (false when maxTokens cut it short). */
      constraintComplete?: boolean;
      usage: EngineUsage;
      timings: EngineTimings;
      seed: number;
    }
  | { type: "error"; requestId: string; error: EngineError };

/** Error kinds: the request itself is invalid, can never fit, or the engine failed while running it. */
export type EngineErrorKind = "invalid_request" | "too_long" | "internal";

/** A request that failed; `field` names the request field at fault when there is one. */
export class EngineError extends Error {
  override readonly name = "EngineError";
  constructor(readonly kind: EngineErrorKind, message: string, readonly field?: string, options?: ErrorOptions) {
    super(message, options);
  }
}

/** A snapshot of the engine's load and cache effectiveness. */
export interface EngineStats {
  running: number;
  waiting: number;
  kvBlocks: {
    total: number;
    /** Held by running requests. */
    used: number;
    /** Cached but unreferenced: evictable on demand. */
    cached: number;
    free: number;
    blockSize: number;
  };
  /** Over every admission so far. */
  cache: {
    lookups: number;
    /** Lookups that reused a prefix / a section. */
    prefixHits: number;
    sectionHits: number;
    /** Fractions of lookups that reused a prefix / a section. */
    prefixHitRate: number;
    sectionHitRate: number;
    /** Fraction of prompt tokens reused in place / relocated. */
    prefixTokenRate: number;
    sectionTokenRate: number;
  };
  /** Totals since start. */
  requests: { finished: number; aborted: number; failed: number; preemptions: number };
  /** `forkedPrompt`: prompt tokens a forked choice (EngineRequest.fork) took from its group's one prefill. */
  tokens: { prompt: number; computedPrompt: number; generated: number; forkedPrompt: number };
}

/**
 * Prefix-cache chains (block-hash.ts) an engine added and removed since its last report, sent after each step that
 * changed any; `reset`: the cache was emptied first (a restarted engine thread starts with nothing cached).
 */
export interface PrefixCacheUpdate extends PrefixCacheChange {
  reset?: true;
}

/** Every chain an engine has cached now, and its block size (what a router needs to hash prompts the same way). */
export interface PrefixCacheSnapshot {
  blockSize: number;
  hashes: string[];
}
