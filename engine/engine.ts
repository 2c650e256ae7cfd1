// The serving engine: many concurrent requests share one model through continuous batching. Its step loop is
// schedule -> run adopted KV copies -> one forward pass for every scheduled chunk -> sample -> emit events.
// Requests join and leave between steps; the event loop runs between steps, so aborts land within one step. A
// runner whose forward pass is asynchronous (a GPU) leaves the event loop free during the step: aborts and close()
// that arrive then are applied once the step completes, so no block is freed under a running pass.
import { ActiveRequest, type RequestImage, promptOpens } from "./active-request.js";
import { type CompactionOptions, DEFAULT_COMPACTION_OPTIONS, resolveCompactionOptions } from "./compaction/index.js";
import { EventChannel } from "./event-channel.js";
import { EmbeddingJob, EmbeddingSequence } from "./embed/embedding-job.js";
import { embeddingKvSpace } from "./embed/kv-space.js";
import { RowPool } from "./embed/pooling.js";
import { type EmbeddingModel, type EmbeddingRequest, type EmbeddingResult, prepareEmbeddingInputs } from "./embed/request.js";
import { EmptyGrammarError } from "./grammar/automaton.js";
import { ConstraintCache } from "./grammar/constraint-cache.js";
import { ConstraintViolationError, type TokenConstraint } from "./grammar/constraint.js";
import { SchemaError } from "./grammar/schema/errors.js";
import { tokenTrie } from "./grammar/token-trie.js";
import { KvCacheManager, type KvCacheOptions } from "./kv/kv-cache.js";
import type { LoadedModel } from "./load.js";
import { type PreparedPrompt, type PromptModel, type PromptSettings, prepareRequestPrompt } from "./prompt.js";
import { type DetokenizeRequest, type Detokenized, type TokenizeRequest, detokenizeWith, tokenizeWith } from "./tokenize.js";
import { EngineError, type EngineEvent, type EngineFinishReason, type EngineRequest, type EngineStats, type PrefixCacheSnapshot, type PrefixCacheUpdate } from "./request.js";
import { SamplingParamError, StopSequenceError } from "./sample/errors.js";
import { Sampler, checkDeviceToken } from "./sample/sampler.js";
import { TopLogprobsError, checkTopLogprobs } from "./sample/logprobs.js";
import type { ChunkMedia, SampledForward, SequenceChunk } from "./backends/runner.js";
import { GEMMA3_IMAGE_MARKERS as IMAGE_MARKERS } from "./vision/clip-config.js";
import { kvSpaceOf } from "./sched/kv-space.js";
import { ForkGroups, checkFork, forkingKvSpace } from "./sched/fork-groups.js";
import { Scheduler, type StepPlan, decodingCount } from "./sched/scheduler.js";
import { StepPacer } from "./sched/step-pacer.js";

/** Engine settings; the defaults suit a single-user local server and scale with the loaded model's limits. */
export interface EngineOptions {
  /** Tokens computed per step over all requests (default: the runner's batch size). */
  maxStepTokens?: number;
  /** Requests per step (default: the runner's sequence limit). */
  maxSequences?: number;
  /**
   * While interactive requests (priority 0) were seen in the last few seconds, steps hold only as many background
   * requests (priority above 0: agent runs) as decode in about this many milliseconds (default 20; 0: no limit), so
   * an interactive request arriving mid-step waits little for background work. The cost per sequence is learned from
   * the steps run: on a GPU, where batching is nearly free, the limit rarely binds.
   */
  backgroundStepMs?: number;
  /** Prefix and section caching (default: both on, section threshold 8 tokens). */
  cache?: KvCacheOptions;
  /**
   * Auto compaction (engine/compaction/README.md): the prompt's working-memory budget in tokens (default: three
   * quarters of the context, leaving a quarter for the reply) and its windows. NOTE: the budget is fixed per engine,
   * not per request: compaction is monotone across a conversation's turns only under one budget.
   */
  compaction?: { workingMemoryTokens?: number; toolResultWindow?: number; keepRecentMessages?: number };
  /**
   * While requests decode, the longest a step should take in milliseconds (default 200): a long prompt's prefill is
   * cut into chunks that fit, so other streams get a token at least that often. 0: every step takes a full batch.
   */
  stepTargetMs?: number;
}

/** Default of {@link EngineOptions.backgroundStepMs}. */
export const DEFAULT_BACKGROUND_STEP_MS = 20;

/** How long after the last interactive request background work stays limited (EngineOptions.backgroundStepMs). */
const INTERACTIVE_WINDOW_MS = 5000;

/** Default of {@link EngineOptions.stepTargetMs}. */
export const DEFAULT_STEP_TARGET_MS = 200;

/** A submitted request's event stream, with its id. */
export interface EngineStream extends AsyncIterable<EngineEvent> {
  readonly id: string;
}

/**
 * What a server needs of an engine, wherever it runs: the in-process {@link Engine}, or one on its own thread
 * (engine/host/worker-engine.ts) so that forward passes never block the server's event loop.
 */
export interface ServingEngine {
  /**
   * Queues a request; its events end with one `finish` or one `error`. Leaving the iteration aborts it.
   * `prepared`: the request's prompt as this engine's {@link prepareAhead} gave it for this request, so that it is not
   * prepared again (a WorkerEngine ignores one it did not prepare, or prepared with limits it no longer has).
   */
  submit(request: EngineRequest, prepared?: PreparedPrompt): EngineStream;
  /**
   * The prompt `request` would run with (rendered, compacted and tokenized as submit would), prepared off the caller's
   * thread, to count it and then hand it to submit: prepared once. Undefined when this engine cannot prepare prompts
   * apart from submit. @throws EngineError as submit would report the prompt.
   */
  prepareAhead?(request: EngineRequest): Promise<PreparedPrompt | undefined>;
  /** Stops a request; false when no such request is running. */
  abort(id: string): boolean;
  /** Requests waiting to be admitted (cheap: read per request for admission control). */
  readonly queueDepth: number;
  /** Load and cache effectiveness now. */
  stats(): EngineStats | Promise<EngineStats>;
  /**
   * The prompt tokens `request` would run with (rendered, compacted and tokenized as submit would), without running
   * it. @throws EngineError as submit would report it (a prompt over the context is "too_long").
   */
  countTokens(request: EngineRequest): number | Promise<number>;
  /**
   * Embeds each input with the model's pooling (engine/embed): one L2-normed vector per input. Rejects with an
   * EngineError naming the field at fault; a model whose GGUF declares no pooling refuses every request. Optional: an
   * engine without it serves no embeddings.
   */
  embed?(request: EmbeddingRequest): Promise<EmbeddingResult>;
  /**
   * The token ids of a text, or of a conversation rendered as submit renders it (POST /tokenize).
   * @throws EngineError naming the field at fault ("too_long" past the context, or past MAX_TOKENIZE_TOKENS of engine/tokenize.ts).
   */
  tokenize(request: TokenizeRequest): number[] | Promise<number[]>;
  /** Token ids back to text, and each token's bytes when asked (POST /detokenize). @throws EngineError naming a bad id. */
  detokenize(request: DetokenizeRequest): Detokenized | Promise<Detokenized>;
  /** Set once the engine refuses every request (its thread died and could not be restarted): the cause. */
  readonly unavailable?: Error;
  /**
   * Calls `listener` after each step that changed the prefix cache, with what changed (a router mirroring the cache:
   * a gateway). Returns the unsubscribe function.
   */
  onPrefixCacheChange?(listener: (update: PrefixCacheUpdate) => void): () => void;
  /** Every chain cached now: with the updates that follow it, an exact picture of the cache. */
  prefixCacheSnapshot?(): PrefixCacheSnapshot | Promise<PrefixCacheSnapshot>;
}

const DEFAULT_MAX_TOKENS = 256;
const MAX_STOP_SEQUENCES = 16;

/** The request's reasoning cap with default tags, checked. */
function thinkingBudgetOf(request: EngineRequest): { tokens: number; open: string; close: string } | undefined {
  const budget = request.thinkingBudget;
  if (budget === undefined) return undefined;
  if (!Number.isSafeInteger(budget.tokens) || budget.tokens < 1) {
    throw new EngineError("invalid_request", `thinkingBudget.tokens must be a positive integer, got ${JSON.stringify(budget.tokens)}`, "thinkingBudget.tokens");
  }
  return { tokens: budget.tokens, open: budget.open ?? "<think>", close: budget.close ?? "</think>" };
}

/** The request's logprobs and promptLogprobs options, checked. */
function logprobOptionsOf(request: EngineRequest): { logprobs?: { top: number }; promptLogprobs?: { top: number } } {
  try {
    return { logprobs: checkTopLogprobs(request.logprobs, "logprobs"), promptLogprobs: checkTopLogprobs(request.promptLogprobs, "promptLogprobs") };
  } catch (error) {
    if (error instanceof TopLogprobsError) throw new EngineError("invalid_request", error.message, error.field, { cause: error });
    throw error;
  }
}

/** Serves generation requests on one loaded model. */
export class Engine implements ServingEngine {
  private readonly kv: KvCacheManager;
  private readonly scheduler: Scheduler<ActiveRequest>;
  private readonly requests = new Map<string, ActiveRequest>();
  /** Embedding requests in flight, by id (their inputs run as EmbeddingSequences among `requests`). */
  private readonly embeddingJobs = new Map<string, EmbeddingJob>();
  /** Members of fork groups (EngineRequest.fork) alive here; those held wait for their leader's prompt. */
  private readonly forks = new ForkGroups<ActiveRequest>();
  private readonly compaction: CompactionOptions;
  private arrivals = 0;
  private stepping = false;
  /** A step's forward pass is running asynchronously; aborts wait for it. */
  private stepInFlight = false;
  /** Resolves the step that waits for images to be encoded, while one does. */
  private waitingForImages: (() => void) | undefined;
  private readonly deferredAborts = new Set<string>();
  private readonly cacheListeners = new Set<(update: PrefixCacheUpdate) => void>();
  private closed = false;
  private readonly totals = { finished: 0, aborted: 0, failed: 0, preemptions: 0, prompt: 0, computedPrompt: 0, generated: 0, forkedPrompt: 0 };
  private readonly constraints: ConstraintCache;
  private readonly pacer: StepPacer;
  private readonly backgroundStepMs: number;
  /** When the last interactive (priority 0) request was submitted. */
  private lastInteractiveAt = Number.NEGATIVE_INFINITY;

  constructor(readonly model: LoadedModel, options: EngineOptions = {}) {
    this.constraints = new ConstraintCache(model.tokenizer, model.config.vocab_size);
    this.kv = new KvCacheManager(model.kvPool, options.cache, model.localKv);
    this.scheduler = new Scheduler(embeddingKvSpace(forkingKvSpace(kvSpaceOf<ActiveRequest>(this.kv), this.kv)), {
      maxStepTokens: options.maxStepTokens ?? model.runner.options.maxBatchTokens,
      maxSequences: options.maxSequences ?? model.runner.options.maxSequences,
    });
    if (this.scheduler.limits.maxStepTokens > model.runner.options.maxBatchTokens) {
      throw new RangeError(`maxStepTokens ${this.scheduler.limits.maxStepTokens} exceeds the runner's batch size ${model.runner.options.maxBatchTokens}`);
    }
    if (this.scheduler.limits.maxSequences > model.runner.options.maxSequences) {
      throw new RangeError(`maxSequences ${this.scheduler.limits.maxSequences} exceeds the runner's ${model.runner.options.maxSequences}`);
    }
    this.pacer = new StepPacer({ targetMs: options.stepTargetMs ?? DEFAULT_STEP_TARGET_MS, maxTokens: this.scheduler.limits.maxStepTokens });
    this.backgroundStepMs = options.backgroundStepMs ?? DEFAULT_BACKGROUND_STEP_MS;
    if (!Number.isFinite(this.backgroundStepMs) || this.backgroundStepMs < 0) throw new RangeError(`backgroundStepMs must be a number >= 0, got ${options.backgroundStepMs}`);
    this.compaction = resolveCompactionOptions({
      ...DEFAULT_COMPACTION_OPTIONS,
      budgetTokens: options.compaction?.workingMemoryTokens ?? Math.floor(model.contextSize * 0.75),
      toolResultWindow: options.compaction?.toolResultWindow ?? DEFAULT_COMPACTION_OPTIONS.toolResultWindow,
      keepRecentMessages: options.compaction?.keepRecentMessages ?? DEFAULT_COMPACTION_OPTIONS.keepRecentMessages,
    });
  }

  /**
   * Queues a request and returns its events. A request that is invalid or can never fit yields one `error` event.
   * Breaking out of the iteration aborts the request.
   * @param prepared the request's prompt, prepared on another thread with this engine's {@link promptSettings}
   *   (a WorkerEngine's prompt thread): used instead of preparing `request.input` here.
   */
  submit(request: EngineRequest, prepared?: PreparedPrompt): EngineStream {
    const id = request.id ?? `req-${++this.arrivals}-${Date.now().toString(36)}`;
    const channel = new EventChannel<EngineEvent>(() => this.abort(id));
    const stream = { id, [Symbol.asyncIterator]: () => channel[Symbol.asyncIterator]() };
    try {
      if (this.closed) throw new EngineError("internal", "the engine is closed");
      if (this.requests.has(id)) throw new EngineError("invalid_request", `a request with id ${id} is already running`, "id");
      const active = this.accept(id, request, channel, prepared);
      this.requests.set(id, active);
      const fork = checkFork(request.fork);
      if (!fork || this.forks.join(active, fork, active.tokens)) this.scheduler.add(active);
      this.wake();
      this.interruptWait();
    } catch (error) {
      const engineError = error instanceof EngineError ? error : new EngineError("internal", (error as Error).message, undefined, { cause: error });
      channel.push({ type: "error", requestId: id, error: engineError });
      channel.close();
    }
    return stream;
  }

  /**
   * Embeds each input (see ServingEngine.embed): every input is a sequence of the step loop, computed like a prompt
   * (KV blocks allocated, then released), whose chunks bring back their final-normed hidden states for the pooling.
   */
  embed(request: EmbeddingRequest): Promise<EmbeddingResult> {
    try {
      if (this.closed) throw new EngineError("internal", "the engine is closed");
      const id = request?.id ?? `embd-${++this.arrivals}-${Date.now().toString(36)}`;
      if (this.requests.has(id) || this.embeddingJobs.has(id)) throw new EngineError("invalid_request", `a request with id ${id} is already running`, "id");
      const priority = request.priority ?? 0;
      if (!Number.isSafeInteger(priority)) throw new EngineError("invalid_request", `priority must be an integer, got ${JSON.stringify(request.priority)}`, "priority");
      const { tokens, dimensions, pooling } = prepareEmbeddingInputs(this.embeddingModel(), request);
      const job = new EmbeddingJob(id, tokens, dimensions, pooling, () => {
        this.embeddingJobs.delete(id);
        // A failed input fails the request: its other inputs stop (after the step that may be iterating them).
        setImmediate(() => { for (const sequence of job.sequences) this.abort(sequence.id); });
      });
      if (priority <= 0) this.lastInteractiveAt = performance.now();
      tokens.forEach((input, i) => {
        job.sequences.push(new EmbeddingSequence(job, i, new RowPool(pooling, input.length, this.model.config.hidden_size), {
          id: `${id}/input-${i}`, priority, arrival: ++this.arrivals, tokens: input, tokenizer: this.model.tokenizer,
        }));
      });
      this.embeddingJobs.set(id, job);
      for (const sequence of job.sequences) {
        this.requests.set(sequence.id, sequence);
        this.scheduler.add(sequence);
        this.totals.prompt += sequence.promptLength;
      }
      this.wake();
      this.interruptWait();
      return job.result;
    } catch (error) {
      return Promise.reject(error instanceof EngineError ? error : new EngineError("internal", (error as Error).message, undefined, { cause: error }));
    }
  }

  /** What checking an embedding request needs of the loaded model. */
  private embeddingModel(): EmbeddingModel {
    const { tokenizer, config, kvPool } = this.model;
    return {
      pooling: this.model.pooling, name: this.model.config.name ?? this.model.path, hiddenSize: config.hidden_size, vocabSize: config.vocab_size,
      maxInputTokens: Math.min(this.model.contextSize, kvPool.capacity * kvPool.blockSize),
      // As llama.cpp tokenizes embedding inputs: BOS/EOS where the model asks for them, special tokens' text parsed.
      tokenize: (text, maxTokens) => tokenizer.encode(text, { addSpecial: true, parseSpecial: true, maxTokens }),
    };
  }

  /** Stops a request: its KV blocks are freed at once and it ends with finish reason `aborted`. */
  abort(id: string): boolean {
    const job = this.embeddingJobs.get(id);
    if (job) {
      job.fail(new EngineError("internal", `embedding request ${id} was aborted`));
      for (const sequence of job.sequences) this.abort(sequence.id);
      return true;
    }
    const request = this.requests.get(id);
    if (!request) return false;
    if (this.stepInFlight) {
      this.deferredAborts.add(id);
      this.interruptWait();
      return true;
    }
    this.finish(request, request.finishText("aborted"));
    return true;
  }

  /** Requests waiting to be admitted (cheap, for per-request admission control; stats() walks the cache). */
  get queueDepth(): number {
    return this.scheduler.waiting.length + this.forks.heldCount;
  }

  /** Load and cache effectiveness now. */
  stats(): EngineStats {
    const pool = this.model.kvPool;
    const cached = this.kv.index.evictableCount;
    const c = this.kv.counters;
    const rate = (part: number, whole: number) => (whole > 0 ? part / whole : 0);
    return {
      running: this.scheduler.running.length,
      waiting: this.scheduler.waiting.length + this.forks.heldCount,
      kvBlocks: { total: pool.capacity, used: pool.capacity - pool.freeCount - cached, cached, free: pool.freeCount, blockSize: pool.blockSize },
      cache: {
        lookups: c.lookups,
        prefixHits: c.prefixHits,
        sectionHits: c.sectionHits,
        prefixHitRate: rate(c.prefixHits, c.lookups),
        sectionHitRate: rate(c.sectionHits, c.lookups),
        prefixTokenRate: rate(c.prefixTokens, c.promptTokens),
        sectionTokenRate: rate(c.suffixTokens, c.promptTokens),
      },
      requests: { finished: this.totals.finished, aborted: this.totals.aborted, failed: this.totals.failed, preemptions: this.totals.preemptions },
      tokens: { prompt: this.totals.prompt, computedPrompt: this.totals.computedPrompt, generated: this.totals.generated, forkedPrompt: this.totals.forkedPrompt },
    };
  }

  countTokens(request: EngineRequest): number {
    if (typeof request !== "object" || request === null) throw new EngineError("invalid_request", "the request must be an object");
    return this.preparePrompt(request).tokens.length;
  }

  tokenize(request: TokenizeRequest): number[] {
    return tokenizeWith(this.promptModel(), request, this.promptSettings);
  }

  detokenize(request: DetokenizeRequest): Detokenized {
    return detokenizeWith(this.promptModel(), request);
  }

  /** What preparing a prompt needs of this engine: its prompt limit and compaction (another thread may prepare). */
  get promptSettings(): PromptSettings {
    const kvPositions = this.model.kvPool.capacity * this.model.kvPool.blockSize;
    return { limit: Math.min(this.model.contextSize, kvPositions) - 1, compaction: this.compaction };
  }

  /** The request's prompt, rendered, compacted and tokenized; it must leave room for one generated token. */
  private preparePrompt(request: EngineRequest): PreparedPrompt {
    return prepareRequestPrompt(this.promptModel(), request, this.promptSettings);
  }

  /** What rendering and tokenizing prompts needs of the loaded model. */
  private promptModel(): PromptModel {
    const vision = this.model.vision;
    return {
      tokenizer: this.model.tokenizer, chatTemplate: this.model.chatTemplate, vocabSize: this.model.config.vocab_size,
      ...(vision ? { vision: { tokensPerImage: vision.config.tokensPerImage, ...IMAGE_MARKERS } } : {}),
    };
  }

  /**
   * Aborts everything, returns the prefix cache's blocks to the model's pool and refuses new requests (the model
   * itself is disposed by its owner, and another engine can use it).
   */
  close(): void {
    this.closed = true;
    for (const id of [...this.requests.keys()]) this.abort(id);
    if (!this.stepInFlight) this.kv.index.clear(); // else once the step completes
  }

  /** Validates a request and builds its state; throws EngineError. */
  private accept(id: string, request: EngineRequest, channel: EventChannel<EngineEvent>, prepared?: PreparedPrompt): ActiveRequest {
    if (typeof request !== "object" || request === null) throw new EngineError("invalid_request", "the request must be an object");
    const maxTokens = request.maxTokens ?? DEFAULT_MAX_TOKENS;
    const { logprobs, promptLogprobs } = logprobOptionsOf(request);
    // maxTokens 0 scores the prompt only: it needs promptLogprobs to have anything to report.
    const scoresOnly = maxTokens === 0 && promptLogprobs !== undefined;
    if (maxTokens !== "context" && (!Number.isSafeInteger(maxTokens) || maxTokens < 1) && !scoresOnly) {
      throw new EngineError("invalid_request", `maxTokens must be a positive integer or "context", got ${JSON.stringify(request.maxTokens)}`, "maxTokens");
    }
    const priority = request.priority ?? 0;
    if (!Number.isSafeInteger(priority)) throw new EngineError("invalid_request", `priority must be an integer, got ${JSON.stringify(request.priority)}`, "priority");
    const stop = request.stop ?? [];
    if (!Array.isArray(stop) || stop.length > MAX_STOP_SEQUENCES) throw new EngineError("invalid_request", `stop must be an array of at most ${MAX_STOP_SEQUENCES} strings`, "stop");
    const endOfTurn = request.endOfTurn ?? [];
    if (!Array.isArray(endOfTurn) || endOfTurn.length > MAX_STOP_SEQUENCES || !endOfTurn.every((text) => typeof text === "string" && text !== "")) {
      throw new EngineError("invalid_request", `endOfTurn must be an array of at most ${MAX_STOP_SEQUENCES} non-empty strings`, "endOfTurn");
    }
    let sampler: Sampler;
    try {
      sampler = new Sampler({ ...request.sampling });
    } catch (error) {
      if (error instanceof SamplingParamError) throw new EngineError("invalid_request", error.message, `sampling.${error.field}`, { cause: error });
      throw error;
    }
    const contextSize = this.model.contextSize;
    const prompt = prepared ?? this.preparePrompt(request);
    const tokens = prompt.tokens;
    const fork = checkFork(request.fork);
    if (fork) this.forks.check(fork, tokens);
    // The members of a fork group have one prompt, hence the same images (their tokens come from the pixels): they
    // share the first member's encodes instead of encoding each image n times.
    const peerImages = fork ? this.forks.memberOf(fork.group)?.images : undefined;
    const room = contextSize - tokens.length;
    if (typeof maxTokens === "number" && request.maxTokens !== undefined && maxTokens > room && !request.maxTokensUpToContext) {
      throw new EngineError(
        "invalid_request",
        `maxTokens is ${maxTokens}, but the prompt has ${tokens.length} tokens and the context holds ${contextSize}: at most ${room} tokens can be generated`,
        "maxTokens",
      );
    }
    const minTokens = request.minTokens ?? 0;
    if (!Number.isSafeInteger(minTokens) || minTokens < 0 || minTokens > (maxTokens === "context" ? room : maxTokens)) {
      throw new EngineError("invalid_request", `minTokens must be an integer from 0 to maxTokens (${maxTokens === "context" ? room : maxTokens}), got ${JSON.stringify(request.minTokens)}`, "minTokens");
    }
    if (promptLogprobs && prompt.images?.length) {
      throw new EngineError("invalid_request", "promptLogprobs cannot be reported for a prompt with images (an image's placeholder tokens have no log-probability)", "promptLogprobs");
    }
    const constraint = this.constraintOf(request, tokens);
    if (priority <= 0) this.lastInteractiveAt = performance.now();
    let active: ActiveRequest;
    try {
      active = new ActiveRequest({
        id, priority, arrival: ++this.arrivals, promptTokens: tokens, maxTokens: maxTokens === "context" ? room : Math.min(maxTokens, room), stop,
        endOfTurn: [...endOfTurn, ...(prompt.endOfTurn ?? [])],
        ignoreEndOfGeneration: request.ignoreEndOfGeneration ?? false, sampler, tokenizer: this.model.tokenizer, channel,
        thinkingBudget: thinkingBudgetOf(request), constraint, images: peerImages?.length ? peerImages : this.imagesOf(prompt), logprobs, promptLogprobs, minTokens,
      });
    } catch (error) {
      if (error instanceof StopSequenceError) throw new EngineError("invalid_request", error.message, `stop[${error.index}]`, { cause: error });
      throw error;
    }
    channel.push({ type: "start", requestId: id, promptTokens: tokens.length, compaction: prompt.compaction });
    this.totals.prompt += tokens.length;
    if (!peerImages?.length) this.startEncoding(active);
    return active;
  }

  /** The prompt's images with their token spans, checked to fit one step each (an image's tokens run together). */
  private imagesOf(prompt: PreparedPrompt): RequestImage[] | undefined {
    if (!prompt.images?.length) return undefined;
    const vision = this.model.vision;
    if (!vision) throw new EngineError("invalid_request", "this model does not take images (it was loaded without a vision projector: --mmproj)", "input.messages");
    const count = vision.config.tokensPerImage;
    if (count > this.scheduler.limits.maxStepTokens) {
      throw new EngineError("invalid_request", `an image takes ${count} tokens in one step, more than this engine's ${this.scheduler.limits.maxStepTokens} tokens a step (raise the batch size)`, "input.messages");
    }
    return prompt.images.map(({ start, image }) => ({ start, end: start + count, image }));
  }

  /**
   * Builds what requests need first, so that the first one does not wait for it: the vocabulary trie of constrained
   * requests (about a second for a 151k vocabulary on a slow core) and the tokenizer's token-length bound for prompt
   * limits (tens of milliseconds). Optional: done on first use otherwise.
   */
  prepare(): void {
    tokenTrie(this.model.tokenizer, this.model.config.vocab_size);
    this.model.tokenizer.longestPieceBytes();
  }

  /**
   * The request's constraint, compiled (or from the cache) and started; EngineError for a bad schema. Reasoning must
   * open with its tag unless the prompt already did.
   */
  private constraintOf(request: EngineRequest, prompt: readonly number[]): TokenConstraint | undefined {
    let spec = request.constraint;
    if (spec === undefined) return undefined;
    const open = spec.thinking?.open;
    if (open !== undefined && promptOpens(this.model.tokenizer, prompt, open)) {
      spec = { ...spec, thinking: { close: spec.thinking!.close } };
    }
    try {
      return this.constraints.get(spec).start();
    } catch (error) {
      if (error instanceof SchemaError || error instanceof EmptyGrammarError) throw new EngineError("invalid_request", error.message, "constraint", { cause: error });
      throw error;
    }
  }

  /** The most background requests in the next step (see EngineOptions.backgroundStepMs). */
  private backgroundLimit(): number {
    const max = this.scheduler.limits.maxSequences;
    if (this.backgroundStepMs === 0 || performance.now() - this.lastInteractiveAt > INTERACTIVE_WINDOW_MS) return max;
    return this.pacer.sequencesWithin(this.backgroundStepMs, max);
  }

  /** Starts the step loop if it is not running. */
  private wake(): void {
    if (this.stepping) return;
    this.stepping = true;
    setImmediate(() => this.loop());
  }

  private loop(): void {
    let pending: Promise<void> | undefined;
    const startedAt = performance.now();
    const decoding = decodingCount(this.scheduler.running);
    let planned = 0;
    try {
      this.failImagelessRequests();
      const plan = this.scheduler.schedule(this.pacer.budget(decoding), this.backgroundLimit());
      planned = plan.chunks.reduce((sum, chunk) => sum + chunk.count, 0);
      pending = this.step(plan);
    } catch (error) {
      this.failRunning(error);
    }
    const measure = () => {
      if (planned > 0) this.pacer.record(planned, Math.min(decoding, planned), performance.now() - startedAt);
    };
    if (!pending) {
      measure();
      this.afterStep();
      return;
    }
    this.stepInFlight = true;
    pending.catch((error: unknown) => this.failRunning(error)).finally(() => {
      measure();
      this.stepInFlight = false;
      for (const id of this.deferredAborts) this.abort(id);
      this.deferredAborts.clear();
      if (this.closed) this.kv.index.clear();
      this.afterStep();
    });
  }

  /** Subscribes to the prefix cache's changes (see ServingEngine). */
  onPrefixCacheChange(listener: (update: PrefixCacheUpdate) => void): () => void {
    this.cacheListeners.add(listener);
    return () => this.cacheListeners.delete(listener);
  }

  prefixCacheSnapshot(): PrefixCacheSnapshot {
    return { blockSize: this.model.kvPool.blockSize, hashes: this.kv.index.hashes() };
  }

  /** Tells the cache's listeners what the step changed (nothing when nobody listens or nothing changed). */
  private reportCacheChanges(): void {
    const update = this.kv.index.takeChanges();
    if (this.cacheListeners.size === 0 || (update.added.length === 0 && update.removed.length === 0)) return;
    for (const listener of this.cacheListeners) listener(update);
  }

  private afterStep(): void {
    this.reportCacheChanges();
    if (this.requests.size > 0) {
      setImmediate(() => this.loop());
      return;
    }
    this.stepping = false;
  }

  /** One planned step's forward pass; a promise while an asynchronous forward pass runs. */
  private step(plan: StepPlan<ActiveRequest>): Promise<void> | undefined {
    this.totals.preemptions += plan.preempted.length;
    for (const request of plan.exhausted) {
      // A request whose prompt log-probabilities are not all known cannot end with a partial answer as generation can.
      if (request.allRowLogits) this.fail(request, new EngineError("too_long", `the KV cache cannot hold request ${request.id}'s ${request.promptLength}-token prompt, so its log-probabilities cannot all be computed`, "input"));
      else this.finish(request, request.finishText("length"));
    }
    if (plan.chunks.length === 0) {
      // Requests waiting only for their images: the loop resumes when one is encoded, or a request comes or goes.
      const encoding = this.requestsEncoding();
      if (encoding.length > 0) return Promise.race([...encoding, new Promise<void>((resolve) => (this.waitingForImages = resolve))]);
      this.failUnschedulable(plan);
      return undefined;
    }
    for (const request of plan.admitted) {
      // Usage reports what the prompt reused when first admitted; a preempted request's recompute is counted too.
      if (!request.reuse && request.adoption) {
        request.reuse = request.adoption;
        const { prefixTokens, suffixTokens } = request.reuse;
        request.channel.push({ type: "admitted", requestId: request.id, promptTokens: request.promptLength, reusedPrefixTokens: prefixTokens, reusedSuffixTokens: suffixTokens });
      }
      if (request.adoption) this.kv.recordAdmission(request.tokens.length, request.adoption);
      this.totals.forkedPrompt += request.adoption?.forkedTokens ?? 0;
      request.forkSource = undefined;
      const { copies, done } = this.kv.takeCopies(request.kv);
      try {
        const localKv = this.model.localKv;
        this.model.runner.copyKv(copies, request.kv.blocks, localKv && ((block) => localKv.slot(block)));
      } finally {
        done();
      }
    }
    const runner = this.model.runner;
    const chunks: SequenceChunk[] = plan.chunks.map(({ request, start, count }) => {
      const samples = start + count === request.tokens.length;
      // Prompt log-probabilities need every row's logits, and the next token is then sampled here from the last row.
      const allRowLogits = request.allRowLogits;
      // Where the runner samples on the device, the token's draw is taken now and its token comes back, not logits.
      const deviceSampling = samples && !allRowLogits && runner.forwardSampled ? request.deviceSampling() : undefined;
      const media = this.chunkMedia(request, start, count);
      return {
        tokens: request.tokens.slice(start, start + count), startPosition: start, blockTable: request.kv.blocks, localBlockTable: this.kv.localTable(request.kv),
        wantLogits: samples || allRowLogits, deviceSampling, ...(allRowLogits ? { allRowLogits } : {}), ...(media ? { media } : {}),
      };
    });
    this.markEmbeddingChunks(plan, chunks);
    if (runner.forwardSampled) return runner.forwardSampled(chunks).then((output) => this.sample(plan, chunks, output));
    const logits = runner.forward(chunks);
    if (logits instanceof Promise) return logits.then((values) => this.sample(plan, chunks, { tokens: new Int32Array(0), logits: values, logSumExps: runner.logitLogSumExps }));
    this.sample(plan, chunks, { tokens: new Int32Array(0), logits, logSumExps: runner.logitLogSumExps });
    return undefined;
  }

  /**
   * An embedding input's chunks sample nothing: they bring back their rows' hidden states where its pooling reads
   * them (every row for mean pooling, the first for CLS, the last for last-token pooling), and no logits.
   */
  private markEmbeddingChunks(plan: StepPlan<ActiveRequest>, chunks: SequenceChunk[]): void {
    plan.chunks.forEach(({ request, start, count }, i) => {
      if (!(request instanceof EmbeddingSequence)) return;
      chunks[i].wantLogits = false;
      chunks[i].deviceSampling = undefined;
      chunks[i].wantHidden = request.wantsHidden(start, count);
    });
  }

  /**
   * Starts encoding a request's images: at once on this thread for an encoder that answers synchronously, else on
   * the encoder's own thread or device while steps go on (the scheduler holds the request before an image until its
   * embeddings arrive). A failed image fails its request at the next step, and no other.
   */
  private startEncoding(request: ActiveRequest): void {
    for (const image of request.images) {
      const embeddings = this.model.vision!.encode(image.image);
      if (!(embeddings instanceof Promise)) {
        image.embeddings = embeddings;
        continue;
      }
      image.encoding = embeddings.then(
        (rows) => void (image.embeddings = rows),
        (error: unknown) => void (image.failure = error instanceof Error ? error : new Error(String(error))),
      ).finally(() => {
        image.encoding = undefined;
        this.wake();
      });
    }
  }

  /** Ends a step that only waits for images (a request came or was aborted: the next step may run it). */
  private interruptWait(): void {
    this.waitingForImages?.();
    this.waitingForImages = undefined;
  }

  /** The encodes that requests wait for. */
  private requestsEncoding(): Promise<void>[] {
    return [...this.requests.values()].flatMap((request) => request.images.flatMap((image) => (image.encoding ? [image.encoding] : [])));
  }

  /** Fails the requests whose image could not be encoded (before a step is planned: they are in none). */
  private failImagelessRequests(): void {
    for (const request of [...this.requests.values()]) {
      const failed = request.images.find((image) => image.failure);
      if (!failed) continue;
      this.fail(request, new EngineError("internal", `the image at prompt token ${failed.start} could not be encoded: ${failed.failure!.message}`, "input.messages", { cause: failed.failure }));
    }
  }

  /**
   * The image rows of a request's chunk [start, start + count): each image's embeddings (encoded since the request was
   * accepted, kept until it ends) for the part of its tokens in the chunk. The scheduler keeps an image's uncomputed tokens
   * in one chunk, so every row sees its whole image.
   */
  private chunkMedia(request: ActiveRequest, start: number, count: number): ChunkMedia[] | undefined {
    const d = this.model.config.hidden_size;
    const media: ChunkMedia[] = [];
    for (const image of request.images) {
      const from = Math.max(image.start, start);
      const to = Math.min(image.end, start + count);
      if (from >= to) continue;
      media.push({ offset: from - start, embeddings: image.embeddings!.subarray((from - image.start) * d, (to - image.start) * d), keyEnd: image.end });
    }
    return media.length > 0 ? media : undefined;
  }

  /**
   * After a forward pass: commits the computed KV, takes the next token of every chunk that wanted one (sampled here
   * from its logits, or on the device), finishes requests.
   */
  private sample(plan: StepPlan<ActiveRequest>, chunks: readonly SequenceChunk[], output: SampledForward): void {
    const vocab = this.model.config.vocab_size;
    let outputIndex = 0;
    let logitsRow = 0;
    let hiddenRow = 0;
    plan.chunks.forEach(({ request, start, count }, i) => {
      request.computed += count;
      this.totals.computedPrompt += Math.max(0, Math.min(start + count, request.promptLength) - start);
      this.kv.commit(request.kv, request.tokens, request.computed);
      this.kv.trim(request.kv, request.computed);
      this.start(this.forks.progressed(request));
      const chunk = chunks[i];
      if (request instanceof EmbeddingSequence) {
        if (!chunk.wantHidden) return;
        const d = this.model.config.hidden_size;
        const rows = this.model.runner.hiddenStates.subarray(hiddenRow * d, (hiddenRow + count) * d);
        hiddenRow += count;
        if (request.takeHidden(start, rows)) this.finish(request, { finished: true, reason: "stop" });
        return;
      }
      if (!chunk.wantLogits) return;
      let next: Float32Array | number;
      if (chunk.allRowLogits) {
        // Every row came back: the prompt's log-probabilities, then the last row samples (when it is the last token).
        request.takePromptRows(output.logits.subarray(logitsRow * vocab, (logitsRow + count) * vocab), start, count, vocab, output.logSumExps?.subarray(logitsRow, logitsRow + count));
        logitsRow += count;
        next = output.logits.subarray((logitsRow - 1) * vocab, logitsRow * vocab);
      } else if (chunk.deviceSampling) next = checkDeviceToken(output.tokens[outputIndex], vocab);
      else next = output.logits.subarray(logitsRow * vocab, ++logitsRow * vocab);
      outputIndex++;
      if (start + count < request.tokens.length) return; // a prompt chunk whose rows were only for log-probabilities
      if (request.scoresOnly) {
        this.finish(request, request.finishText("length"));
        return;
      }
      let outcome: ReturnType<ActiveRequest["accept"]>;
      try {
        outcome = request.accept(next, this.model.contextSize);
      } catch (error) {
        // Sampling or a constraint that fails (a mask that allows no token, NaN logits, forced reasoning-close tokens
        // the constraint refuses) ends that request only: the others in the batch go on.
        const what = error instanceof ConstraintViolationError ? "constrained decoding failed" : "sampling failed";
        this.fail(request, new EngineError("internal", `${what}: ${(error as Error)?.message ?? String(error)}`, undefined, { cause: error }));
        return;
      }
      this.totals.generated++;
      if (outcome.finished) this.finish(request, outcome);
    });
  }

  /** Queues fork group members that were held (their leader's prompt is computed, or the lead passed to them). */
  private start(members: readonly ActiveRequest[]): void {
    if (members.length === 0) return;
    for (const member of members) this.scheduler.add(member);
    this.wake();
  }

  /** Nothing could be scheduled while requests wait: the head of the queue cannot fit even alone. */
  private failUnschedulable(plan: StepPlan<ActiveRequest>): void {
    if (this.scheduler.running.length > 0 || this.scheduler.waiting.length === 0 || plan.preempted.length > 0) return;
    const head = this.scheduler.waiting[0];
    this.fail(head, new EngineError("too_long", `request ${head.id} needs more KV than the cache can free (${head.tokens.length} tokens)`, "input"));
  }

  private finish(request: ActiveRequest, outcome: { finished: true; reason: EngineFinishReason; stopSequence?: string } | { finished: false }): void {
    if (!outcome.finished) return;
    this.scheduler.remove(request);
    this.requests.delete(request.id);
    this.start(this.forks.leave(request));
    if (outcome.reason === "aborted") this.totals.aborted++;
    else this.totals.finished++;
    const now = performance.now();
    const first = request.firstTokenAt ?? now;
    const decodeSteps = request.generated.length - 1;
    request.channel.push({
      type: "finish",
      requestId: request.id,
      reason: outcome.reason,
      stopSequence: outcome.stopSequence,
      tokens: request.generated,
      ...(request.generatedLogprobs ? { logprobs: request.generatedLogprobs } : {}),
      constraintComplete: request.constraintComplete,
      usage: request.usage(),
      timings: {
        timeToFirstToken: (first - request.submittedAt) / 1000,
        total: (now - request.submittedAt) / 1000,
        decodeTokensPerSecond: decodeSteps > 0 && now > first ? decodeSteps / ((now - first) / 1000) : 0,
      },
      seed: request.seed,
    });
    request.channel.close();
  }

  private fail(request: ActiveRequest, error: EngineError): void {
    this.scheduler.remove(request);
    this.requests.delete(request.id);
    this.start(this.forks.leave(request));
    this.totals.failed++;
    request.channel.push({ type: "error", requestId: request.id, error });
    request.channel.close();
  }

  /** A forward pass threw: every request in flight fails with the cause; the engine keeps serving new ones. */
  private failRunning(cause: unknown): void {
    const error = new EngineError("internal", `the model step failed: ${(cause as Error)?.message ?? String(cause)}`, undefined, { cause });
    for (const request of [...this.scheduler.running]) this.fail(request, error);
    // A lost GPU device took the KV cache's contents with it: cached prefixes must not be adopted again.
    if ((cause as { kvLost?: boolean } | undefined)?.kvLost === true) this.kv.index.clear();
  }
}
