// Intercepts a model runner's forward pass for the quality benches: copies out every logits row the engine samples
// from and, when given the tokens to produce, raises each one's logit so that greedy decoding picks it (teacher
// forcing), while the copied row stays the model's own.
import type { ModelRunner, SequenceChunk } from "../engine/backends/runner.js";

/**
 * A tap on one runner's forward pass. It attributes rows by order, so it needs one request at a time: every forward
 * pass that returns logits then returns exactly one row, that request's next position.
 */
export class LogitsTap {
  /** The rows of the current request, one per generated token, in order (copies: the runner reuses its buffer). */
  rows: Float32Array[] = [];
  private forced: readonly number[] | undefined;
  private readonly vocabSize: number;

  /** Replaces `runner.forward` on that instance; the tap stays for the runner's life. */
  constructor(runner: ModelRunner) {
    // A runner that samples on the device never hands the logits to the engine; there is nothing to tap.
    if (runner.forwardSampled) throw new Error("LogitsTap needs a runner that returns logits (the WebAssembly backend)");
    this.vocabSize = runner.config.vocab_size;
    const forward = runner.forward.bind(runner);
    runner.forward = (chunks) => this.intercept(chunks, forward(chunks));
  }

  /** Starts a request: clears the rows; with `forced`, greedy decoding produces forced[0], forced[1], ... */
  begin(forced?: readonly number[]): void {
    this.rows = [];
    this.forced = forced;
  }

  private intercept(chunks: readonly SequenceChunk[], logits: Float32Array | Promise<Float32Array>): Float32Array {
    if (logits instanceof Promise) throw new Error("LogitsTap handles synchronous runners only (the WebAssembly backend)");
    const wanting = chunks.filter((chunk) => chunk.wantLogits).length;
    if (wanting === 0) return logits;
    if (wanting !== 1 || logits.length !== this.vocabSize) throw new Error(`LogitsTap needs one request at a time: ${wanting} chunks wanted logits`);
    const row = Float32Array.from(logits);
    this.rows.push(row);
    if (!this.forced) return logits;
    const token = this.forced[this.rows.length - 1];
    if (token === undefined) throw new Error(`LogitsTap: no forced token for position ${this.rows.length - 1}`);
    const forced = Float32Array.from(row);
    let max = -Infinity;
    for (const value of row) if (value > max) max = value;
    // Strictly above every other logit, by a margin float32 keeps at any magnitude.
    forced[token] = max + Math.max(1, Math.abs(max));
    return forced;
  }
}
