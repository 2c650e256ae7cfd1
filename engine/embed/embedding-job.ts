// An embedding request inside the engine: each input runs as a sequence of the step loop (it needs KV blocks to attend
// causally, like a prompt), whose chunks ask the runner for their final-normed hidden states; once every row its
// pooling reads is in, the sequence finishes (its blocks released, no token generated) and the job answers when all
// its inputs have.
import { ActiveRequest } from "../active-request.js";
import { EventChannel } from "../event-channel.js";
import { EngineError, type EngineEvent } from "../request.js";
import { Sampler } from "../sample/sampler.js";
import type { Tokenizer } from "../tokenizer/tokenizer.js";
import { RowPool, l2Normalize, poolingReads } from "./pooling.js";
import type { EmbeddingResult } from "./request.js";

/** One input of an embedding request, scheduled like a prompt. */
export class EmbeddingSequence extends ActiveRequest {
  /**
   * NOTE: cached KV may be adopted (prefix cache) only when the pooling reads the last row alone: mean and CLS pooling
   * need rows the cache would skip computing.
   */
  readonly reusesCachedKv: boolean;
  /** A vector must equal one computed from scratch: a cached prefix's KV is exact, a relocated section's is not. */
  readonly exactKvOnly = true;

  constructor(readonly job: EmbeddingJob, readonly index: number, readonly pool: RowPool, init: { id: string; priority: number; arrival: number; tokens: number[]; tokenizer: Tokenizer }) {
    super({
      id: init.id, priority: init.priority, arrival: init.arrival, promptTokens: init.tokens, maxTokens: 1, stop: [], endOfTurn: [],
      ignoreEndOfGeneration: false, sampler: new Sampler({}), tokenizer: init.tokenizer, channel: new JobChannel(job, index),
    });
    this.reusesCachedKv = pool.pooling === "last";
  }

  /** Whether the chunk [start, start + count) must bring back its rows' hidden states. */
  wantsHidden(start: number, count: number): boolean {
    return poolingReads(this.pool.pooling, start, count, this.promptLength);
  }

  /** Takes the chunk's hidden states ([count, hidden]); true once every row the pooling reads is in. */
  takeHidden(start: number, rows: Float32Array): boolean {
    this.pool.add(start, rows);
    return this.pool.complete;
  }
}

/** Routes an input sequence's finish or error to its job (nobody iterates it). */
class JobChannel extends EventChannel<EngineEvent> {
  constructor(private readonly job: EmbeddingJob, private readonly index: number) {
    super(() => {});
  }

  override push(event: EngineEvent): void {
    if (event.type === "finish") this.job.inputFinished(this.index, event.reason);
    else if (event.type === "error") this.job.fail(event.error);
  }
}

/** The inputs of one embedding request and the promise of their vectors. */
export class EmbeddingJob {
  readonly sequences: EmbeddingSequence[] = [];
  readonly result: Promise<EmbeddingResult>;
  private resolve!: (result: EmbeddingResult) => void;
  private reject!: (error: EngineError) => void;
  private remaining: number;
  private settled = false;

  constructor(readonly id: string, private readonly tokens: number[][], private readonly dimensions: number, private readonly pooling: "mean" | "cls" | "last", private readonly onSettled: () => void) {
    this.remaining = tokens.length;
    this.result = new Promise((resolve, reject) => {
      this.resolve = resolve;
      this.reject = reject;
    });
  }

  inputFinished(index: number, reason: string): void {
    if (reason !== "stop") {
      this.fail(new EngineError("internal", `input[${index}] was ${reason === "aborted" ? "aborted" : `ended (${reason})`} before its embedding was computed`, `input[${index}]`));
      return;
    }
    if (--this.remaining > 0 || this.settled) return;
    this.settled = true;
    this.onSettled();
    const embeddings = this.sequences.map((sequence) => l2Normalize(sequence.pool.result().subarray(0, this.dimensions)));
    this.resolve({ embeddings, tokenCounts: this.tokens.map((input) => input.length), pooling: this.pooling });
  }

  /** Fails the whole request (the engine aborts the inputs still running through onSettled's owner). */
  fail(error: EngineError): void {
    if (this.settled) return;
    this.settled = true;
    this.onSettled();
    this.reject(error);
  }
}
