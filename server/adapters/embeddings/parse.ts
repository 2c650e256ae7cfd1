// POST /v1/embeddings's body (OpenAI's shape) into an EmbeddingsRequest: `input` as a string, strings, token ids or
// arrays of token ids, bounded in count; `encoding_format`, `dimensions`, `user`. Every other field is refused by name.
import type { EmbeddingInput } from "../../../engine/embed/request.js";
import { ProtocolError, type ServedModels } from "../../protocol/internal.js";
import { describe, invalid, isObject, isUnset, optionalInteger, optionalString, own, quote } from "../openai/fields.js";
import { parseModel } from "../openai/parse.js";

/** Most inputs in one request (OpenAI's limit). */
export const MAX_EMBEDDING_INPUTS = 2048;
/** Most tokens over all of a request's inputs (OpenAI's limit): each input is also bounded by the model's context. */
export const MAX_EMBEDDING_TOTAL_TOKENS = 300_000;

/** A parsed embeddings request. */
export interface EmbeddingsRequest {
  model: string;
  inputs: EmbeddingInput[];
  /** How the vectors go on the wire: JSON numbers, or base64 of little-endian float32. */
  encodingFormat: "float" | "base64";
  dimensions?: number;
  userId?: string;
}

const FIELDS = ["model", "input", "encoding_format", "dimensions", "user"];

/**
 * Validates an embeddings body.
 * @param vocabSizeOf the number of token ids of the model behind a slug, to check token-id inputs.
 * @throws ProtocolError "invalid_request" naming the field (`input[1][7]`), or "not_found" for an unknown model.
 */
export function parseEmbeddingsRequest(body: unknown, models: ServedModels, vocabSizeOf: (slug: string) => number): EmbeddingsRequest {
  if (!isObject(body)) throw new ProtocolError("invalid_request", `The request body must be a JSON object, got ${describe(body)}`);
  for (const key of Object.keys(body)) {
    if (!FIELDS.includes(key)) throw new ProtocolError("invalid_request", `Unrecognized request argument supplied: ${quote(key)}`, key);
  }
  const model = parseModel(own(body, "model"), models);
  const inputs = parseInputs(own(body, "input"), vocabSizeOf(model));
  const format = own(body, "encoding_format");
  if (!isUnset(format) && format !== "float" && format !== "base64") invalid("encoding_format", `"float" or "base64"`, format);
  const request: EmbeddingsRequest = { model, inputs, encodingFormat: format === "base64" ? "base64" : "float" };
  const dimensions = optionalInteger(own(body, "dimensions"), "dimensions", "a positive integer", 1);
  if (dimensions !== undefined) request.dimensions = dimensions;
  const user = optionalString(own(body, "user"), "user");
  if (user !== undefined) request.userId = user;
  return request;
}

/**
 * `input`: a string, an array of strings, an array of token ids, or an array of arrays of token ids (not mixed); at
 * most MAX_EMBEDDING_INPUTS, none empty, ids inside the vocabulary.
 */
function parseInputs(value: unknown, vocabSize: number): EmbeddingInput[] {
  const rule = "a string, an array of strings, an array of token ids or an array of arrays of token ids";
  if (isUnset(value)) throw new ProtocolError("invalid_request", `input is required: ${rule}`, "input");
  if (typeof value === "string") {
    if (value === "") invalid("input", "a non-empty string", value);
    return [value];
  }
  if (!Array.isArray(value) || value.length === 0) invalid("input", `${rule} (not empty)`, value);
  const first: unknown = value[0];
  if (typeof first === "number") return [tokenIds(value, vocabSize, "input")];
  if (value.length > MAX_EMBEDDING_INPUTS) invalid("input", `at most ${MAX_EMBEDDING_INPUTS} inputs`, value);
  if (typeof first === "string") {
    return value.map((item: unknown, index) => {
      if (typeof item !== "string" || item === "") invalid(`input[${index}]`, "a non-empty string, as input[0] is a string (inputs of one request are all strings or all token arrays)", item);
      return item;
    });
  }
  if (Array.isArray(first)) {
    return value.map((item: unknown, index) => {
      if (!Array.isArray(item) || item.length === 0) invalid(`input[${index}]`, "a non-empty array of token ids, as input[0] is", item);
      return tokenIds(item, vocabSize, `input[${index}]`);
    });
  }
  return invalid("input[0]", "a string, a token id or an array of token ids", first);
}

/** Token ids, each an integer in 0..vocabSize-1, named `${path}[j]` when one is not. */
function tokenIds(ids: unknown[], vocabSize: number, path: string): number[] {
  ids.forEach((id, index) => {
    if (typeof id !== "number" || !Number.isInteger(id) || id < 0 || id >= vocabSize) invalid(`${path}[${index}]`, `a token id, an integer from 0 to ${vocabSize - 1}`, id);
  });
  return ids as number[];
}
