// Generates a continuation of one token sequence (the CLI's and the parity tests' entry point): chunked prefill, then
// one decode step per token, with sampling, end-of-generation tokens, stop sequences and streamed text.
import { Engine } from "./engine.js";
import type { LoadedModel } from "./load.js";
import { type SamplingParams, validateSamplingParams } from "./sample/params.js";
import { Sampler } from "./sample/sampler.js";
import { StopSequenceMatcher } from "./sample/stop.js";

/** How to continue a prompt. */
export interface GenerationOptions {
  /** Most tokens to generate (default 256). */
  maxTokens?: number;
  sampling?: Partial<SamplingParams>;
  /** Strings that end generation when they appear in the text; they are not included in the output. */
  stop?: string[];
  /** Texts that end generation like an end-of-generation token (a chat template's turn markers); not in the output. */
  endOfTurn?: readonly string[];
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

/** A prompt that cannot run: empty, longer than the context, or leaving less room than the token limit asks. */
export class PromptError extends Error {
  override readonly name = "PromptError";
}

/**
 * Continues `promptTokens` on `model`, alone: a one-request run of the serving {@link Engine} with caching off, so
 * the model's KV pool is left as it was found. Yields to the event loop between tokens so output can stream.
 */
export async function* generate(model: LoadedModel, promptTokens: readonly number[], options: GenerationOptions = {}): AsyncGenerator<GenerationEvent> {
  if (promptTokens.length === 0) throw new PromptError("the prompt is empty: it must contain at least one token");
  if (promptTokens.length >= model.contextSize) {
    throw new PromptError(`the prompt has ${promptTokens.length} tokens but the context holds ${model.contextSize}; shorten it or load with a larger context`);
  }
  // Unset, the default takes what the context leaves if that is less; a limit the caller set must fit.
  const room = model.contextSize - promptTokens.length;
  const maxTokens = options.maxTokens ?? Math.min(256, room);
  if (!Number.isInteger(maxTokens) || maxTokens < 0) throw new RangeError(`maxTokens must be a non-negative integer, got ${maxTokens}`);
  if (maxTokens > room) {
    throw new PromptError(`the prompt has ${promptTokens.length} tokens and the context holds ${model.contextSize}: at most ${room} tokens can be generated, not ${maxTokens}; lower the token limit or load with a larger context`);
  }
  const sampling = validateSamplingParams({ ...options.sampling });
  new StopSequenceMatcher(options.stop ?? []); // throws StopSequenceError before anything runs
  if (maxTokens === 0) {
    yield { type: "done", finishReason: "length", tokens: [], promptTokens: promptTokens.length, prefillSeconds: 0, decodeSeconds: 0, prefillTokensPerSecond: 0, decodeTokensPerSecond: 0, seed: new Sampler(sampling).seed };
    return;
  }
  const engine = new Engine(model, { cache: { prefixCaching: false }, maxSequences: 1 });
  try {
    for await (const event of engine.submit({ input: { tokens: [...promptTokens] }, maxTokens, sampling, stop: options.stop, endOfTurn: options.endOfTurn, ignoreEndOfGeneration: options.ignoreEndOfGeneration, enableAutoCompaction: false })) {
      if (event.type === "text") yield { type: "text", text: event.text };
      else if (event.type === "error") throw event.error;
      else if (event.type === "finish") {
        const { timeToFirstToken, total, decodeTokensPerSecond } = event.timings;
        yield {
          type: "done",
          finishReason: event.reason === "stop" ? "stop" : "length",
          stopSequence: event.stopSequence,
          tokens: event.tokens,
          promptTokens: promptTokens.length,
          prefillSeconds: timeToFirstToken,
          decodeSeconds: total - timeToFirstToken,
          prefillTokensPerSecond: promptTokens.length / timeToFirstToken,
          decodeTokensPerSecond,
          seed: event.seed,
        };
      }
    }
  } finally {
    engine.close();
  }
}
