// Loads a tokenizer from the `tokenizer.*` metadata of a GGUF file (as read by engine/model/gguf/reader.ts).
import { ModelFileError } from "../model/errors.js";
import type { GgufValue } from "../model/gguf/format.js";
import { Tokenizer } from "./tokenizer.js";
import type { SpecialTokenRole, VocabularySpec } from "./vocabulary.js";

/** GGUF key for each special token role; later entries override earlier ones (the deprecated FIM names last). */
export const SPECIAL_ID_KEYS: ReadonlyArray<[SpecialTokenRole, string]> = [
  ["bos", "tokenizer.ggml.bos_token_id"],
  ["eos", "tokenizer.ggml.eos_token_id"],
  ["eot", "tokenizer.ggml.eot_token_id"],
  ["eom", "tokenizer.ggml.eom_token_id"],
  ["unk", "tokenizer.ggml.unknown_token_id"],
  ["sep", "tokenizer.ggml.seperator_token_id"],
  ["pad", "tokenizer.ggml.padding_token_id"],
  ["mask", "tokenizer.ggml.mask_token_id"],
  ["fimPre", "tokenizer.ggml.fim_pre_token_id"],
  ["fimSuf", "tokenizer.ggml.fim_suf_token_id"],
  ["fimMid", "tokenizer.ggml.fim_mid_token_id"],
  ["fimPad", "tokenizer.ggml.fim_pad_token_id"],
  ["fimRep", "tokenizer.ggml.fim_rep_token_id"],
  ["fimSep", "tokenizer.ggml.fim_sep_token_id"],
  ["fimPre", "tokenizer.ggml.prefix_token_id"],
  ["fimSuf", "tokenizer.ggml.suffix_token_id"],
  ["fimMid", "tokenizer.ggml.middle_token_id"],
];

/** Reads the tokenizer description out of GGUF metadata without building the lookup tables. */
export function vocabularySpecFromGguf(metadata: ReadonlyMap<string, GgufValue>, path: string): VocabularySpec {
  const fail = (problem: string): never => {
    throw new ModelFileError(path, problem);
  };
  const string = (key: string): string | undefined => {
    const value = metadata.get(key);
    if (value === undefined) return undefined;
    return typeof value === "string" ? value : fail(`metadata '${key}' should be a string`);
  };
  const boolean = (key: string): boolean | undefined => {
    const value = metadata.get(key);
    if (value === undefined) return undefined;
    return typeof value === "boolean" ? value : fail(`metadata '${key}' should be a boolean`);
  };
  const strings = (key: string): string[] | undefined => {
    const value = metadata.get(key);
    if (value === undefined) return undefined;
    return Array.isArray(value) && value.every((item) => typeof item === "string") ? (value as string[]) : fail(`metadata '${key}' should be an array of strings`);
  };

  const modelName = string("tokenizer.ggml.model") ?? fail("no tokenizer: metadata 'tokenizer.ggml.model' is missing");
  if (modelName !== "llama" && modelName !== "gpt2" && modelName !== "gemma4") {
    fail(
      `tokenizer model '${modelName}' is not supported (loom reads "llama" SentencePiece, "gpt2" byte-level BPE and "gemma4" ` +
        "SentencePiece-style BPE vocabularies)",
    );
  }
  const model = modelName as "llama" | "gpt2" | "gemma4";
  const tokens = strings("tokenizer.ggml.tokens") ?? fail("metadata 'tokenizer.ggml.tokens' is missing");

  const scoresValue = metadata.get("tokenizer.ggml.scores");
  let scores: ArrayLike<number> | undefined;
  if (scoresValue !== undefined) {
    if (!(scoresValue instanceof Float32Array || scoresValue instanceof Int32Array)) fail("metadata 'tokenizer.ggml.scores' should be an f32 or i32 array");
    scores = scoresValue as Float32Array | Int32Array;
    if (scores.length < tokens.length) fail(`'tokenizer.ggml.scores' has ${scores.length} entries for ${tokens.length} tokens`);
  }
  const typesValue = metadata.get("tokenizer.ggml.token_type");
  let tokenTypes: ArrayLike<number> | undefined;
  if (typesValue !== undefined) {
    if (!(typesValue instanceof Int32Array)) fail("metadata 'tokenizer.ggml.token_type' should be an i32 array");
    tokenTypes = typesValue as Int32Array;
    if (tokenTypes.length < tokens.length) fail(`'tokenizer.ggml.token_type' has ${tokenTypes.length} entries for ${tokens.length} tokens`);
  }

  const specialIds: Partial<Record<SpecialTokenRole, number>> = {};
  for (const [role, key] of SPECIAL_ID_KEYS) {
    const value = metadata.get(key);
    if (value === undefined) continue;
    if (typeof value !== "number" || !Number.isInteger(value)) fail(`metadata '${key}' should be an integer token id`);
    // Like llama.cpp, an id outside the vocabulary (often 0xFFFFFFFF for "none") leaves the default in place.
    if ((value as number) >= 0 && (value as number) < tokens.length) specialIds[role] = value as number;
  }

  return {
    source: path,
    model,
    tokens,
    scores,
    tokenTypes,
    merges: strings("tokenizer.ggml.merges"),
    pre: string("tokenizer.ggml.pre"),
    specialIds,
    addBos: boolean("tokenizer.ggml.add_bos_token"),
    addEos: boolean("tokenizer.ggml.add_eos_token"),
    addSpacePrefix: boolean("tokenizer.ggml.add_space_prefix"),
    chatTemplate: string("tokenizer.chat_template"),
    modelName: string("general.name"),
  };
}

/**
 * Builds the tokenizer stored in a GGUF file's metadata (`readGgufHeader(path).metadata`).
 * Throws ModelFileError naming `path` when the tokenizer keys are missing, malformed or unsupported.
 */
export function tokenizerFromGguf(metadata: ReadonlyMap<string, GgufValue>, path: string): Tokenizer {
  return new Tokenizer(vocabularySpecFromGguf(metadata, path));
}
