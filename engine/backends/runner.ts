// What the engine needs of a backend: one forward pass over a batch of sequence chunks on a paged KV cache, and KV
// copies for prefix and section reuse. The WebAssembly runner answers synchronously; a GPU runner may answer with a
// promise, and the engine then keeps its event loop free during the pass.
import type { KvBudget, KvDtype } from "../kv/budget.js";
import type { KvCopy } from "../kv/kv-cache.js";
import type { ModelConfig } from "../model/config.js";
import type { LoadProgress } from "./wasm/weight-loader.js";

/** One sequence's slice of a forward batch: its new tokens, where they start, and where its KV lives. */
export interface SequenceChunk {
  tokens: ArrayLike<number>;
  /** Position of tokens[0] in the sequence; KV for positions before it must already be in the cache. */
  startPosition: number;
  /** Physical KV block of each logical block; must cover startPosition + tokens.length positions. */
  blockTable: ArrayLike<number>;
  /** Whether to return logits for the chunk's last token. */
  wantLogits: boolean;
}

/** Sizes the runner allocates for up front. */
export interface RunnerOptions {
  /** Most tokens (over all sequences) in one forward call. */
  maxBatchTokens: number;
  /** Most sequences in one forward call. */
  maxSequences: number;
  /** Longest sequence (positions) attention must handle. */
  maxContext: number;
  /** Positions per KV block. */
  blockSize: number;
  /** The KV cache's memory budget and element type (default f32). */
  kvCache: KvBudget & { dtype?: KvDtype };
  onProgress?: (progress: LoadProgress) => void;
}

/** A backend's forward pass over one loaded model. */
export interface ModelRunner {
  readonly options: RunnerOptions;
  readonly config: ModelConfig;
  /** KV blocks in the cache, as the budget allowed. */
  readonly kvBlocks: number;
  readonly kvDtype: KvDtype;
  /**
   * Runs one forward pass over every chunk, appending their K/V to the cache, and returns the logits of the chunks
   * that asked for them: [number of such chunks, vocab_size], in chunk order (valid until the next call).
   */
  forward(chunks: readonly SequenceChunk[]): Float32Array | Promise<Float32Array>;
  /**
   * Copies KV out of cached chains into a sequence (table `targetBlocks`), re-rotating keys by each copy's position
   * delta; ordered before the next forward pass.
   */
  copyKv(copies: readonly KvCopy[], targetBlocks: readonly number[]): void;
}
