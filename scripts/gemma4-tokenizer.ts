// Gemma 4's tokenizer for generated models, rebuilt from Gemma 3's (no package carries Gemma 4's): the same
// SentencePiece-style BPE with merges and byte fallback, with Gemma 3's spare tokens renamed to Gemma 4's specials at
// the ids Gemma 4 gives them, written as llama.cpp's converter writes a Gemma 4 vocabulary (model "gemma4").
import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { GgufTypedValue } from "../engine/model/gguf/writer.js";
import { type VocabularySpec, TokenType, ggufMetadataFromVocabulary } from "../engine/tokenizer/index.js";
import { gemma3TokenizerDir, repoRoot } from "./fixture-paths.js";

/** Gemma 4's vocabulary size (Gemma 3's tokenizer.json has one more id, <image_soft_token>, which Gemma 4 lacks). */
export const GEMMA4_VOCAB_SIZE = 262144;

/**
 * Gemma 4's special tokens at the ids its vocabulary gives them, all of them slots that Gemma 3 holds with a spare or
 * special token of its own (<unused40>..<unused46>, <unused92>, <unused94>, <unused95>, <start_of_turn>,
 * <end_of_turn>, <start_of_image>, <end_of_image>). USER_DEFINED are the ones Gemma4Model.set_vocab (llama.cpp's
 * conversion/gemma.py) keeps visible for the chat parser; CONTROL the ones Gemma 4's tokenizer lists as special.
 */
export const GEMMA4_SPECIAL_TOKENS: ReadonlyArray<{ id: number; text: string; type: number }> = [
  { id: 46, text: "<|tool>", type: TokenType.CONTROL },
  { id: 47, text: "<tool|>", type: TokenType.CONTROL },
  { id: 48, text: "<|tool_call>", type: TokenType.USER_DEFINED },
  { id: 49, text: "<tool_call|>", type: TokenType.USER_DEFINED },
  { id: 50, text: "<|tool_response>", type: TokenType.USER_DEFINED },
  { id: 51, text: "<tool_response|>", type: TokenType.USER_DEFINED },
  { id: 52, text: '<|"|>', type: TokenType.USER_DEFINED },
  { id: 98, text: "<|think|>", type: TokenType.CONTROL },
  { id: 100, text: "<|channel>", type: TokenType.USER_DEFINED },
  { id: 101, text: "<channel|>", type: TokenType.USER_DEFINED },
  { id: 105, text: "<|turn>", type: TokenType.CONTROL },
  { id: 106, text: "<turn|>", type: TokenType.CONTROL },
  { id: 255999, text: "<|image>", type: TokenType.CONTROL },
  { id: 256000, text: "<|audio>", type: TokenType.CONTROL },
];

/** Gemma 3's ids 0..4 (<pad>, <eos>, <bos>, <unk>, <mask>), control tokens in Gemma 4 too. */
const LEADING_CONTROL_IDS = 5;
/** Gemma 3's spare tokens <unused0>..<unused98> sit at these ids; Gemma 4 numbers those it keeps spare afresh. */
const UNUSED_FIRST_ID = 6;
const UNUSED_LAST_ID = 104;

const BYTE_PIECE = /^<0x[0-9A-Fa-f]{2}>$/;

/** The source files: Gemma 3's tokenizer.json and tokenizer_config.json, and Gemma 4's chat template. */
export function gemma4TokenizerSourceFiles(): string[] {
  return [join(gemma3TokenizerDir(), "tokenizer.json"), join(gemma3TokenizerDir(), "tokenizer_config.json"), gemma4ChatTemplatePath()];
}

/**
 * Gemma 4's chat template (google/gemma-4-31B-it's chat_template.jinja, as llama.cpp's models/templates keeps it:
 * google-gemma-4-31B-it.jinja), kept in the repository because no package carries it.
 */
export function gemma4ChatTemplatePath(): string {
  return join(repoRoot(), "scripts", "chat-templates", "gemma-4.jinja");
}

interface TokenizerJson {
  model: { vocab: Record<string, number>; merges: Array<string | [string, string]> };
  added_tokens: Array<{ id: number; content: string; special: boolean; [key: string]: unknown }>;
  [key: string]: unknown;
}

function readJson<T>(path: string): T {
  return JSON.parse(readFileSync(path, "utf8")) as T;
}

/** Gemma 4's text for each id that differs from Gemma 3's (its specials, and its renumbered <unusedN>). */
function renamedTokens(): Map<number, string> {
  const renamed = new Map(GEMMA4_SPECIAL_TOKENS.map(({ id, text }) => [id, text]));
  for (let id = UNUSED_FIRST_ID, n = 0; id <= UNUSED_LAST_ID; id++) if (!renamed.has(id)) renamed.set(id, `<unused${n++}>`);
  return renamed;
}

/**
 * The Gemma 4 vocabulary as llama.cpp's converter writes one (Gemma4Model.set_vocab: LlamaHfVocab's tokens, every
 * score -1000, BYTE for <0xXX>, CONTROL for the tokenizer's special ids, NORMAL otherwise, the visible specials
 * USER_DEFINED; SpecialVocab's merges and ids; add_space_prefix false; add_bos true), built from Gemma 3's
 * tokenizer.json with {@link GEMMA4_SPECIAL_TOKENS} in place: bos <bos> 2, eos <eos> 1, unk <unk> 3, pad <pad> 0,
 * mask <mask> 4, and Gemma 4's chat template. Its ids 0..262143 are those of the real Gemma 4 vocabulary at every
 * special token; the ordinary tokens are Gemma 3's.
 */
export function gemma4VocabularySpec(vocabSize: number = GEMMA4_VOCAB_SIZE): VocabularySpec {
  if (vocabSize !== GEMMA4_VOCAB_SIZE) throw new Error(`the gemma4 tokenizer has ${GEMMA4_VOCAB_SIZE} tokens; the preset asks for vocab_size ${vocabSize}`);
  const [tokenizerPath, , templatePath] = gemma4TokenizerSourceFiles();
  const tokenizer = readJson<TokenizerJson>(tokenizerPath);
  const tokens: string[] = new Array(vocabSize);
  for (const [piece, id] of Object.entries(tokenizer.model.vocab)) if (id < vocabSize) tokens[id] = piece;
  for (const [id, text] of renamedTokens()) tokens[id] = text;
  const tokenTypes = new Int32Array(vocabSize);
  for (let id = 0; id < vocabSize; id++) {
    if (tokens[id] === undefined) throw new Error(`${tokenizerPath} has no token with id ${id}`);
    tokenTypes[id] = id < LEADING_CONTROL_IDS ? TokenType.CONTROL : BYTE_PIECE.test(tokens[id]) ? TokenType.BYTE : TokenType.NORMAL;
  }
  for (const { id, type } of GEMMA4_SPECIAL_TOKENS) tokenTypes[id] = type;
  return {
    source: tokenizerPath,
    model: "gemma4",
    pre: "gemma4",
    tokens,
    scores: new Float32Array(vocabSize).fill(-1000),
    tokenTypes,
    merges: tokenizer.model.merges.map((merge) => (typeof merge === "string" ? merge : merge.join(" "))),
    specialIds: { bos: 2, eos: 1, unk: 3, pad: 0, mask: 4 },
    addBos: true,
    addSpacePrefix: false,
    chatTemplate: readFileSync(templatePath, "utf8"),
  };
}

/** The tokenizer.* GGUF keys of the Gemma 4 vocabulary ({@link gemma4VocabularySpec}). */
export function gemma4TokenizerKeys(vocabSize: number = GEMMA4_VOCAB_SIZE): Array<[string, GgufTypedValue]> {
  return ggufMetadataFromVocabulary(gemma4VocabularySpec(vocabSize));
}

/**
 * Gemma 4's tokenizer as Hugging Face files: Gemma 3's tokenizer.json and tokenizer_config.json with the renamed
 * tokens (vocabulary, added tokens, added_tokens_decoder; <image_soft_token> dropped), bos <bos>, eos <eos>, and
 * Gemma 4's chat template.
 */
export function gemma4HuggingFaceFiles(maxPositions: number): { tokenizerJson: Record<string, unknown>; tokenizerConfig: Record<string, unknown> } {
  const [tokenizerPath, configPath, templatePath] = gemma4TokenizerSourceFiles();
  const tokenizer = readJson<TokenizerJson>(tokenizerPath);
  const renamed = renamedTokens();
  const special = new Map(GEMMA4_SPECIAL_TOKENS.map(({ id, type }) => [id, type === TokenType.CONTROL]));
  const vocab: Record<string, number> = {};
  for (const [piece, id] of Object.entries(tokenizer.model.vocab)) if (id < GEMMA4_VOCAB_SIZE) vocab[renamed.get(id) ?? piece] = id;
  const added = tokenizer.added_tokens
    .filter((token) => token.id < GEMMA4_VOCAB_SIZE)
    .map((token) => ({ ...token, content: renamed.get(token.id) ?? token.content, special: special.get(token.id) ?? token.special }));
  const tokenizerJson = { ...tokenizer, model: { ...tokenizer.model, vocab }, added_tokens: added };
  const config = readJson<Record<string, unknown>>(configPath);
  const tokenizerConfig: Record<string, unknown> = {
    ...config,
    eos_token: "<eos>",
    extra_special_tokens: {},
    chat_template: readFileSync(templatePath, "utf8"),
    model_max_length: maxPositions,
  };
  return { tokenizerJson, tokenizerConfig };
}
