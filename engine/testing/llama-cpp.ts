// llama.cpp (node-llama-cpp's prebuilt CPU build) as the numerical reference in tests and benchmarks.
import { type Llama, LlamaLogLevel, getLlama } from "node-llama-cpp";

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
 * Greedy continuation of `promptTokens` by llama.cpp, `count` tokens, end-of-generation tokens included.
 * One thread by default: results do not depend on the thread count, and llama.cpp's spinning thread barrier
 * slows down by 10x or more when another process shares the two cores (as parallel test files do).
 */
export async function llamaCppGreedy(modelPath: string, promptTokens: number[], count: number, threads = 1): Promise<number[]> {
  const llama = await referenceLlama();
  const model = await llama.loadModel({ modelPath });
  try {
    const context = await model.createContext({ contextSize: Math.max(256, promptTokens.length + count + 16), threads, batchSize: 512, ...REFERENCE_CONTEXT_OPTIONS });
    try {
      const tokens: number[] = [];
      for await (const token of context.getSequence().evaluate(promptTokens as never, { temperature: 0 })) {
        tokens.push(token as number);
        if (tokens.length >= count) break;
      }
      return tokens;
    } finally {
      await context.dispose();
    }
  } finally {
    await model.dispose();
  }
}

/** llama.cpp's tokenization of `text` (special tokens parsed, BOS added when the model adds it, as llama-cli does). */
export async function llamaCppTokenize(modelPath: string, text: string): Promise<number[]> {
  const llama = await referenceLlama();
  const model = await llama.loadModel({ modelPath, vocabOnly: true });
  try {
    const tokens = model.tokenize(text, true) as number[];
    const bos = model.tokens.bos as number | null;
    return model.tokens.shouldPrependBosToken && bos !== null ? [bos, ...tokens] : tokens;
  } finally {
    await model.dispose();
  }
}
