// The tokenizer each preset carries: its source files, the Hugging Face files written next to the weights,
// and the GGUF tokenizer keys. Padding to the model's vocab_size happens here (reserved specials or [PADn]).
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { GgufTypedValue } from "../engine/model/gguf/writer.js";
import { ggufTokenizerMetadata } from "../engine/tokenizer/index.js";
import { qwen3TokenizerDir, sharedDir } from "./fixture-paths.js";
import { llama2TokenizerJson, readLlama2cTokenizer } from "./llama2c-tokenizer.js";
import type { ModelPreset, TokenizerName } from "./model-presets.js";

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
export function tokenizerSourceFiles(name: TokenizerName): string[] {
  switch (name) {
    case "smollm2": {
      const dir = join(sharedDir(), "tokenizers", "smollm2-135m-instruct");
      return [join(dir, "tokenizer.json"), join(dir, "chat_template.jinja")];
    }
    case "qwen3":
      return [join(qwen3TokenizerDir(), "tokenizer.json"), join(qwen3TokenizerDir(), "tokenizer_config.json")];
    case "llama2-32k":
      return [join(sharedDir(), "tokenizers", "llama2-32k", "tokenizer.bin")];
  }
}

/** The source files of `name` that are missing (empty when the tokenizer can be built). */
export function missingTokenizerFiles(name: TokenizerName): string[] {
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
  const [first, second] = tokenizerSourceFiles(preset.tokenizer);
  let tokenizerJson: Record<string, unknown>;
  let tokenizerConfig: Record<string, unknown>;
  switch (preset.tokenizer) {
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
      tokenizerJson = readJson(first);
      tokenizerConfig = { ...readJson(second), model_max_length: preset.config.max_position_embeddings };
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
