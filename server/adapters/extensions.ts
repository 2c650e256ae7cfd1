// The generation extensions that vLLM's and llama.cpp's servers take and serving benchmarks send, read the same way in
// every wire format: `ignore_eos` (keep generating through end-of-generation tokens, up to the token limit) and
// `min_tokens` (no end before that many tokens). Benchmarks set them so that every request produces the same number.
import { type JsonObject, isUnset, own } from "./json.js";
import { type InternalRequest, ProtocolError } from "../protocol/internal.js";

/** The top-level fields parseGenerationExtensions reads. */
export const GENERATION_EXTENSIONS = ["ignore_eos", "min_tokens"] as const;

/**
 * `ignore_eos` (a boolean) and `min_tokens` (an integer, 0 up to the token limit when one is set) as InternalRequest
 * fields; absent or null: nothing.
 * @param maxTokens the request's token limit, and `maxTokensField` its name on the wire, for the message.
 * @throws ProtocolError naming the field.
 */
export function parseGenerationExtensions(body: JsonObject, maxTokens: number | undefined, maxTokensField: string): Pick<InternalRequest, "ignoreEndOfGeneration" | "minTokens"> {
  const result: Pick<InternalRequest, "ignoreEndOfGeneration" | "minTokens"> = {};
  const ignoreEos = own(body, "ignore_eos");
  if (!isUnset(ignoreEos)) {
    if (typeof ignoreEos !== "boolean") throw new ProtocolError("invalid_request", `ignore_eos must be a boolean, got ${JSON.stringify(ignoreEos)?.slice(0, 40)}`, "ignore_eos");
    if (ignoreEos) result.ignoreEndOfGeneration = true;
  }
  const minTokens = own(body, "min_tokens");
  if (!isUnset(minTokens)) {
    if (typeof minTokens !== "number" || !Number.isSafeInteger(minTokens) || minTokens < 0) {
      throw new ProtocolError("invalid_request", `min_tokens must be a non-negative integer, got ${JSON.stringify(minTokens)?.slice(0, 40)}`, "min_tokens");
    }
    if (maxTokens !== undefined && minTokens > maxTokens) {
      throw new ProtocolError("invalid_request", `min_tokens (${minTokens}) must not exceed ${maxTokensField} (${maxTokens})`, "min_tokens");
    }
    if (minTokens > 0) result.minTokens = minTokens;
  }
  return result;
}
