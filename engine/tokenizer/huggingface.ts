// Loads a Hugging Face byte-level BPE tokenizer (tokenizer.json, with tokenizer_config.json and config.json when
// present) into the same vocabulary description llama.cpp's convert_hf_to_gguf.py would write to a GGUF file:
// token list with [PAD<i>] holes, token types, merges, pre-tokenizer name, special ids and add_bos/add_eos flags.
import { existsSync, readFileSync, statSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { ModelFileError } from "../model/errors.js";
import { GPT4O_REGEX_ORIGINAL, TEKKEN_REGEX_ORIGINAL } from "./case-split-regexes.js";
import { LLAMA3_REGEX_ORIGINAL, QWEN2_REGEX_ORIGINAL } from "./split-handwritten.js";
import { Tokenizer } from "./tokenizer.js";
import { TokenType, type SpecialTokenRole, type VocabularySpec } from "./vocabulary.js";

/** Options for reading a Hugging Face tokenizer. */
export interface HuggingFaceTokenizerOptions {
  /**
   * GGUF pre-tokenizer name to use instead of the one recognised from tokenizer.json's pre_tokenizer (convert_hf_to_gguf
   * identifies it by hashing a test encoding, which loom cannot run; loom recognises the regexes of GPT-2, Llama 3,
   * Qwen 2, SmolLM/StarCoder, gpt-4o (o200k) and Tekken).
   */
  pre?: string;
}

type Json = Record<string, unknown>;

interface AddedToken {
  id: number;
  content: string;
  special?: boolean;
  lstrip?: boolean;
  rstrip?: boolean;
  normalized?: boolean;
}

/** The directory of a tokenizer given as a directory or as its tokenizer.json. */
function tokenizerDirectory(path: string): string {
  try {
    if (statSync(path).isDirectory()) return path;
  } catch (error) {
    throw new ModelFileError(path, `cannot read: ${(error as Error).message}`);
  }
  if (basename(path) === "tokenizer.json") return dirname(path);
  throw new ModelFileError(path, "expected a directory holding tokenizer.json, or the tokenizer.json file itself");
}

function readJson(path: string, required: boolean): Json | undefined {
  if (!existsSync(path)) {
    if (required) throw new ModelFileError(path, "file not found");
    return undefined;
  }
  try {
    const value: unknown = JSON.parse(readFileSync(path, "utf8"));
    if (typeof value !== "object" || value === null || Array.isArray(value)) throw new Error("not a JSON object");
    return value as Json;
  } catch (error) {
    throw new ModelFileError(path, `cannot parse JSON: ${(error as Error).message}`);
  }
}

/** Like convert_hf_to_gguf's does_token_look_special: added tokens that are control tokens even if not flagged. */
function looksSpecial(text: string): boolean {
  return (
    ["<pad>", "<mask>", "<2mass>", "[@BOS@]"].includes(text) ||
    (text.startsWith("<|") && text.endsWith("|>")) ||
    (text.startsWith("<｜") && text.endsWith("｜>")) ||
    (text.startsWith("<unused") && text.endsWith(">"))
  );
}

/** Recognises the GGUF pre-tokenizer name from tokenizer.json's pre_tokenizer, or explains why it cannot. */
export function recognisePreTokenizer(preTokenizer: unknown, path: string): string {
  const steps: Json[] = [];
  const collect = (node: unknown): void => {
    if (typeof node !== "object" || node === null) return;
    const json = node as Json;
    if (json.type === "Sequence" && Array.isArray(json.pretokenizers)) json.pretokenizers.forEach(collect);
    else steps.push(json);
  };
  collect(preTokenizer);
  const describe = steps.map((step) => String(step.type)).join(" + ") || "none";
  const byteLevel = steps.find((step) => step.type === "ByteLevel");
  if (!byteLevel) throw new ModelFileError(path, `pre_tokenizer (${describe}) is not byte-level; loom reads byte-level BPE tokenizer.json files`);
  const splits = steps.filter((step) => step.type === "Split");
  const digits = steps.filter((step) => step.type === "Digits");
  const usesRegex = byteLevel.use_regex !== false;
  if (splits.length === 1 && digits.length === 0 && !usesRegex) {
    const regex = (splits[0].pattern as Json | undefined)?.Regex;
    if (regex === LLAMA3_REGEX_ORIGINAL) return "llama-bpe";
    if (regex === QWEN2_REGEX_ORIGINAL) return "qwen2";
    if (regex === GPT4O_REGEX_ORIGINAL) return "gpt-4o";
    if (regex === TEKKEN_REGEX_ORIGINAL) return "tekken";
  }
  if (splits.length === 0 && digits.length === 1 && digits[0].individual_digits === true && usesRegex) return "smollm";
  if (splits.length === 0 && digits.length === 0 && usesRegex) return "gpt-2";
  throw new ModelFileError(path, `pre_tokenizer (${describe}) is not one loom recognises; pass the GGUF pre-tokenizer name as the 'pre' option`);
}

/** The text of a tokenizer_config special-token entry (a string, or an object with `content`). */
function configTokenText(entry: unknown): string | undefined {
  if (typeof entry === "string") return entry;
  if (typeof entry === "object" && entry !== null && typeof (entry as Json).content === "string") return (entry as Json).content as string;
  return undefined;
}

/**
 * Reads a Hugging Face tokenizer directory into a vocabulary description, choosing token types, special ids and flags
 * the way convert_hf_to_gguf.py does. Extras GGUF cannot carry (NFC normalization, lstrip/rstrip, ignore_merges) are
 * kept so that this tokenizer also matches Hugging Face's own encoding.
 */
export function vocabularySpecFromHuggingFace(path: string, options: HuggingFaceTokenizerOptions = {}): VocabularySpec {
  const directory = tokenizerDirectory(path);
  const tokenizerPath = join(directory, "tokenizer.json");
  const tokenizer = readJson(tokenizerPath, true)!;
  const tokenizerConfig = readJson(join(directory, "tokenizer_config.json"), false);
  const config = readJson(join(directory, "config.json"), false);
  const fail = (problem: string): never => {
    throw new ModelFileError(tokenizerPath, problem);
  };

  const model = (tokenizer.model ?? fail("no 'model' section")) as Json;
  if (model.type !== "BPE") fail(`model type '${String(model.type)}' is not supported (loom reads byte-level BPE)`);
  if (model.byte_fallback === true) fail("a BPE model with byte_fallback is SentencePiece-style; loom reads only byte-level BPE tokenizer.json files");
  const pre = options.pre ?? recognisePreTokenizer(tokenizer.pre_tokenizer, tokenizerPath);

  const vocab = (model.vocab ?? fail("model has no vocab")) as Record<string, number>;
  const added = (Array.isArray(tokenizer.added_tokens) ? tokenizer.added_tokens : []) as AddedToken[];
  const byId = new Map<number, string>();
  for (const [text, id] of Object.entries(vocab)) byId.set(id, text);
  const addedById = new Map<number, AddedToken>();
  for (const token of added) {
    byId.set(token.id, token.content);
    addedById.set(token.id, token);
  }
  let maxId = -1;
  for (const id of byId.keys()) if (id > maxId) maxId = id;
  const configVocabSize = typeof config?.vocab_size === "number" ? config.vocab_size : undefined;
  if (configVocabSize !== undefined && configVocabSize <= maxId) {
    fail(`config.json says vocab_size ${configVocabSize} but tokenizer.json uses id ${maxId}`);
  }
  const vocabSize = configVocabSize ?? maxId + 1;

  const tokens: string[] = new Array(vocabSize);
  const tokenTypes = new Int32Array(vocabSize);
  const strip = new Map<number, { lstrip: boolean; rstrip: boolean }>();
  for (let id = 0; id < vocabSize; id++) {
    const text = byId.get(id);
    if (text === undefined) {
      tokens[id] = `[PAD${id}]`;
      tokenTypes[id] = TokenType.UNUSED;
      continue;
    }
    const addedToken = addedById.get(id);
    if (!addedToken) {
      tokens[id] = text;
      tokenTypes[id] = TokenType.NORMAL;
      continue;
    }
    if (addedToken.special || looksSpecial(text)) {
      tokens[id] = text;
      tokenTypes[id] = TokenType.CONTROL;
    } else {
      tokens[id] = text.replaceAll("\u2581", " "); // user-defined tokens are stored pre-normalized
      tokenTypes[id] = TokenType.USER_DEFINED;
    }
    if (addedToken.lstrip || addedToken.rstrip) strip.set(id, { lstrip: !!addedToken.lstrip, rstrip: !!addedToken.rstrip });
  }

  const rawMerges = (model.merges ?? fail("model has no merges")) as unknown[];
  const merges = rawMerges.map((merge, index): string => {
    if (typeof merge === "string") return merge;
    if (Array.isArray(merge) && merge.length === 2 && typeof merge[0] === "string" && typeof merge[1] === "string") {
      // Pairs may hold spaces; GGUF's "left right" form writes them as U+0120, as convert_hf_to_gguf does.
      return merge.map((part: string) => part.replaceAll(" ", "\u0120")).join(" ");
    }
    return fail(`merge #${index} is neither "left right" nor a pair of strings`);
  });

  // Special ids and add_* flags, in gguf-py SpecialVocab's order: tokenizer.json post-processor, tokenizer_config.json,
  // then config.json ids for roles still unset.
  const specialIds: Partial<Record<SpecialTokenRole, number | null>> = {};
  let addBos: boolean | undefined;
  let addEos: boolean | undefined;
  const configText: Partial<Record<string, string>> = {};
  if (tokenizerConfig) {
    for (const role of ["bos", "eos", "unk", "sep", "pad", "cls", "mask"]) {
      const text = configTokenText(tokenizerConfig[`${role}_token`]);
      if (text !== undefined) configText[role] = text;
    }
    if (!configText.bos && configText.cls) configText.bos = configText.cls;
    if (!configText.eos && configText.sep) configText.eos = configText.sep;
  }
  const postProcessor = tokenizer.post_processor as Json | null | undefined;
  const processors = postProcessor ? ((Array.isArray(postProcessor.processors) ? postProcessor.processors : [postProcessor]) as Json[]) : [];
  for (const processor of processors) {
    if (processor.type === "RobertaProcessing") {
      addBos = true;
      addEos = true;
    } else if (processor.type === "TemplateProcessing" && Array.isArray(processor.single) && processor.single.length > 1) {
      // Crude, like gguf-py: a special token first in the single-sequence template means "add BOS", last means "add EOS".
      const single = processor.single as Json[];
      const first = (single[0].SpecialToken as Json | undefined)?.id as string | undefined;
      const last = (single[single.length - 1].SpecialToken as Json | undefined)?.id as string | undefined;
      if (first) {
        if (tokenizerConfig && first !== configText.bos && first !== configText.cls) {
          configText.bos ??= first;
          configText.cls ??= first;
        }
        addBos = !tokenizerConfig || first === configText.bos || first === configText.cls;
      }
      if (last) {
        if (tokenizerConfig && last !== configText.eos) {
          configText.eot = configText.eos; // the old EOS becomes the end-of-turn token
          configText.eos = last;
        }
        addEos = true;
      }
    }
  }
  let chatTemplate: string | undefined;
  if (tokenizerConfig) {
    if (typeof tokenizerConfig.add_bos_token === "boolean") addBos = tokenizerConfig.add_bos_token;
    if (typeof tokenizerConfig.add_eos_token === "boolean") addEos = tokenizerConfig.add_eos_token;
    for (const role of ["bos", "eos", "eot", "unk", "sep", "pad", "mask"] as const) {
      const text = configText[role];
      const id = text === undefined ? undefined : added.find((token) => token.content === text)?.id;
      if (id !== undefined) specialIds[role] = id;
    }
    const templateFile = join(directory, "chat_template.jinja");
    const templateJson = readJson(join(directory, "chat_template.json"), false);
    const alternative = existsSync(templateFile) ? readFileSync(templateFile, "utf8") : typeof templateJson?.chat_template === "string" ? templateJson.chat_template : undefined;
    chatTemplate = typeof tokenizerConfig.chat_template === "string" ? tokenizerConfig.chat_template : alternative;
  }
  for (const role of ["bos", "eos", "unk", "sep", "pad", "mask"] as const) {
    const id = config?.[`${role}_token_id`];
    if (specialIds[role] === undefined && typeof id === "number" && Number.isInteger(id) && id >= 0 && id < vocabSize) specialIds[role] = id;
  }
  // Hugging Face semantics: a role nobody named does not exist (a GGUF reader would fall back to llama.cpp defaults).
  if (specialIds.bos === undefined) specialIds.bos = null;
  if (specialIds.eos === undefined) specialIds.eos = null;

  const normalizer = tokenizer.normalizer as Json | null | undefined;
  let normalization: "NFC" | undefined;
  if (normalizer) {
    const parts = normalizer.type === "Sequence" && Array.isArray(normalizer.normalizers) ? (normalizer.normalizers as Json[]) : [normalizer];
    for (const part of parts) {
      if (part.type === "NFC") normalization = "NFC";
      else fail(`normalizer '${String(part.type)}' is not supported (loom applies NFC or nothing)`);
    }
  }

  return {
    source: tokenizerPath,
    model: "gpt2",
    tokens,
    tokenTypes,
    merges,
    pre,
    specialIds,
    addBos,
    addEos,
    chatTemplate,
    normalization,
    strip,
    ignoreMerges: typeof model.ignore_merges === "boolean" ? model.ignore_merges : undefined,
    controlOnlyAddedTokens: true,
  };
}

/**
 * Builds the tokenizer of a Hugging Face model directory (or its tokenizer.json). Byte-level BPE only.
 * Unlike a GGUF vocabulary, it applies the tokenizer.json normalizer (NFC for Qwen) and added tokens' lstrip/rstrip,
 * so it encodes as Hugging Face does; without those, it encodes as llama.cpp does.
 */
export function tokenizerFromHuggingFace(path: string, options: HuggingFaceTokenizerOptions = {}): Tokenizer {
  return new Tokenizer(vocabularySpecFromHuggingFace(path, options));
}
