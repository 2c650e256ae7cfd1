// The plain-data description every loader produces (the tokenizer.* keys of a GGUF file, plus a few Hugging Face
// extras), and its resolution into the lookup tables the tokenizer runs on, with llama.cpp's defaults applied.
import { ModelFileError } from "../model/errors.js";
import { preTokenizerSpec } from "./pre-tokenizers.js";
import { applyPerModelAttributes, applySpecialTokenHeuristics } from "./special-tokens.js";
import { utf8Length } from "./unicode.js";

/** GGUF `tokenizer.ggml.token_type` values. */
export const TokenType = {
  UNDEFINED: 0,
  NORMAL: 1,
  UNKNOWN: 2,
  CONTROL: 3,
  USER_DEFINED: 4,
  UNUSED: 5,
  BYTE: 6,
} as const;

/** Per-token attribute bits (llama.cpp's `llama_token_attr`); a token can carry several. */
export const TokenAttribute = {
  UNDEFINED: 0,
  UNKNOWN: 1 << 0,
  UNUSED: 1 << 1,
  NORMAL: 1 << 2,
  CONTROL: 1 << 3,
  USER_DEFINED: 1 << 4,
  BYTE: 1 << 5,
  NORMALIZED: 1 << 6,
  LSTRIP: 1 << 7,
  RSTRIP: 1 << 8,
  SINGLE_WORD: 1 << 9,
} as const;

const TYPE_TO_ATTRIBUTE: Record<number, number> = {
  [TokenType.UNDEFINED]: TokenAttribute.UNDEFINED,
  [TokenType.NORMAL]: TokenAttribute.NORMAL,
  [TokenType.UNKNOWN]: TokenAttribute.UNKNOWN,
  [TokenType.CONTROL]: TokenAttribute.CONTROL,
  [TokenType.USER_DEFINED]: TokenAttribute.USER_DEFINED,
  [TokenType.UNUSED]: TokenAttribute.UNUSED,
  [TokenType.BYTE]: TokenAttribute.BYTE,
};

/** Special token roles a vocabulary can name (GGUF `tokenizer.ggml.<role>_token_id`). */
export type SpecialTokenRole = "bos" | "eos" | "eot" | "eom" | "unk" | "sep" | "pad" | "mask" | "fimPre" | "fimSuf" | "fimMid" | "fimPad" | "fimRep" | "fimSep";

/**
 * Everything a tokenizer is built from, as plain data. Field meanings follow the GGUF `tokenizer.*` keys.
 * For the special ids, `undefined` means "not stated" (llama.cpp's per-model default applies) and `null` means
 * "this vocabulary has none".
 */
export interface VocabularySpec {
  /** Where the vocabulary came from (file or directory), used in every error message. */
  source: string;
  /**
   * `tokenizer.ggml.model`: "llama" (SentencePiece BPE with byte fallback), "gpt2" (byte-level BPE) or "gemma4"
   * (BPE merges over SentencePiece-style text, pre-tokenizer "gemma4" whatever `pre` says).
   */
  model: "llama" | "gpt2" | "gemma4";
  /** Token texts by id: SentencePiece pieces with U+2581 for spaces, or byte-level BPE strings. */
  tokens: readonly string[];
  /** Merge priorities for "llama" vocabularies (higher merges first). */
  scores?: ArrayLike<number>;
  /** {@link TokenType} per token; NORMAL when absent. */
  tokenTypes?: ArrayLike<number>;
  /** "left right" merge rules for "gpt2" and "gemma4" vocabularies, highest priority first. */
  merges?: readonly string[];
  /** `tokenizer.ggml.pre`: the pre-tokenizer name for "gpt2" vocabularies. */
  pre?: string;
  specialIds?: Partial<Record<SpecialTokenRole, number | null>>;
  addBos?: boolean;
  addEos?: boolean;
  /** "llama" vocabularies put a space before the text (default true). */
  addSpacePrefix?: boolean;
  /** `tokenizer.chat_template`, carried along for whoever renders prompts. */
  chatTemplate?: string;
  /** `general.name`, which llama.cpp consults for a few per-model token attributes. */
  modelName?: string;
  /** Hugging Face only: Unicode normalization applied to text before tokenizing. */
  normalization?: "NFC";
  /** Hugging Face only: added tokens that swallow whitespace to their left or right when matched. */
  strip?: ReadonlyMap<number, { lstrip: boolean; rstrip: boolean }>;
  /** Hugging Face only: overrides the pre-tokenizer's ignore-merges behaviour. */
  ignoreMerges?: boolean;
  /**
   * Hugging Face only: llama.cpp's text heuristics may turn only added tokens into control tokens (an ordinary "</s>"
   * in Qwen's vocabulary stays ordinary text, as in Hugging Face). End-of-generation ids are found either way.
   */
  controlOnlyAddedTokens?: boolean;
}

/** A vocabulary resolved into lookup tables, with llama.cpp's defaults and heuristics applied. */
export interface ResolvedVocabulary {
  readonly source: string;
  readonly kind: "spm" | "bpe";
  readonly tokens: readonly string[];
  readonly tokenToId: ReadonlyMap<string, number>;
  readonly scores: Float32Array;
  /** {@link TokenAttribute} bits per token. */
  readonly attributes: Uint16Array;
  readonly ids: Readonly<Record<SpecialTokenRole, number | undefined>>;
  readonly addBos: boolean;
  readonly addEos: boolean;
  readonly addSpacePrefix: boolean;
  readonly cleanSpaces: boolean;
  readonly ignoreMerges: boolean;
  /** BPE over SentencePiece-style text: see PreTokenizerSpec.rawUtf8. False for "spm". */
  readonly rawUtf8: boolean;
  /** See PreTokenizerSpec.wholeNewlineRuns. */
  readonly wholeNewlineRuns: boolean;
  /** Regexes of the pre-tokenizer ("bpe" only). */
  readonly preRegexes: readonly string[];
  /** "left right" -> rank ("bpe" only). */
  readonly mergeRanks: ReadonlyMap<string, number>;
  readonly endOfGeneration: ReadonlySet<number>;
  /** Control, user-defined and unknown tokens, longest text (in UTF-8 bytes) first: matched before tokenizing. */
  readonly specialTokensLongestFirst: readonly number[];
  readonly normalization?: "NFC";
  readonly chatTemplate?: string;
}

const ROLES: readonly SpecialTokenRole[] = [
  "bos", "eos", "eot", "eom", "unk", "sep", "pad", "mask", "fimPre", "fimSuf", "fimMid", "fimPad", "fimRep", "fimSep",
];

/** Builds the lookup tables for a vocabulary, applying llama.cpp's loading rules (llama-vocab.cpp `load`). */
export function resolveVocabulary(spec: VocabularySpec): ResolvedVocabulary {
  const { source } = spec;
  const count = spec.tokens.length;
  if (count === 0) throw new ModelFileError(source, "the vocabulary has no tokens");
  if (spec.model !== "llama" && spec.model !== "gpt2" && spec.model !== "gemma4") {
    throw new ModelFileError(source, `tokenizer model '${String(spec.model)}' is not supported (loom reads "llama", "gpt2" and "gemma4")`);
  }
  const kind = spec.model === "llama" ? "spm" : "bpe";

  const ids = Object.fromEntries(ROLES.map((role) => [role, undefined])) as Record<SpecialTokenRole, number | undefined>;
  let addBos: boolean;
  let addEos = false;
  let addSpacePrefix: boolean;
  let cleanSpaces: boolean;
  let ignoreMerges = false;
  let rawUtf8 = false;
  let wholeNewlineRuns = false;
  let forceAddBos = false;
  let preRegexes: readonly string[] = [];
  if (kind === "spm") {
    Object.assign(ids, { bos: 1, eos: 2, unk: 0 });
    addBos = true;
    addSpacePrefix = true;
    cleanSpaces = false;
  } else {
    // llama.cpp reads a "gemma4" model with the "gemma4" pre-tokenizer whatever the file names, and no default ids.
    const pre = preTokenizerSpec(spec.model === "gemma4" ? "gemma4" : spec.pre, source);
    if (spec.model === "gpt2") Object.assign(ids, { bos: pre.noDefaultBos ? undefined : 11, eos: 11 });
    addBos = pre.addBos;
    addSpacePrefix = false;
    cleanSpaces = pre.cleanSpaces;
    ignoreMerges = spec.ignoreMerges ?? pre.ignoreMerges;
    rawUtf8 = pre.rawUtf8;
    wholeNewlineRuns = pre.wholeNewlineRuns;
    forceAddBos = pre.forceAddBos;
    preRegexes = pre.regexes;
  }
  if (spec.addSpacePrefix !== undefined) addSpacePrefix = spec.addSpacePrefix;

  const tokens: string[] = new Array(count);
  const tokenToId = new Map<string, number>();
  const scores = new Float32Array(count);
  const attributes = new Uint16Array(count);
  for (let id = 0; id < count; id++) {
    const text = spec.tokens[id] === "" ? `[EMPTY_${id}]` : spec.tokens[id];
    // A text that appears twice (Gemma 3's vocabulary has three: "//", "<?", "#") maps to its last id, as llama.cpp's
    // token_to_id does; both ids still decode to it.
    tokens[id] = text;
    tokenToId.set(text, id);
    scores[id] = spec.scores ? spec.scores[id] ?? 0 : 0;
    const type = spec.tokenTypes ? spec.tokenTypes[id] : TokenType.NORMAL;
    attributes[id] = TYPE_TO_ATTRIBUTE[type] ?? TokenAttribute.UNDEFINED;
  }

  // Defaults that fall outside the vocabulary are dropped; stated ids outside it are ignored.
  for (const role of ROLES) {
    const fallback = ids[role];
    if (fallback !== undefined && fallback >= count) ids[role] = undefined;
    const stated = spec.specialIds?.[role];
    if (stated === null) ids[role] = undefined;
    else if (stated !== undefined && Number.isInteger(stated) && stated >= 0 && stated < count) ids[role] = stated;
  }
  if (spec.addBos !== undefined) addBos = spec.addBos;
  if (forceAddBos) addBos = true;
  if (spec.addEos !== undefined) addEos = spec.addEos;

  const mergeRanks = new Map<string, number>();
  if (kind === "bpe") {
    if (!spec.merges) throw new ModelFileError(source, `a "${spec.model}" BPE vocabulary needs merges (tokenizer.ggml.merges)`);
    spec.merges.forEach((merge, rank) => {
      // Split at the first space after the first character, as llama.cpp does; a merge without one pairs "" with "".
      const space = merge.indexOf(" ", 1);
      const key = space === -1 ? " " : `${merge.slice(0, space)} ${merge.slice(space + 1)}`;
      if (!mergeRanks.has(key)) mergeRanks.set(key, rank);
    });
  }

  const added = TokenAttribute.CONTROL | TokenAttribute.USER_DEFINED | TokenAttribute.UNKNOWN;
  const initial = spec.controlOnlyAddedTokens ? attributes.slice() : undefined;
  const endOfGeneration = applySpecialTokenHeuristics(tokens, attributes, ids, initial ? (id) => (initial[id] & added) !== 0 : () => true);

  for (const [id, { lstrip, rstrip }] of spec.strip ?? []) {
    if (id < 0 || id >= count) continue;
    if (lstrip) attributes[id] |= TokenAttribute.LSTRIP;
    if (rstrip) attributes[id] |= TokenAttribute.RSTRIP;
  }

  const specialMask = TokenAttribute.CONTROL | TokenAttribute.USER_DEFINED | TokenAttribute.UNKNOWN;
  const specialTokensLongestFirst: number[] = [];
  for (let id = 0; id < count; id++) if (attributes[id] & specialMask) specialTokensLongestFirst.push(id);
  const byteLengths = new Map(specialTokensLongestFirst.map((id) => [id, utf8Length(tokens[id])]));
  specialTokensLongestFirst.sort((a, b) => byteLengths.get(b)! - byteLengths.get(a)! || a - b);
  applyPerModelAttributes(source, tokenToId, attributes, specialTokensLongestFirst, spec.modelName, spec.pre);

  return {
    source,
    kind,
    tokens,
    tokenToId,
    scores,
    attributes,
    ids,
    addBos,
    addEos,
    addSpacePrefix,
    cleanSpaces,
    ignoreMerges,
    rawUtf8,
    wholeNewlineRuns,
    preRegexes,
    mergeRanks,
    endOfGeneration,
    specialTokensLongestFirst,
    normalization: spec.normalization,
    chatTemplate: spec.chatTemplate,
  };
}
