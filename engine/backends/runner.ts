// What the engine needs of a backend: one forward pass over a batch of sequence chunks on a paged KV cache, and KV
// copies for prefix and section reuse. The WebAssembly runner answers synchronously; a GPU runner may answer with a
// promise, and the engine then keeps its event loop free during the pass.
import type { KvBudget, KvDtype } from "../kv/budget.js";
import type { KvCopy } from "../kv/kv-cache.js";
import type { ModelConfig } from "../model/config.js";
import type { DeviceSampling } from "../sample/sampler.js";
import type { LoadProgress } from "./wasm/weight-loader.js";

/** One sequence's slice of a forward batch: its new tokens, where they start, and where its KV lives. */
export interface SequenceChunk {
  tokens: ArrayLike<number>;
  /** Position of tokens[0] in the sequence; KV for positions before it must already be in the cache. */
  startPosition: number;
  /** Physical KV block of each logical block; must cover startPosition + tokens.length positions. */
  blockTable: ArrayLike<number>;
  /**
   * Where the runner frees sliding-window layers' KV (ModelRunner.localKvBlocks): those layers' slot of each logical
   * block, -1 where the window no longer reaches (never read).
   */
  localBlockTable?: ArrayLike<number>;
  /** Rows whose input is an image's embeddings instead of a token's (their token ids are not read). */
  media?: readonly ChunkMedia[];
  /** Whether to return logits for the chunk's last token. */
  wantLogits: boolean;
  /**
   * With wantLogits: return logits for every row of the chunk, not only the last (prompt log-probabilities): the
   * chunk then takes `tokens.length` rows of the returned logits, in row order.
   */
  allRowLogits?: boolean;
  /** With wantLogits, for {@link ModelRunner.forwardSampled}: sample the token on the device, not return logits. */
  deviceSampling?: DeviceSampling;
  /**
   * Return the final-normed hidden state (output_norm applied, before the LM head) of every row of the chunk, for
   * pooled embeddings: read from {@link ModelRunner.hiddenStates} after the pass. Independent of wantLogits.
   */
  wantHidden?: boolean;
}

/** A run of a chunk's rows that are image tokens. */
export interface ChunkMedia {
  /** Index in the chunk's tokens of the first row. */
  offset: number;
  /** [rows, hidden_size] f32: the rows' input embeddings, taken as they are (not scaled as token embeddings are). */
  embeddings: Float32Array;
  /**
   * Exclusive end position of the whole image: each of its rows attends to every position before it, so the image's
   * tokens see each other (Gemma 3 reads images bidirectionally). The chunk holds the image's tokens up to there.
   */
  keyEnd: number;
}

/** The exclusive key end of every row of `chunk` that is an image's, by row index in the chunk (others: causal). */
export function mediaKeyEnds(chunk: SequenceChunk, hiddenSize: number): Map<number, number> {
  const ends = new Map<number, number>();
  for (const media of chunk.media ?? []) {
    const rows = media.embeddings.length / hiddenSize;
    for (let i = 0; i < rows; i++) ends.set(media.offset + i, media.keyEnd);
  }
  return ends;
}

/** What {@link ModelRunner.forwardSampled} returns. */
export interface SampledForward {
  /**
   * One entry per chunk that wants logits, in chunk order: the sampled token for chunks with deviceSampling (as
   * sample.wgsl answers: -1 and -2 when nothing could be sampled), unused for the others.
   */
  tokens: Int32Array;
  /** [chunks that want logits without deviceSampling, vocab_size], in chunk order. */
  logits: Float32Array;
  /** The log-sum-exp of each logits row, where the runner computed them (see ModelRunner.logitLogSumExps). */
  logSumExps?: Float64Array;
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
  /**
   * The KV cache's memory budget and element type (default f32); `keepWindowKv` keeps sliding-window layers' KV for
   * every position (as llama.cpp's --swa-full), which lets any cached prefix be reused, for more memory.
   */
  kvCache: KvBudget & { dtype?: KvDtype; keepWindowKv?: boolean };
  onProgress?: (progress: LoadProgress) => void;
}

/** A backend's forward pass over one loaded model. */
export interface ModelRunner {
  readonly options: RunnerOptions;
  readonly config: ModelConfig;
  /** KV blocks in the cache, as the budget allowed. */
  readonly kvBlocks: number;
  /**
   * Slots of the sliding-window layers' KV when the runner frees it behind the window (chunks then carry
   * localBlockTable); undefined when those layers keep KV for every block.
   */
  readonly localKvBlocks?: number;
  readonly kvDtype: KvDtype;
  /**
   * After a pass: [rows of the chunks with wantHidden, hidden_size], their final-normed hidden states in chunk and row
   * order (empty when none asked); valid until the next pass.
   */
  readonly hiddenStates: Float32Array;
  /**
   * Optional: after a pass with an allRowLogits chunk, the log-sum-exp of every row `forward` returned (as
   * engine/sample/logprobs.ts's logSumExp, within 1e-6 relative), reduced on the backend's threads; undefined after
   * other passes. The WebAssembly runner has it; WebGPU leaves prompt log-probabilities to the engine's JS path.
   */
  readonly logitLogSumExps?: Float64Array;
  /**
   * Runs one forward pass over every chunk, appending their K/V to the cache, and returns the logits of the chunks
   * that asked for them: [number of such chunks, vocab_size], in chunk order (valid until the next call).
   */
  forward(chunks: readonly SequenceChunk[]): Float32Array | Promise<Float32Array>;
  /**
   * Optional: the same pass, but chunks that carry `deviceSampling` are sampled on the device, so only their token
   * ids come back; the engine prefers it when present.
   */
  forwardSampled?(chunks: readonly SequenceChunk[]): Promise<SampledForward>;
  /**
   * Copies KV out of cached chains into a sequence (table `targetBlocks`), re-rotating keys by each copy's position
   * delta; ordered before the next forward pass. `localSlot` maps a block to its sliding-window slot where the runner
   * frees window KV (every copied position's block has one).
   */
  copyKv(copies: readonly KvCopy[], targetBlocks: readonly number[], localSlot?: (block: number) => number): void;
}

/**
 * Checks a forward batch against the runner's sizes and the vocabulary, before anything is written; returns its
 * token count. @throws RangeError naming the limit or value at fault.
 */
export function checkBatch(chunks: readonly SequenceChunk[], options: RunnerOptions, vocabSize: number, hiddenSize: number): number {
  const tokens = chunks.reduce((sum, c) => sum + c.tokens.length, 0);
  if (tokens === 0) throw new RangeError("forward() needs at least one token");
  if (tokens > options.maxBatchTokens) throw new RangeError(`batch of ${tokens} tokens exceeds maxBatchTokens ${options.maxBatchTokens}`);
  if (chunks.length > options.maxSequences) throw new RangeError(`${chunks.length} sequences exceed maxSequences ${options.maxSequences}`);
  for (const chunk of chunks) {
    const end = chunk.startPosition + chunk.tokens.length;
    if (end > options.maxContext) throw new RangeError(`sequence reaches position ${end}, beyond maxContext ${options.maxContext}`);
    if (chunk.blockTable.length * options.blockSize < end) throw new RangeError(`block table covers ${chunk.blockTable.length * options.blockSize} positions, ${end} needed`);
    const mediaRows = checkMedia(chunk, hiddenSize);
    for (let i = 0; i < chunk.tokens.length; i++) {
      if (mediaRows.has(i)) continue;
      const token = chunk.tokens[i];
      if (!Number.isInteger(token) || token < 0 || token >= vocabSize) throw new RangeError(`token id ${token} is outside the vocabulary (0..${vocabSize - 1})`);
    }
  }
  return tokens;
}

/** The rows of `chunk` that are an image's, checked to lie inside it and see no key past its end. @throws RangeError */
function checkMedia(chunk: SequenceChunk, hiddenSize: number): Set<number> {
  const rows = new Set<number>();
  const end = chunk.startPosition + chunk.tokens.length;
  for (const media of chunk.media ?? []) {
    const count = media.embeddings.length / hiddenSize;
    if (!Number.isInteger(count) || count < 1) throw new RangeError(`image embeddings of ${media.embeddings.length} floats are not rows of ${hiddenSize}`);
    if (!Number.isInteger(media.offset) || media.offset < 0 || media.offset + count > chunk.tokens.length) {
      throw new RangeError(`image rows ${media.offset}..${media.offset + count} fall outside the chunk's ${chunk.tokens.length} tokens`);
    }
    if (media.keyEnd < chunk.startPosition + media.offset + count || media.keyEnd > end) {
      throw new RangeError(`image key end ${media.keyEnd} must lie between its last row and the chunk's end ${end}`);
    }
    for (let i = 0; i < count; i++) rows.add(media.offset + i);
  }
  return rows;
}

/** Checks that every KV copy lands inside the target's blocks. @throws RangeError naming the copy at fault. */
export function checkKvCopies(copies: readonly KvCopy[], targetBlocks: readonly number[], blockSize: number): void {
  for (const copy of copies) {
    if (copy.targetStart + copy.count > targetBlocks.length * blockSize) {
      throw new RangeError(`KV copy to positions ${copy.targetStart}..${copy.targetStart + copy.count} exceeds the target's blocks`);
    }
  }
}
