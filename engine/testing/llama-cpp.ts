// llama.cpp (node-llama-cpp's prebuilt CPU build) as the numerical reference in tests and benchmarks.
import { GgufInsights, type Llama, type LlamaContext, type LlamaContextSequence, type LlamaModel, LlamaLogLevel, type Token, getLlama } from "node-llama-cpp";
import { logSumExp } from "../sample/logprobs.js";

let instance: Promise<Llama> | undefined;

/** getLlama's options for the reference: CPU only, never builds from source, quiet (plain data: child processes get them too). */
export const REFERENCE_LLAMA_OPTIONS = { gpu: false, build: "never", logLevel: LlamaLogLevel.error, progressLogs: false } as const;

/** The shared llama.cpp instance, loaded with {@link REFERENCE_LLAMA_OPTIONS}. */
export function referenceLlama(): Promise<Llama> {
  instance ??= getLlama(REFERENCE_LLAMA_OPTIONS);
  return instance;
}

/** Options matching loom's numerics: f32 KV cache, no flash attention. */
export const REFERENCE_CONTEXT_OPTIONS = {
  experimentalKvCacheKeyType: "F32",
  experimentalKvCacheValueType: "F32",
  flashAttention: false,
} as const;

/**
 * Turns off node-llama-cpp's resource simulation in this process, for tests. Before every model load and every new
 * context size it loads the file a second time without tensors to measure memory (0.1-0.5 s of CPU each, most for
 * large vocabularies): more than the comparisons themselves on tiny models. Without it, node-llama-cpp uses its
 * estimation heuristic, its own path when a simulation fails; loads, contexts and results are the same. Private
 * methods of node-llama-cpp 3.22 (pinned): after an upgrade that renames them this does nothing, and tests run slower.
 */
export function skipResourceSimulation(): void {
  const insights = GgufInsights.prototype as unknown as Record<string, unknown>;
  for (const method of ["_simulateModelResourceUsage", "_simulateContextResourceUsage"]) {
    if (typeof insights[method] === "function") insights[method] = async () => null;
  }
}

/**
 * llama.cpp's log-softmax (float64, from its raw logits) of the token after each position of `tokens`: row i
 * predicts tokens[i + 1]. One evaluation of `path` from an empty cache (a 256-token context), every position's
 * logits asked for.
 */
export async function referenceLogSoftmax(path: string, tokens: number[]): Promise<Float64Array[]> {
  skipResourceSimulation();
  const llama = await referenceLlama();
  const model: LlamaModel = await llama.loadModel({ modelPath: path });
  let context: LlamaContext | undefined;
  try {
    context = await model.createContext({ contextSize: 256, threads: 1, batchSize: 256, ...REFERENCE_CONTEXT_OPTIONS });
    const results = await context.getSequence().controlledEvaluate(tokens.map((token) => [token as Token, { generateNext: { logits: true } }]));
    return results.map((result, i) => {
      const logits = result?.next.logits;
      if (!logits) throw new Error(`llama.cpp returned no logits at position ${i}`);
      const row = new Float64Array(logits.size);
      for (const [token, logit] of logits) row[token as number] = logit;
      const normalizer = logSumExp(row);
      return row.map((logit) => logit - normalizer);
    });
  } finally {
    await context?.dispose();
    await model.dispose();
  }
}

/** One model file opened in llama.cpp, for the comparisons of a test file: open it once, share it, dispose it. */
export interface LlamaCppReference {
  /** llama.cpp's tokenization of `text` (special tokens parsed, BOS added when the model adds it, as llama-cli does). */
  tokenize(text: string): number[];
  /**
   * Greedy continuation of `promptTokens`, `count` tokens, end-of-generation tokens included, each from an empty
   * KV cache. Not with `vocabOnly`.
   */
  greedy(promptTokens: number[], count: number): Promise<number[]>;
  /**
   * llama.cpp's own logit gap |logit(a) - logit(b)| for the token after `context` (from its softmax at temperature 1,
   * nothing truncated), from an empty KV cache. Not with `vocabOnly`.
   */
  logitGap(context: number[], a: number, b: number): Promise<number>;
  dispose(): Promise<void>;
}

/** Options for {@link openLlamaCppReference}. */
export interface LlamaCppReferenceOptions {
  /** Load the vocabulary only (enough to tokenize; no weights, no greedy). */
  vocabOnly?: boolean;
  /**
   * Compute threads. One by default: results do not depend on the thread count, and llama.cpp's spinning thread
   * barrier slows down by 10x or more when another process shares the two cores (as parallel test files do).
   */
  threads?: number;
}

/**
 * Opens `modelPath` in llama.cpp once, for tests ({@link skipResourceSimulation}). Loading costs more than the
 * comparisons on tiny models (node-llama-cpp parses the GGUF metadata in JavaScript, then llama.cpp builds the
 * vocabulary), so a test file opens each model once and shares it. Greedy runs reuse one context, its KV cache
 * cleared after each run: the same tokens as a fresh context.
 */
export async function openLlamaCppReference(modelPath: string, options: LlamaCppReferenceOptions = {}): Promise<LlamaCppReference> {
  skipResourceSimulation();
  const llama = await referenceLlama();
  const model: LlamaModel = await llama.loadModel({ modelPath, vocabOnly: options.vocabOnly ?? false });
  let context: LlamaContext | undefined;
  let sequence: LlamaContextSequence | undefined;
  // One context for every call, replaced by a larger one when a call needs more positions.
  const sequenceFor = async (positions: number): Promise<LlamaContextSequence> => {
    const contextSize = Math.max(256, positions + 16);
    if (context !== undefined && context.contextSize < contextSize) {
      await context.dispose();
      context = undefined;
      sequence = undefined;
    }
    context ??= await model.createContext({ contextSize, threads: options.threads ?? 1, batchSize: 512, ...REFERENCE_CONTEXT_OPTIONS });
    sequence ??= context.getSequence();
    return sequence;
  };
  return {
    tokenize(text) {
      const tokens = model.tokenize(text, true) as number[];
      const bos = model.tokens.bos as number | null;
      return model.tokens.shouldPrependBosToken && bos !== null ? [bos, ...tokens] : tokens;
    },
    async greedy(promptTokens, count) {
      if (options.vocabOnly) throw new Error("greedy needs the weights: open the reference without vocabOnly");
      const sequence = await sequenceFor(promptTokens.length + count);
      try {
        const tokens: number[] = [];
        for await (const token of sequence.evaluate(promptTokens as Token[], { temperature: 0 })) {
          tokens.push(token as number);
          if (tokens.length >= count) break;
        }
        return tokens;
      } finally {
        await sequence.clearHistory();
      }
    },
    async logitGap(contextTokens, a, b) {
      if (options.vocabOnly) throw new Error("logitGap needs the weights: open the reference without vocabOnly");
      const sequence = await sequenceFor(contextTokens.length + 1);
      try {
        const steps = sequence.evaluateWithMetadata(contextTokens as Token[], { probabilities: true }, { temperature: 1, topK: 0, topP: 1, minP: 0 });
        for await (const step of steps) {
          const pa = step.probabilities.get(a as Token) ?? 0, pb = step.probabilities.get(b as Token) ?? 0;
          return Math.abs(Math.log(pa) - Math.log(pb));
        }
        throw new Error("llama.cpp evaluated no token");
      } finally {
        await sequence.clearHistory();
      }
    },
    async dispose() {
      await context?.dispose();
      await model.dispose();
    },
  };
}
