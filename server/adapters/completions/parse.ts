// Parses a legacy completions request body (OpenAI's POST /v1/completions, as vLLM and lm-evaluation-harness send it)
// into a CompletionRequest. Every field of the API is read and honoured, or refused by name; unknown fields are refused
// as OpenAI refuses them.
import { MAX_CHOICES } from "../../protocol/choices.js";
import { ProtocolError, type ServedModels } from "../../protocol/internal.js";
import { parseGenerationExtensions } from "../extensions.js";
import { describe, invalid, isObject, isUnset, optionalBoolean, optionalInteger, optionalNumberInRange, optionalObject, optionalString, own, quote, unsupported, type JsonObject } from "../openai/fields.js";
import { parseIncludeUsage, parseSampling, parseStop } from "../openai/generation-fields.js";
import { parseModel } from "../openai/parse.js";
import { checkPromptCacheHints } from "../openai/top-level.js";

/** OpenAI's default `max_tokens` for legacy completions. */
export const DEFAULT_COMPLETION_MAX_TOKENS = 16;
/** The most choices one prompt may ask for (`n`), as chat completions allow. */
export const MAX_COMPLETION_CHOICES = MAX_CHOICES;
/** The most prompts one request may carry (a batch of strings or of token arrays). */
export const MAX_PROMPTS = 128;
/** The most choices of one request, every prompt's together (prompts times `n`): each is a sequence in the batch. */
export const MAX_TOTAL_CHOICES = 128;
/** The most `logprobs` OpenAI's legacy API allows. */
export const MAX_LEGACY_LOGPROBS = 5;

/** One prompt: text (tokenized with the model's special tokens) or token ids. */
export type CompletionPrompt = { text: string } | { tokens: number[] };

/** A parsed legacy completions request. */
export interface CompletionRequest {
  /** The served slug it names. */
  model: string;
  /** One choice set per prompt. */
  prompts: CompletionPrompt[];
  /** Choices per prompt (`n`). */
  n: number;
  /** Most tokens each choice generates; 0 (with echo) scores the prompt only. */
  maxTokens: number;
  /** The prompt's text (and, with logprobs, its tokens' log-probabilities) before each completion. */
  echo: boolean;
  /** `logprobs`: the most likely tokens reported at each position (0-5); absent: no log-probabilities. */
  logprobs?: number;
  stop: string[];
  sampling: { temperature?: number; topP?: number; topK?: number; minP?: number; frequencyPenalty?: number; presencePenalty?: number; repetitionPenalty?: number; seed?: number };
  stream: boolean;
  includeUsage: boolean;
  ignoreEndOfGeneration?: boolean;
  minTokens?: number;
  userId?: string;
  /** `prompt_cache_key`: a gateway's routing affinity key, as for chat completions. */
  cacheKey?: string;
}

/** The fields this parser reads; any other is refused. */
const FIELDS = [
  "model", "prompt", "best_of", "echo", "frequency_penalty", "logit_bias", "logprobs", "max_tokens", "n", "presence_penalty",
  "seed", "stop", "stream", "stream_options", "suffix", "temperature", "top_p", "user",
  // vLLM's extensions, as chat completions takes them (top_k, ignore_eos, min_tokens) and the sampler honours them.
  "top_k", "min_p", "repetition_penalty", "ignore_eos", "min_tokens",
  // Annotations, as chat completions accepts them: they change nothing about the answer.
  "metadata", "prompt_cache_key", "prompt_cache_retention", "prompt_cache_options", "service_tier",
];

/**
 * Validates a legacy completions body.
 * @param vocabSizeOf the number of token ids of the model behind a slug, to check token-id prompts.
 * @throws ProtocolError "invalid_request" naming the field (`prompt[1][7]`), or "not_found" for an unknown model.
 */
export function parseCompletionRequest(body: unknown, models: ServedModels, vocabSizeOf: (slug: string) => number): CompletionRequest {
  if (!isObject(body)) throw new ProtocolError("invalid_request", `The request body must be a JSON object, got ${describe(body)}`);
  for (const key of Object.keys(body)) {
    if (!FIELDS.includes(key)) throw new ProtocolError("invalid_request", `Unrecognized request argument supplied: ${quote(key)}`);
  }
  const model = parseModel(own(body, "model"), models);
  const prompts = parsePrompts(own(body, "prompt"), vocabSizeOf(model));
  rejectUnsupported(body);
  checkAnnotations(body);

  const n = optionalInteger(own(body, "n"), "n", `an integer from 1 to ${MAX_COMPLETION_CHOICES}`, 1, MAX_COMPLETION_CHOICES) ?? 1;
  const bestOf = optionalInteger(own(body, "best_of"), "best_of", "a positive integer", 1);
  if (bestOf !== undefined && bestOf !== n) unsupported("best_of", `best_of must equal n (${n}) or be absent: this server returns every choice it generates`);
  if (prompts.length * n > MAX_TOTAL_CHOICES) {
    throw new ProtocolError("invalid_request", `n (${n}) times the ${prompts.length} prompts asks for ${prompts.length * n} choices; at most ${MAX_TOTAL_CHOICES} per request`, "n");
  }
  const echo = optionalBoolean(own(body, "echo"), "echo") ?? false;
  const logprobs = optionalInteger(own(body, "logprobs"), "logprobs", `an integer from 0 to ${MAX_LEGACY_LOGPROBS}`, 0, MAX_LEGACY_LOGPROBS);
  const maxTokens = optionalInteger(own(body, "max_tokens"), "max_tokens", "a non-negative integer", 0) ?? DEFAULT_COMPLETION_MAX_TOKENS;
  if (maxTokens === 0 && !echo) unsupported("max_tokens", "max_tokens 0 generates nothing: it needs echo (to score the prompt)");
  const stream = optionalBoolean(own(body, "stream"), "stream") ?? false;
  const request: CompletionRequest = {
    model,
    prompts,
    n,
    maxTokens,
    echo,
    stop: parseStop(own(body, "stop")),
    sampling: parseLegacySampling(body),
    stream,
    includeUsage: parseLegacyIncludeUsage(own(body, "stream_options"), stream),
    ...parseGenerationExtensions(body, maxTokens, "max_tokens"),
  };
  if (logprobs !== undefined) request.logprobs = logprobs;
  const user = optionalString(own(body, "user"), "user");
  if (user !== undefined) request.userId = user;
  // checkAnnotations has checked it is a string.
  const cacheKey = own(body, "prompt_cache_key");
  if (typeof cacheKey === "string" && cacheKey !== "") request.cacheKey = cacheKey;
  return request;
}

/**
 * `prompt`: a string, an array of strings, an array of token ids, or an array of arrays of token ids (not mixed).
 * Token ids must be integers below the vocabulary's size; an empty list of prompts or of ids is refused.
 */
export function parsePrompts(value: unknown, vocabSize: number): CompletionPrompt[] {
  const rule = "a string, an array of strings, an array of token ids or an array of arrays of token ids";
  if (isUnset(value)) throw new ProtocolError("invalid_request", `prompt is required: ${rule}`, "prompt");
  if (typeof value === "string") return [{ text: value }];
  if (!Array.isArray(value) || value.length === 0) invalid("prompt", `${rule} (not empty)`, value);
  const first: unknown = value[0];
  if (typeof first === "number") return [{ tokens: checkTokenIds(value, vocabSize, "prompt") }];
  if (value.length > MAX_PROMPTS) invalid("prompt", `at most ${MAX_PROMPTS} prompts`, value);
  if (typeof first === "string") {
    return value.map((item: unknown, index) => {
      if (typeof item !== "string") invalid(`prompt[${index}]`, "a string, as prompt[0] is (prompts of one request are all strings or all token arrays)", item);
      return { text: item };
    });
  }
  if (Array.isArray(first)) {
    return value.map((item: unknown, index) => {
      if (!Array.isArray(item) || item.length === 0) invalid(`prompt[${index}]`, "a non-empty array of token ids, as prompt[0] is", item);
      return { tokens: checkTokenIds(item, vocabSize, `prompt[${index}]`) };
    });
  }
  return invalid("prompt[0]", "a string, a token id or an array of token ids", first);
}

/** Token ids, each an integer in 0..vocabSize-1, named `${path}[j]` when one is not. */
function checkTokenIds(ids: unknown[], vocabSize: number, path: string): number[] {
  ids.forEach((id, index) => {
    if (typeof id !== "number" || !Number.isInteger(id) || id < 0 || id >= vocabSize) invalid(`${path}[${index}]`, `a token id, an integer from 0 to ${vocabSize - 1}`, id);
  });
  return ids as number[];
}

/** Sampling parameters as chat completions reads them, and vLLM's min_p and repetition_penalty. */
function parseLegacySampling(body: JsonObject): CompletionRequest["sampling"] {
  const sampling: CompletionRequest["sampling"] = parseSampling(body);
  const minP = optionalNumberInRange(own(body, "min_p"), "min_p", 0, 1);
  const repetitionPenalty = own(body, "repetition_penalty");
  if (!isUnset(repetitionPenalty) && (typeof repetitionPenalty !== "number" || !Number.isFinite(repetitionPenalty) || repetitionPenalty <= 0 || repetitionPenalty > 10)) {
    invalid("repetition_penalty", "a number above 0 and at most 10 (1: off)", repetitionPenalty);
  }
  if (minP !== undefined) sampling.minP = minP;
  if (typeof repetitionPenalty === "number") sampling.repetitionPenalty = repetitionPenalty;
  return sampling;
}

/** `stream_options` as chat completions reads it, refusing keys other than include_usage and include_obfuscation. */
function parseLegacyIncludeUsage(value: unknown, stream: boolean): boolean {
  const includeUsage = parseIncludeUsage(value, stream);
  for (const key of Object.keys(isObject(value) ? value : {})) {
    if (key !== "include_usage" && key !== "include_obfuscation") unsupported("stream_options", `stream_options has an unsupported key ${quote(key)}: include_usage is supported`);
  }
  return includeUsage;
}

/** Fields whose request this server cannot honour: refused by name, never ignored. */
function rejectUnsupported(body: JsonObject): void {
  const suffix = optionalString(own(body, "suffix"), "suffix");
  if (suffix !== undefined && suffix !== "") unsupported("suffix", "suffix is not supported: this server does not insert text between a prompt and a suffix");
  const logitBias = optionalObject(own(body, "logit_bias"), "logit_bias");
  if (logitBias && Object.keys(logitBias).length > 0) unsupported("logit_bias", "logit_bias is not supported yet");
}

/** Annotations chat completions accepts too: type-checked, changing nothing. */
function checkAnnotations(body: JsonObject): void {
  const metadata = optionalObject(own(body, "metadata"), "metadata");
  for (const [key, value] of Object.entries(metadata ?? {})) {
    if (typeof value !== "string") invalid(`metadata.${key.slice(0, 64)}`, "a string", value);
  }
  checkPromptCacheHints(body);
  const tier = own(body, "service_tier");
  if (!isUnset(tier) && tier !== "auto" && tier !== "default") invalid("service_tier", "'auto' or 'default' (this server has one tier)", tier);
}

/**
 * The wire name of an engine request field in a completions request: its input is `prompt` (`prompt[i]` when the
 * request has several), its limits and sampling parameters as the legacy API names them.
 */
export function completionWireField(field: string, promptPath: string): string {
  if (field === "input" || field.startsWith("input.")) return promptPath;
  const names: Record<string, string> = {
    maxTokens: "max_tokens", minTokens: "min_tokens", logprobs: "logprobs", promptLogprobs: "logprobs", fork: "n",
    ignoreEndOfGeneration: "ignore_eos", "sampling.temperature": "temperature", "sampling.topP": "top_p", "sampling.topK": "top_k",
    "sampling.minP": "min_p", "sampling.frequencyPenalty": "frequency_penalty", "sampling.presencePenalty": "presence_penalty",
    "sampling.repetitionPenalty": "repetition_penalty", "sampling.seed": "seed",
  };
  return Object.hasOwn(names, field) ? names[field]! : field;
}
