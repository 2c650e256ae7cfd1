// Loads a model path into everything generation needs: config, tokenizer, chat template and a ready runner.
import { availableParallelism } from "node:os";
import { WasmModelRunner } from "./backends/wasm/model-runner.js";
import { WasmRuntime } from "./backends/wasm/runtime.js";
import type { LoadProgress } from "./backends/wasm/weight-loader.js";
import { BlockPool } from "./kv/block-pool.js";
import type { KvBudget, KvDtype } from "./kv/budget.js";
import type { ModelConfig } from "./model/config.js";
import { openModelSource } from "./model/source.js";
import type { Tokenizer } from "./tokenizer/tokenizer.js";
import { tokenizerFromGguf } from "./tokenizer/gguf.js";
import { tokenizerFromHuggingFace } from "./tokenizer/huggingface.js";

/** Options for {@link loadModel}. */
export interface LoadOptions {
  /** Compute threads (default: all cores). */
  threads?: number;
  /** Longest sequence to support, prompt plus output (default: min(model context, 4096)). */
  contextSize?: number;
  /** Most tokens per forward pass, over all sequences (default 512). */
  batchSize?: number;
  /** Most sequences per forward pass (default 32). */
  maxSequences?: number;
  /** KV cache memory budget (bytes or a fraction of free memory; default 0.4 of free memory) and dtype (default f32). */
  kvCache?: KvBudget & { dtype?: KvDtype };
  /** Called as weight bytes arrive. */
  onProgress?: (progress: LoadProgress) => void;
}

/** A model ready to generate. */
export interface LoadedModel {
  path: string;
  config: ModelConfig;
  tokenizer: Tokenizer;
  chatTemplate: string | null;
  runner: WasmModelRunner;
  kvPool: BlockPool;
  contextSize: number;
  /** Seconds spent reading weights. */
  loadSeconds: number;
  /** Stops the compute threads; the model cannot be used afterwards. */
  dispose(): Promise<void>;
}

/** Positions per KV block. */
export const KV_BLOCK_SIZE = 16;

/** Opens a GGUF file or Hugging Face directory and loads it onto the WebAssembly backend. */
export async function loadModel(path: string, options: LoadOptions = {}): Promise<LoadedModel> {
  const source = openModelSource(path);
  const tokenizer = source.ggufMetadata ? tokenizerFromGguf(source.ggufMetadata, path) : tokenizerFromHuggingFace(path);
  const contextSize = Math.min(options.contextSize ?? 4096, source.config.max_position_embeddings);
  if (!Number.isInteger(contextSize) || contextSize <= 0) throw new RangeError(`contextSize must be a positive integer, got ${options.contextSize}`);
  const runtime = await WasmRuntime.create({ threads: options.threads ?? availableParallelism() });
  const started = performance.now();
  try {
    const runner = new WasmModelRunner(source, runtime, {
      maxBatchTokens: options.batchSize ?? 512,
      maxSequences: options.maxSequences ?? 32,
      maxContext: contextSize,
      blockSize: KV_BLOCK_SIZE,
      kvCache: options.kvCache ?? {},
      onProgress: options.onProgress,
    });
    return {
      path,
      config: source.config,
      tokenizer,
      chatTemplate: source.chatTemplate,
      runner,
      kvPool: new BlockPool(runner.kvBlocks, KV_BLOCK_SIZE),
      contextSize,
      loadSeconds: (performance.now() - started) / 1000,
      dispose: () => runtime.dispose(),
    };
  } catch (error) {
    await runtime.dispose();
    throw error;
  }
}
