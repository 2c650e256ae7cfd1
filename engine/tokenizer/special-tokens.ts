// llama.cpp's text-based special-token heuristics: finding EOT/EOM/FIM tokens by their text, marking them as control
// tokens, and building the set of tokens that end generation (EOS, EOT, <|im_end|>, <|eot_id|>, ...).
import { ModelFileError } from "../model/errors.js";
import type { SpecialTokenRole } from "./vocabulary.js";

const CONTROL = 1 << 3;
const USER_DEFINED = 1 << 4;
const NORMAL = 1 << 2;
const LSTRIP = 1 << 7;
const RSTRIP = 1 << 8;

/** Token texts that llama.cpp takes for the end-of-turn token when the file names none. */
const EOT_TEXTS = new Set([
  "<|eot_id|>", "<|im_end|>", "<|end|>", "<end_of_turn>", "<|endoftext|>", "<|end_of_text|>", "<EOT>", "_<EOT>", "[EOT]",
  "<｜end▁of▁sentence｜>", "<end_of_utterance>",
]);
const EOM_TEXTS = new Set(["<|eom_id|>"]);
const FIM_TEXTS: ReadonlyArray<[SpecialTokenRole, ReadonlySet<string>]> = [
  ["fimPre", new Set(["<|fim_prefix|>", "<fim-prefix>", "<fim_prefix>", "<｜fim▁begin｜>", "<PRE>", "▁<PRE>", "<|code_prefix|>", "<|prefix|>"])],
  ["fimSuf", new Set(["<|fim_suffix|>", "<fim-suffix>", "<fim_suffix>", "<｜fim▁hole｜>", "<SUF>", "▁<SUF>", "<|code_suffix|>", "<|suffix|>"])],
  ["fimMid", new Set(["<|fim_middle|>", "<fim-middle>", "<fim_middle>", "<｜fim▁end｜>", "<MID>", "▁<MID>", "<|code_middle|>", "<|middle|>"])],
  ["fimPad", new Set(["<|fim_pad|>", "<fim-pad>", "<fim_pad>", "<PAD>", "[PAD]"])],
  ["fimRep", new Set(["<|fim_repo|>", "<|repo_name|>", "<fim-repo>", "<REPO>", "<reponame>"])],
  ["fimSep", new Set(["<|file_sep|>"])],
];
/** Token texts that end generation in llama.cpp, whatever the file says. */
const END_OF_GENERATION_TEXTS = new Set([
  "<|eot_id|>", "<|im_end|>", "<|end|>", "<|return|>", "<|call|>", "<|flush|>", "<|calls|>", "<end_of_turn>",
  "<|endoftext|>", "</s>", "<|eom_id|>", "<EOT>", "_<EOT>", "[EOT]", "[EOS]", "<|end_of_text|>", "<end_of_utterance>",
  "<eos>", "<turn|>", "<|tool_response>", "<｜end▁of▁sentence｜>", "[e~[",
]);
/** gpt-oss tokens llama.cpp always renders as text. */
const ALWAYS_RENDERED_TEXTS = new Set(["<|channel|>", "<|message|>", "<|start|>", "<|constrain|>"]);

/**
 * Applies llama.cpp's heuristics in its order: fills unstated EOT/EOM/FIM ids from token texts (marking those tokens
 * as control tokens), then collects the end-of-generation set. Mutates `attributes` and `ids`; returns the set.
 * `mayRetype` says which tokens the heuristics may change the attributes of (llama.cpp: all).
 *
 * NOTE: where several tokens match an unstated role, llama.cpp takes whichever its hash map yields first and marks only
 * that one as a control token; loom takes the lowest id. End-of-generation texts are marked whatever the order.
 */
export function applySpecialTokenHeuristics(
  tokens: readonly string[],
  attributes: Uint16Array,
  ids: Record<SpecialTokenRole, number | undefined>,
  mayRetype: (id: number) => boolean,
): Set<number> {
  const roleSearches: ReadonlyArray<[SpecialTokenRole, ReadonlySet<string>]> = [["eot", EOT_TEXTS], ["eom", EOM_TEXTS], ...FIM_TEXTS];
  const unstated = roleSearches.filter(([role]) => ids[role] === undefined);
  if (unstated.length > 0) {
    for (let id = 0; id < tokens.length; id++) {
      for (const [role, texts] of unstated) {
        if (ids[role] === undefined && texts.has(tokens[id])) {
          ids[role] = id;
          if (mayRetype(id)) attributes[id] |= CONTROL;
        }
      }
    }
  }

  const endOfGeneration = new Set<number>();
  for (const role of ["fimPad", "fimRep", "fimSep"] as const) {
    const id = ids[role];
    if (id !== undefined) endOfGeneration.add(id);
  }
  for (let id = 0; id < tokens.length; id++) {
    if (END_OF_GENERATION_TEXTS.has(tokens[id])) {
      endOfGeneration.add(id);
      if (mayRetype(id)) attributes[id] |= CONTROL;
    }
  }
  for (let id = 0; id < tokens.length; id++) {
    if (ALWAYS_RENDERED_TEXTS.has(tokens[id]) && mayRetype(id)) attributes[id] = USER_DEFINED;
  }
  for (const role of ["eos", "eot", "eom"] as const) {
    const id = ids[role];
    if (id !== undefined) endOfGeneration.add(id);
  }

  // Harmony / Solar Open: "<|end|>" closes a message, not the generation, when "<|return|>"/"<|call|>" exist.
  const texts = new Map<string, number>();
  for (const id of endOfGeneration) texts.set(tokens[id], id);
  const end = texts.get("<|end|>");
  if (
    end !== undefined &&
    ((texts.has("<|return|>") && (texts.has("<|call|>") || texts.has("<|calls|>"))) ||
      ((texts.has("<|call|>") || texts.has("<|calls|>")) && texts.has("<|flush|>")))
  ) {
    endOfGeneration.delete(end);
    if (mayRetype(end)) attributes[end] = USER_DEFINED;
  }
  // Gemma 4 / PaddleOCR: "</s>" is an ordinary token there.
  const closingS = texts.get("</s>");
  if (closingS !== undefined && texts.has("<|tool_response>")) {
    endOfGeneration.delete(closingS);
    if (mayRetype(closingS)) attributes[closingS] = NORMAL;
  }
  return endOfGeneration;
}

/**
 * llama.cpp's per-model strip flags, chosen by GGUF `general.name` and `tokenizer.ggml.pre`: Phi-3's special tokens
 * swallow the whitespace after them (except <unk>, <s>, <|endoftext|>), and Jina v2 / ModernBERT mask tokens the
 * whitespace before them. `specialTokens` are the control, user-defined and unknown tokens.
 */
export function applyPerModelAttributes(
  source: string,
  tokenToId: ReadonlyMap<string, number>,
  attributes: Uint16Array,
  specialTokens: readonly number[],
  modelName: string | undefined,
  pre: string | undefined,
): void {
  const name = (modelName ?? "").toLowerCase();
  const require = (text: string): number => {
    const id = tokenToId.get(text);
    if (id === undefined) throw new ModelFileError(source, `a Phi-3 vocabulary (general.name '${modelName}') must have the token ${text}`);
    return id;
  };
  if (["jina-v2-de", "jina-v2-es", "jina-v2-code"].some((p) => (pre ?? "").includes(p))) {
    const mask = tokenToId.get("<mask>");
    if (mask !== undefined) attributes[mask] |= LSTRIP;
  } else if (name.includes("phi-3") || name.includes("phi3")) {
    for (const id of specialTokens) attributes[id] |= RSTRIP;
    attributes[require("</s>")] |= RSTRIP;
    for (const text of ["<unk>", "<s>", "<|endoftext|>"]) attributes[require(text)] &= ~RSTRIP;
  } else if (name.includes("modern-bert")) {
    const mask = tokenToId.get("[MASK]");
    if (mask !== undefined) attributes[mask] |= LSTRIP;
  }
}
