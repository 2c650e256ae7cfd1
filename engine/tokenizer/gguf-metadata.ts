// Produces the GGUF `tokenizer.*` metadata for a real tokenizer, so that generated GGUF files (random-weight models,
// test fixtures) carry a working vocabulary that both loom and llama.cpp read.
import { statSync } from "node:fs";
import { ModelFileError } from "../model/errors.js";
import { readGgufHeader } from "../model/gguf/reader.js";
import { gguf, type GgufTypedValue } from "../model/gguf/writer.js";
import { SPECIAL_ID_KEYS, vocabularySpecFromGguf } from "./gguf.js";
import { vocabularySpecFromHuggingFace } from "./huggingface.js";
import { vocabularySpecFromLlama2c } from "./llama2c.js";
import { TokenType, type VocabularySpec } from "./vocabulary.js";

/** Options for {@link ggufTokenizerMetadata}. */
export interface GgufTokenizerMetadataOptions {
  /** Written as `tokenizer.chat_template`, replacing any template that came with the tokenizer. */
  chatTemplate?: string;
  /**
   * Pads the vocabulary to this many tokens, e.g. 128256 to give a Llama-3.2-1B-shaped model its vocabulary size.
   * See `padWith` for what the new tokens are.
   */
  padVocabTo?: number;
  /**
   * "reserved" (default): `<|reserved_special_token_N|>` control tokens, N counting from 0 and skipping texts the
   * vocabulary already has, as Llama 3 fills its spare ids. "unused": `[PAD<id>]` unused tokens, as
   * convert_hf_to_gguf.py fills ids a tokenizer.json leaves out.
   */
  padWith?: "reserved" | "unused";
  /** GGUF pre-tokenizer name for Hugging Face tokenizers whose pre_tokenizer loom does not recognise. */
  pre?: string;
}

/** Reads a vocabulary from a Hugging Face directory (or tokenizer.json), a llama2.c tokenizer.bin or a .gguf file. */
export function vocabularySpecFromPath(source: string, options: { pre?: string } = {}): VocabularySpec {
  let isDirectory: boolean;
  try {
    isDirectory = statSync(source).isDirectory();
  } catch (error) {
    throw new ModelFileError(source, `cannot read tokenizer source: ${(error as Error).message}`);
  }
  if (isDirectory || source.endsWith("tokenizer.json")) return vocabularySpecFromHuggingFace(source, options);
  if (source.endsWith(".gguf")) return vocabularySpecFromGguf(readGgufHeader(source).metadata, source);
  return vocabularySpecFromLlama2c(source);
}

/** Adds tokens until the vocabulary has `size`: reserved control tokens, or `[PAD<id>]` unused ones. */
export function padVocabulary(spec: VocabularySpec, size: number, padWith: "reserved" | "unused" = "reserved"): VocabularySpec {
  const count = spec.tokens.length;
  if (!Number.isInteger(size) || size < count) {
    throw new ModelFileError(spec.source, `cannot pad a ${count}-token vocabulary to ${size} tokens`);
  }
  if (size === count) return spec;
  const existing = new Set(spec.tokens);
  const tokens = [...spec.tokens];
  const tokenTypes = new Int32Array(size);
  for (let id = 0; id < count; id++) tokenTypes[id] = spec.tokenTypes ? spec.tokenTypes[id] : TokenType.NORMAL;
  for (let n = 0; tokens.length < size; n++) {
    const text = padWith === "unused" ? `[PAD${tokens.length}]` : `<|reserved_special_token_${n}|>`;
    if (existing.has(text)) {
      if (padWith === "unused") throw new ModelFileError(spec.source, `cannot pad: the vocabulary already has a token ${text}`);
      continue;
    }
    tokenTypes[tokens.length] = padWith === "unused" ? TokenType.UNUSED : TokenType.CONTROL;
    tokens.push(text);
  }
  const scores = spec.scores ? new Float32Array(size) : undefined;
  if (scores && spec.scores) for (let id = 0; id < count; id++) scores[id] = spec.scores[id];
  return { ...spec, tokens, tokenTypes, scores };
}

/** The GGUF `tokenizer.*` entries describing a vocabulary, in the order llama.cpp's converters write them. */
export function ggufMetadataFromVocabulary(spec: VocabularySpec): Array<[string, GgufTypedValue]> {
  const entries: Array<[string, GgufTypedValue]> = [["tokenizer.ggml.model", gguf.string(spec.model)]];
  if (spec.model === "gpt2") entries.push(["tokenizer.ggml.pre", gguf.string(spec.pre ?? "default")]);
  if (spec.model === "gemma4") entries.push(["tokenizer.ggml.pre", gguf.string("gemma4")]);
  entries.push(["tokenizer.ggml.tokens", gguf.strings(spec.tokens)]);
  if (spec.scores) entries.push(["tokenizer.ggml.scores", gguf.f32s(spec.scores)]);
  entries.push(["tokenizer.ggml.token_type", gguf.i32s(spec.tokenTypes ?? new Int32Array(spec.tokens.length).fill(TokenType.NORMAL))]);
  if (spec.merges) entries.push(["tokenizer.ggml.merges", gguf.strings(spec.merges)]);
  const written = new Set<string>();
  for (const [role, key] of SPECIAL_ID_KEYS) {
    const id = spec.specialIds?.[role];
    if (typeof id !== "number" || written.has(role)) continue;
    written.add(role);
    entries.push([key, gguf.u32(id)]);
  }
  if (spec.addBos !== undefined) entries.push(["tokenizer.ggml.add_bos_token", gguf.bool(spec.addBos)]);
  if (spec.addEos !== undefined) entries.push(["tokenizer.ggml.add_eos_token", gguf.bool(spec.addEos)]);
  if (spec.addSpacePrefix !== undefined) entries.push(["tokenizer.ggml.add_space_prefix", gguf.bool(spec.addSpacePrefix)]);
  if (spec.chatTemplate !== undefined) entries.push(["tokenizer.chat_template", gguf.string(spec.chatTemplate)]);
  return entries;
}

/**
 * The GGUF `tokenizer.*` metadata for a real tokenizer, ready to pass (with the model's own keys) to `writeGguf`.
 *
 * `source` is one of:
 * - a Hugging Face directory holding tokenizer.json (or the tokenizer.json itself): written as convert_hf_to_gguf.py
 *   would, a "gpt2" model with tokens, token_type, merges, pre, special ids from tokenizer_config.json/config.json,
 *   add_bos/add_eos flags and the chat template;
 * - a llama2.c tokenizer.bin: a "llama" model with tokens, scores, token_type, unk/bos/eos ids 0/1/2 and add_bos true,
 *   as llama.cpp's convert-llama2c-to-ggml writes it;
 * - a .gguf file: its tokenizer keys, re-emitted.
 *
 * Throws ModelFileError naming the file when the source cannot be read.
 */
export function ggufTokenizerMetadata(source: string, options: GgufTokenizerMetadataOptions = {}): Array<[string, GgufTypedValue]> {
  let spec = vocabularySpecFromPath(source, { pre: options.pre });
  if (options.padVocabTo !== undefined) spec = padVocabulary(spec, options.padVocabTo, options.padWith);
  if (options.chatTemplate !== undefined) spec = { ...spec, chatTemplate: options.chatTemplate };
  return ggufMetadataFromVocabulary(spec);
}
