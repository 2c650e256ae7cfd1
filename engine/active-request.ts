// One admitted request's state while it lives in the engine: its tokens and KV (what the scheduler sees), its
// sampler, stop matching and streaming text decoder, and its timings. Turns each sampled token into events.
import type { RgbImage } from "./chat/messages.js";
import type { EventChannel } from "./event-channel.js";
import { isImageToken } from "./vision/image-tokens.js";
import type { TokenConstraint } from "./grammar/constraint.js";
import { maskLogits } from "./grammar/token-masks.js";
import { type KvReuse, SequenceKv } from "./kv/kv-cache.js";
import type { EngineEvent, EngineFinishReason, EngineUsage, TokenLogprob } from "./request.js";
import { tokenLogprob } from "./sample/logprobs.js";
import type { DeviceSampling, Sampler } from "./sample/sampler.js";
import { StopSequenceMatcher } from "./sample/stop.js";
import type { AtomicSpan, SchedulableRequest } from "./sched/scheduler.js";
import type { Tokenizer } from "./tokenizer/tokenizer.js";

/** Everything fixed when a request is accepted. */
export interface ActiveRequestInit {
  id: string;
  priority: number;
  arrival: number;
  promptTokens: number[];
  maxTokens: number;
  stop: string[];
  /** Texts that end generation like an end-of-generation token: matched as stop sequences, reported as none. */
  endOfTurn: readonly string[];
  ignoreEndOfGeneration: boolean;
  /** Reasoning cap, with its tags resolved. */
  thinkingBudget?: { tokens: number; open: string; close: string };
  sampler: Sampler;
  /** The output's grammar, when constrained: masks the logits before sampling, ends generation when complete. */
  constraint?: TokenConstraint;
  tokenizer: Tokenizer;
  channel: EventChannel<EngineEvent>;
  /** The prompt's images and their token spans. */
  images?: RequestImage[];
  /** Report generated tokens' log-probabilities (EngineRequest.logprobs), checked. */
  logprobs?: { top: number };
  /** Report the prompt tokens' log-probabilities (EngineRequest.promptLogprobs), checked. */
  promptLogprobs?: { top: number };
  /** Tokens before end-of-generation tokens and stop sequences may end generation (EngineRequest.minTokens). */
  minTokens?: number;
}

/**
 * What a token the engine wrote itself (the thinking budget's close tag) reports as its log-probability: it was not
 * sampled from a distribution, so probability 1 (logprob 0) and no alternatives.
 */
function forcedLogprob(token: number): TokenLogprob {
  return { token, logprob: 0, top: [] };
}

/**
 * `entry` with each token's piece as bytes (TokenLogprob.bytes), for servers without the tokenizer; a padding id past
 * the tokenizer's vocabulary (a model's vocab_size may be larger) has none.
 */
export function withPieces(entry: TokenLogprob, tokenizer: Tokenizer): TokenLogprob {
  const bytes = (id: number) => (id < tokenizer.vocabSize ? Array.from(tokenizer.tokenBytes(id)) : []);
  entry.bytes = bytes(entry.token);
  for (const alternative of entry.top) alternative.bytes = bytes(alternative.token);
  return entry;
}

/**
 * An image of a request: its prompt tokens [start, end) and, once encoded, their embeddings [end - start, hidden];
 * `encoding` while an encoder works on it elsewhere, `failure` if it failed.
 */
export interface RequestImage {
  start: number;
  end: number;
  image: RgbImage;
  embeddings?: Float32Array;
  encoding?: Promise<void>;
  failure?: Error;
}

/** Whether the prompt ends with `tag` (a template that opens the reasoning itself), trailing whitespace aside. */
export function promptOpens(tokenizer: Tokenizer, prompt: readonly number[], tag: string): boolean {
  return tokenizer.decode(prompt.slice(-8).filter((token) => !isImageToken(token))).trimEnd().endsWith(tag);
}

/** What accepting a token led to. */
export type TokenOutcome = { finished: false } | { finished: true; reason: EngineFinishReason; stopSequence?: string };

/** A request from acceptance to its finish event. */
export class ActiveRequest implements SchedulableRequest {
  readonly id: string;
  readonly priority: number;
  readonly arrival: number;
  /** Prompt then generated tokens. */
  readonly tokens: number[];
  readonly promptLength: number;
  readonly generated: number[] = [];
  /** How many of `generated` the text events so far cover. */
  private tokensEmitted = 0;
  computed = 0;
  readonly kv = new SequenceKv();
  /** The prompt's images (their tokens run in one chunk: see atomicSpans). */
  readonly images: RequestImage[];
  /** KV reuse of the latest adoption, and of the first admission (what the prompt saved, for usage). */
  adoption: KvReuse | undefined;
  reuse: KvReuse | undefined;
  /** The member of its fork group whose prompt KV it forks when admitted (sched/fork-groups.ts). */
  forkSource: ActiveRequest | undefined;
  readonly channel: EventChannel<EngineEvent>;
  readonly submittedAt = performance.now();
  firstTokenAt: number | undefined;
  private readonly init: ActiveRequestInit;
  private readonly stops: StopSequenceMatcher;
  private readonly text;
  /** The logits row with disallowed tokens at -Infinity (constrained requests, minTokens). */
  private masked: Float32Array | undefined;
  /** With logprobs: one per token of `generated`. */
  readonly generatedLogprobs: TokenLogprob[] | undefined;
  /** With promptLogprobs: one per prompt token, filled as the prompt's chunks are computed; undefined once sent. */
  private promptEntries: (TokenLogprob | null)[] | undefined;
  /**
   * Reasoning tracking for the thinking budget: not yet known, inside the tags (with tokens spent), or over. `output`
   * is the text seen since the state was last decided, cut to what a tag split across tokens still needs.
   */
  private thinking: { state: "unknown" | "inside" | "over"; tokens: number; output: string } = { state: "unknown", tokens: 0, output: "" };

  constructor(init: ActiveRequestInit) {
    this.init = init;
    this.id = init.id;
    this.priority = init.priority;
    this.arrival = init.arrival;
    this.tokens = [...init.promptTokens];
    this.images = init.images ?? [];
    this.promptLength = init.promptTokens.length;
    this.channel = init.channel;
    this.stops = new StopSequenceMatcher([...init.stop, ...init.endOfTurn]);
    this.text = init.tokenizer.createStreamDecoder();
    if (init.logprobs) this.generatedLogprobs = [];
    if (init.promptLogprobs) this.promptEntries = new Array<TokenLogprob | null>(this.promptLength).fill(null);
    const budget = init.thinkingBudget;
    if (budget && promptOpens(init.tokenizer, init.promptTokens, budget.open)) this.thinking.state = "inside";
  }

  /** Token spans a chunk must not cut, and whether each can run yet: the images' (see SchedulableRequest.atomicSpans). */
  atomicSpans(): readonly AtomicSpan[] {
    return this.images.map((image) => ({ start: image.start, end: image.end, ready: image.embeddings !== undefined }));
  }

  get seed(): number {
    return this.init.sampler.seed;
  }

  /** The next token's settings for sampling on the device (its draw taken); undefined when it must be sampled here. */
  deviceSampling(): DeviceSampling | undefined {
    if (this.init.constraint) return undefined; // the mask is applied here, to logits read back
    if (this.generatedLogprobs) return undefined; // its log-probabilities need the logits here
    if (this.suppressesEndOfGeneration) return undefined; // minTokens masks end-of-generation tokens here
    return this.init.sampler.deviceSampling();
  }

  /**
   * Whether this request's chunks need every row's logits: its prompt log-probabilities are not all known yet (it then
   * adopts no cached KV, and its chunks are bounded by SchedulerLimits.maxLogitRows).
   */
  get allRowLogits(): boolean {
    return this.promptEntries !== undefined;
  }

  /** Scoring only (maxTokens 0 with promptLogprobs): the request ends once its prompt is computed. */
  get scoresOnly(): boolean {
    return this.init.maxTokens === 0;
  }

  /**
   * Takes the prompt log-probabilities that a chunk's rows give, [count, vocab] for tokens [start, start + count):
   * row r predicts prompt token start + r + 1. Once the chunk reaches the prompt's last token, every entry is known and
   * the `prompt_logprobs` event goes out (once: a preempted request recomputes without them). `logSumExps`, the rows'
   * log-sum-exps where the runner computed them, saves reducing each row here.
   */
  takePromptRows(rows: Float32Array, start: number, count: number, vocab: number, logSumExps?: Float64Array): void {
    const entries = this.promptEntries;
    if (!entries) return;
    const top = this.init.promptLogprobs!.top;
    for (let r = 0; r < count; r++) {
      const next = start + r + 1;
      if (next >= this.promptLength) break;
      entries[next] = withPieces(tokenLogprob(rows.subarray(r * vocab, (r + 1) * vocab), this.tokens[next], top, logSumExps?.[r]), this.init.tokenizer);
    }
    if (start + count < this.promptLength - 1) return;
    this.promptEntries = undefined;
    this.channel.push({ type: "prompt_logprobs", requestId: this.id, logprobs: entries });
  }

  /** Before minTokens and unless a grammar has completed the output, end-of-generation tokens are not sampled. */
  private get suppressesEndOfGeneration(): boolean {
    return this.generated.length < (this.init.minTokens ?? 0) && !this.init.constraint?.complete;
  }

  /** With a constraint: whether the constrained output is complete so far. */
  get constraintComplete(): boolean | undefined {
    return this.init.constraint?.complete;
  }

  /**
   * Takes the next token, sampled here from its logits or already sampled on the device (with {@link deviceSampling}'s
   * settings, checked with checkDeviceToken), and streams its text; says whether the request is done.
   */
  accept(next: Float32Array | number, contextSize: number): TokenOutcome {
    const constraint = this.init.constraint;
    const token = typeof next === "number" ? next : this.init.sampler.sample(this.samplingRow(next, constraint), this.generated);
    if (this.generatedLogprobs) {
      // deviceSampling() keeps these requests on the host: the raw row is here.
      if (typeof next === "number") throw new Error("a request with logprobs was sampled on the device");
      this.generatedLogprobs.push(withPieces(tokenLogprob(next, token, this.init.logprobs!.top), this.init.tokenizer));
    }
    constraint?.accept(token);
    this.firstTokenAt ??= performance.now();
    this.generated.push(token);
    this.tokens.push(token);
    if (this.init.tokenizer.endOfGenerationIds.has(token) && (!this.init.ignoreEndOfGeneration || constraint?.finished)) return this.finishText("stop", true);
    const outcome = this.streamText(this.text.push(token));
    if (outcome) return outcome;
    const forced = this.spendThinkingBudget(token);
    if (forced.length > 0) {
      // The forced tokens join the sequence as if sampled; the scheduler computes them in the next step.
      for (const id of forced) constraint?.accept(id);
      this.generated.push(...forced);
      this.generatedLogprobs?.push(...forced.map((id) => withPieces(forcedLogprob(id), this.init.tokenizer)));
      this.tokens.push(...forced);
      const forcedOutcome = this.streamText(forced.map((id) => this.text.push(id)).join(""));
      if (forcedOutcome) return forcedOutcome;
    }
    if (constraint?.finished) return this.finishText("stop"); // nothing may follow the completed output
    if (this.generated.length >= this.init.maxTokens || this.tokens.length >= contextSize) return this.finishText("length");
    return { finished: false };
  }

  /**
   * The row to sample from: `logits` itself, or a copy with the tokens the constraint forbids and, before minTokens,
   * end-of-generation tokens at -Infinity.
   */
  private samplingRow(logits: Float32Array, constraint: TokenConstraint | undefined): Float32Array {
    const suppress = this.suppressesEndOfGeneration;
    if (!constraint && !suppress) return logits;
    if (this.masked?.length !== logits.length) this.masked = new Float32Array(logits.length);
    if (constraint) maskLogits(logits, constraint.allowed(), this.masked);
    else this.masked.set(logits);
    if (suppress) for (const id of this.init.tokenizer.endOfGenerationIds) if (id < logits.length) this.masked[id] = Number.NEGATIVE_INFINITY;
    return this.masked;
  }

  /** Streams decoded text through the stop matcher; a stop sequence ends the request (from minTokens on). */
  private streamText(text: string): TokenOutcome | undefined {
    const matched = this.stops.push(text, this.generated.length >= (this.init.minTokens ?? 0));
    if (matched.text) this.emitText(matched.text);
    if (matched.stop) {
      // An end-of-turn text that is not also one of the request's stop sequences ends the turn as an EOG token would.
      const sequence = matched.stop.sequence;
      return { finished: true, reason: "stop", stopSequence: this.init.stop.includes(sequence) ? sequence : undefined };
    }
    return undefined;
  }

  /**
   * Counts a generated token against the thinking budget; returns the close tag's tokens to force when the budget is
   * spent inside the reasoning, else nothing.
   */
  private spendThinkingBudget(token: number): number[] {
    const budget = this.init.thinkingBudget;
    const thinking = this.thinking;
    if (!budget || thinking.state === "over") return [];
    thinking.output += this.init.tokenizer.decode([token]);
    if (thinking.state === "unknown") {
      const start = thinking.output.trimStart();
      if (start.startsWith(budget.open)) {
        thinking.state = "inside";
        thinking.output = start.slice(budget.open.length);
      } else if (!budget.open.startsWith(start)) thinking.state = "over"; // no reasoning block
      return [];
    }
    if (thinking.output.includes(budget.close)) {
      thinking.state = "over";
      return [];
    }
    // Only a close tag's worth of text can still complete it: the scan stays constant per token.
    thinking.output = thinking.output.slice(Math.max(0, thinking.output.length - (budget.close.length - 1)));
    if (++thinking.tokens < budget.tokens) return [];
    thinking.state = "over";
    return this.init.tokenizer.encode(`\n${budget.close}\n\n`, { addSpecial: false, parseSpecial: true });
  }

  /** Ends generation early (KV budget or abort): flushes held-back text unless aborted. */
  finishText(reason: EngineFinishReason, endOfGeneration = false): TokenOutcome {
    if (reason !== "aborted" && !this.stops.stopped) {
      const rest = this.stops.push(this.text.flush()).text + this.stops.flush();
      // The end-of-generation token wrote none of this text: it stays out of the event (finish still lists it).
      if (rest) this.emitText(rest, endOfGeneration ? 1 : 0);
    }
    return { finished: true, reason };
  }

  usage(): EngineUsage {
    return {
      promptTokens: this.promptLength,
      reusedPrefixTokens: this.reuse?.prefixTokens ?? 0,
      reusedSuffixTokens: this.reuse?.suffixTokens ?? 0,
      completionTokens: this.generated.length,
    };
  }

  /** Sends `text` with the tokens it completes: every generated token not yet sent but the last `withheld`. */
  private emitText(text: string, withheld = 0): void {
    // Held-back text (a partial character, a possible stop string) is counted with the event that finally carries it.
    const end = this.generated.length - withheld;
    const tokens = end - this.tokensEmitted;
    const logprobs = this.generatedLogprobs?.slice(this.tokensEmitted, end);
    this.tokensEmitted = end;
    this.channel.push({ type: "text", requestId: this.id, text, tokens, ...(logprobs ? { logprobs } : {}) });
  }
}
