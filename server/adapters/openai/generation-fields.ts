// The generation fields chat completions and legacy completions read alike: the sampling parameters, `stop` and
// `stream_options`. One reader each, so both routes name the same fields with the same messages.
import type { InternalRequest } from "../../protocol/internal.js";
import { invalid, isUnset, optionalBoolean, optionalInteger, optionalNumberInRange, optionalObject, own, unsupported, type JsonObject } from "./fields.js";

/** OpenAI allows up to 4 stop sequences (spec 8). */
const MAX_STOP_SEQUENCES = 4;

/**
 * Sampling parameters with the ranges of spec 8; `top_k` is the vLLM extension (-1 or 0: off).
 * @throws ProtocolError naming the field out of range.
 */
export function parseSampling(body: JsonObject): InternalRequest["sampling"] {
  const sampling: InternalRequest["sampling"] = {};
  const temperature = optionalNumberInRange(own(body, "temperature"), "temperature", 0, 2);
  const topP = optionalNumberInRange(own(body, "top_p"), "top_p", 0, 1);
  const topK = optionalInteger(own(body, "top_k"), "top_k", "an integer, -1 or 0 for no limit", -1);
  const frequencyPenalty = optionalNumberInRange(own(body, "frequency_penalty"), "frequency_penalty", -2, 2);
  const presencePenalty = optionalNumberInRange(own(body, "presence_penalty"), "presence_penalty", -2, 2);
  const seed = optionalInteger(own(body, "seed"), "seed", "an integer", Number.MIN_SAFE_INTEGER);
  if (temperature !== undefined) sampling.temperature = temperature;
  if (topP !== undefined) sampling.topP = topP;
  if (topK !== undefined && topK > 0) sampling.topK = topK;
  if (frequencyPenalty !== undefined) sampling.frequencyPenalty = frequencyPenalty;
  if (presencePenalty !== undefined) sampling.presencePenalty = presencePenalty;
  if (seed !== undefined) sampling.seed = seed;
  return sampling;
}

/**
 * `stop`: a non-empty string or an array of 1 to 4 non-empty strings; absent or null: none.
 * @throws ProtocolError naming `stop` or the item at fault (`stop[2]`).
 */
export function parseStop(value: unknown): string[] {
  if (isUnset(value)) return [];
  const rule = `a non-empty string or an array of 1 to ${MAX_STOP_SEQUENCES} non-empty strings`;
  if (typeof value === "string") {
    if (value === "") invalid("stop", rule, value);
    return [value];
  }
  if (!Array.isArray(value) || value.length === 0 || value.length > MAX_STOP_SEQUENCES) invalid("stop", rule, value);
  return value.map((item: unknown, index) => {
    if (typeof item !== "string" || item === "") invalid(`stop[${index}]`, "a non-empty string", item);
    return item;
  });
}

/**
 * `stream_options`: {include_usage?, include_obfuscation?}, only with `stream: true` (OpenAI rejects it otherwise);
 * whether a usage chunk is asked for.
 * @throws ProtocolError naming `stream_options` or its field at fault.
 */
export function parseIncludeUsage(value: unknown, stream: boolean): boolean {
  const options = optionalObject(value, "stream_options");
  if (!options) return false;
  if (!stream) unsupported("stream_options", "stream_options is only allowed when stream is true");
  // include_obfuscation is accepted and has nothing to do: chunks are never padded.
  optionalBoolean(own(options, "include_obfuscation"), "stream_options.include_obfuscation");
  return optionalBoolean(own(options, "include_usage"), "stream_options.include_usage") ?? false;
}
