// Generates a continuation of a token sequence: chunked prefill, then one decode step per token, with sampling,
// end-of-generation tokens, stop sequences matched on text, and text streamed as whole UTF-8 characters.
import { BlockTable } from "./kv/block-pool.js";
import type { LoadedModel } from "./load.js";
import { Sampler } from "./sample/sampler.js";
import { type SamplingParams, validateSamplingParams } from "./sample/params.js";
import { StopSequenceMatcher } from "./sample/stop.js";

/** How to continue a prompt. */
export interface GenerationOptions {
  /** Most tokens to generate (default 256). */
  maxTokens?: number;
  sampling?: Partial<SamplingParams>;
  /** Strings that end generation when they appear in the text; they are not included in the output. */
  stop?: string[];
  /** Keep going through end-of-generation tokens (benchmarks). */
  ignoreEndOfGeneration?: boolean;
}

/** Why generation ended: an end-of-generation token or stop sequence (`stop`), or a token limit (`length`). */
export type FinishReason = "stop" | "length";

/** Events a generation yields, in order: zero or more `text`, then one `done`. */
export type GenerationEvent =
  | { type: "text"; text: string }
  | {
      type: "done";
      finishReason: FinishReason;
      /** The stop string that ended generation, if one did. */
      stopSequence?: string;
      /** Every generated token id, including one that completed a stop sequence or ended generation. */
      tokens: number[];
      promptTokens: number;
      prefillSeconds: number;
      decodeSeconds: number;
      /** Prompt tokens per second of prefill (time to first token's compute). */
      prefillTokensPerSecond: number;
      /** Tokens per second over decode steps after the first generated token. */
      decodeTokensPerSecond: number;
      seed: number;
    };

/** A prompt that cannot run: empty, or longer than the context. */
export class PromptError extends Error {
  override readonly name = "PromptError";
}

/** Continues `promptTokens` on `model`. Yields to the event loop between tokens so output can stream. */
export async function* generate(model: LoadedModel, promptTokens: readonly number[], options: GenerationOptions = {}): AsyncGenerator<GenerationEvent> {
  const maxTokens = options.maxTokens ?? 256;
  if (!Number.isInteger(maxTokens) || maxTokens < 0) throw new RangeError(`maxTokens must be a non-negative integer, got ${maxTokens}`);
  if (promptTokens.length === 0) throw new PromptError("the prompt is empty: it must contain at least one token");
  if (promptTokens.length >= model.contextSize) {
    throw new PromptError(`the prompt has ${promptTokens.length} tokens but the context holds ${model.contextSize}; shorten it or load with a larger context`);
  }
  const sampling = validateSamplingParams({ ...options.sampling });
  const sampler = new Sampler(sampling);
  const stops = new StopSequenceMatcher(options.stop ?? []);
  const text = model.tokenizer.createStreamDecoder();
  const endTokens = model.tokenizer.endOfGenerationIds;
  const batchSize = model.runner.options.maxBatchTokens;
  const table = new BlockTable(model.kvPool);
  const generated: number[] = [];
  let position = 0;

  const step = (tokens: readonly number[], wantLogits: boolean): Float32Array => {
    table.reserve(position + tokens.length);
    const logits = model.runner.forward([{ tokens, startPosition: position, blockTable: table.ids, wantLogits }]);
    position += tokens.length;
    return logits;
  };

  try {
    const prefillStart = performance.now();
    let logits: Float32Array = new Float32Array(0);
    for (let start = 0; start < promptTokens.length; start += batchSize) {
      const end = Math.min(promptTokens.length, start + batchSize);
      logits = step(promptTokens.slice(start, end), end === promptTokens.length);
    }
    const prefillSeconds = (performance.now() - prefillStart) / 1000;
    const decodeStart = performance.now();
    let decodeSteps = 0;
    let finishReason: FinishReason = "length";
    let stopSequence: string | undefined;

    while (generated.length < maxTokens) {
      const token = sampler.sample(logits, generated);
      generated.push(token);
      if (endTokens.has(token) && !options.ignoreEndOfGeneration) {
        finishReason = "stop";
        break;
      }
      const matched = stops.push(text.push(token));
      if (matched.text) yield { type: "text", text: matched.text };
      if (matched.stop) {
        finishReason = "stop";
        stopSequence = matched.stop.sequence;
        break;
      }
      if (generated.length >= maxTokens || position >= model.contextSize) break;
      logits = step([token], true);
      decodeSteps++;
      await new Promise<void>((resolve) => setImmediate(resolve));
    }
    if (stopSequence === undefined) {
      const rest = stops.push(text.flush()).text + stops.flush();
      if (rest) yield { type: "text", text: rest };
    }
    const decodeSeconds = (performance.now() - decodeStart) / 1000;
    yield {
      type: "done",
      finishReason,
      stopSequence,
      tokens: generated,
      promptTokens: promptTokens.length,
      prefillSeconds,
      decodeSeconds,
      prefillTokensPerSecond: promptTokens.length / prefillSeconds,
      decodeTokensPerSecond: decodeSteps > 0 ? decodeSteps / decodeSeconds : 0,
      seed: sampler.seed,
    };
  } finally {
    table.releaseAll();
  }
}
