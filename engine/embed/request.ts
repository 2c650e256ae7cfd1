// The engine's embedding request and result (plain data, like EngineRequest), and the checks a request passes before
// any of it is queued: inputs present, token ids in the vocabulary, each input inside the context, `dimensions` in range.
import { EngineError } from "../request.js";
import { TokenLimitError } from "../tokenizer/errors.js";
import type { PoolingType } from "./pooling.js";

/** One input: text (tokenized as llama.cpp tokenizes embedding inputs: with BOS/EOS as the model asks, special tokens parsed) or token ids. */
export type EmbeddingInput = string | readonly number[];

/** Embeds each input with the model's pooling. */
export interface EmbeddingRequest {
  /** Unique id (default: generated); abort(id) stops every input of the request. */
  id?: string;
  inputs: readonly EmbeddingInput[];
  /** Keep the first `dimensions` values of each vector, then norm it again (default: the model's hidden size). */
  dimensions?: number;
  /** Priority class, as EngineRequest.priority (default 0). */
  priority?: number;
  /** Most tokens over all inputs (default: no limit but each input's); past it the request fails naming `input`. */
  maxTotalTokens?: number;
}

/** What {@link EmbeddingRequest} gives back. */
export interface EmbeddingResult {
  /** One vector per input, in input order: pooled and L2-normed (llama.cpp's default, embd_normalize 2). */
  embeddings: Float32Array[];
  /** How many tokens each input had, in input order (its usage). */
  tokenCounts: number[];
  pooling: PoolingType;
}

/** What checking a request needs of the model. */
export interface EmbeddingModel {
  /** Undefined for a model whose GGUF declares no pooling (generation only). */
  pooling: PoolingType | undefined;
  /** The name in errors ("model X ..."). */
  name: string;
  hiddenSize: number;
  vocabSize: number;
  /** Most tokens one input may have (the context, or the KV cache when smaller). */
  maxInputTokens: number;
  tokenize(text: string, maxTokens: number): number[];
}

/** A request's inputs as token ids, checked, with the width of the vectors. @throws EngineError naming the field at fault. */
export function prepareEmbeddingInputs(model: EmbeddingModel, request: EmbeddingRequest): { tokens: number[][]; dimensions: number; pooling: "mean" | "cls" | "last" } {
  const pooling = model.pooling;
  if (pooling === undefined) throw new EngineError("invalid_request", `model ${model.name} does not produce embeddings (its GGUF declares no pooling_type)`, "model");
  if (pooling === "rank") throw new EngineError("invalid_request", `model ${model.name} is a reranker (pooling_type rank): it scores pairs of texts and produces no embeddings`, "model");
  if (typeof request !== "object" || request === null || !Array.isArray(request.inputs)) throw new EngineError("invalid_request", "inputs must be an array", "input");
  if (request.inputs.length === 0) throw new EngineError("invalid_request", "input must hold at least one input", "input");
  const dimensions = request.dimensions ?? model.hiddenSize;
  if (!Number.isSafeInteger(dimensions) || dimensions < 1 || dimensions > model.hiddenSize) {
    throw new EngineError("invalid_request", `dimensions must be an integer from 1 to ${model.hiddenSize} (model ${model.name}'s embedding width), got ${JSON.stringify(request.dimensions)}`, "dimensions");
  }
  const tokens = request.inputs.map((input, i) => inputTokens(model, input, i, request.inputs.length));
  const total = tokens.reduce((sum, input) => sum + input.length, 0);
  if (request.maxTotalTokens !== undefined && total > request.maxTotalTokens) {
    throw new EngineError("invalid_request", `input has ${total} tokens over its ${tokens.length} inputs, more than the ${request.maxTotalTokens} one request may have`, "input");
  }
  return { tokens, dimensions, pooling };
}

function inputTokens(model: EmbeddingModel, input: EmbeddingInput, index: number, count: number): number[] {
  const field = count === 1 && typeof input === "string" ? "input" : `input[${index}]`;
  const limit = model.maxInputTokens;
  let tokens: number[];
  if (typeof input === "string") {
    try {
      tokens = model.tokenize(input, limit);
    } catch (error) {
      if (error instanceof TokenLimitError) throw new EngineError("too_long", `${field} has more than ${limit} tokens, the most one input may have`, field, { cause: error });
      throw error;
    }
  } else if (Array.isArray(input)) {
    input.forEach((token, j) => {
      if (!Number.isSafeInteger(token) || token < 0 || token >= model.vocabSize) {
        throw new EngineError("invalid_request", `${field}[${j}] is ${JSON.stringify(token)}, not a token id of the vocabulary (0..${model.vocabSize - 1})`, `${field}[${j}]`);
      }
    });
    tokens = [...input];
  } else {
    throw new EngineError("invalid_request", `${field} must be a string or an array of token ids`, field);
  }
  if (tokens.length === 0) throw new EngineError("invalid_request", `${field} is empty: an input needs at least one token`, field);
  if (tokens.length > limit) throw new EngineError("too_long", `${field} has ${tokens.length} tokens, more than the ${limit} one input may have`, field);
  return tokens;
}
