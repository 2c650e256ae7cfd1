// Reads a llama2.c tokenizer.bin (SentencePiece vocabulary: pieces and scores) and rebuilds the Hugging Face
// tokenizer.json that transformers' LlamaConverter would write for the same vocabulary (BPE with byte fallback).
import { readFileSync } from "node:fs";

/** A SentencePiece vocabulary as llama2.c exports it, with the pieces restored to SentencePiece spelling. */
export interface Llama2cVocabulary {
  /** Pieces by id, with "▁" for spaces and "<s>" / "</s>" for BOS / EOS (llama2.c writes " " and "\n<s>\n"). */
  pieces: string[];
  scores: number[];
}

const SPACE_MARK = "\u2581";
const BYTE_PIECE = /^<0x[0-9A-F]{2}>$/;

/** Parses tokenizer.bin: i32 max piece length, then per piece f32 score, i32 byte length, UTF-8 bytes. */
export function readLlama2cTokenizer(path: string): Llama2cVocabulary {
  const bytes = readFileSync(path);
  const pieces: string[] = [];
  const scores: number[] = [];
  let offset = 4;
  while (offset < bytes.length) {
    if (offset + 8 > bytes.length) throw new Error(`${path}: truncated at byte ${offset}`);
    const score = bytes.readFloatLE(offset);
    const length = bytes.readInt32LE(offset + 4);
    offset += 8;
    if (length < 0 || offset + length > bytes.length) throw new Error(`${path}: piece ${pieces.length} overruns the file`);
    const text = bytes.toString("utf8", offset, offset + length);
    offset += length;
    const id = pieces.length;
    pieces.push(id === 1 && text === "\n<s>\n" ? "<s>" : id === 2 && text === "\n</s>\n" ? "</s>" : text.replaceAll(" ", SPACE_MARK));
    scores.push(score);
  }
  return { pieces, scores };
}

/** Whether a piece is one of SentencePiece's control/unknown/byte pieces rather than a normal one. */
export function isSpecialPiece(id: number, piece: string): boolean {
  return id <= 2 || BYTE_PIECE.test(piece);
}

/**
 * BPE merges for a SentencePiece vocabulary, as transformers' SentencePieceExtractor derives them: every split of a
 * piece into two pieces of the vocabulary, ordered by the merged piece's score (highest first), ties by ids.
 */
function mergesOf(vocabulary: Llama2cVocabulary, ids: Map<string, number>): Array<[string, string]> {
  const merges: Array<{ left: string; right: string; score: number; leftId: number; rightId: number; order: number }> = [];
  vocabulary.pieces.forEach((piece, id) => {
    if (isSpecialPiece(id, piece)) return;
    const chars = Array.from(piece);
    for (let cut = 1; cut < chars.length; cut++) {
      const left = chars.slice(0, cut).join("");
      const right = chars.slice(cut).join("");
      const leftId = ids.get(left);
      const rightId = ids.get(right);
      if (leftId !== undefined && rightId !== undefined) {
        merges.push({ left, right, score: vocabulary.scores[id], leftId, rightId, order: id });
      }
    }
  });
  merges.sort((a, b) => b.score - a.score || a.order - b.order || a.leftId - b.leftId || a.rightId - b.rightId);
  return merges.map((m) => [m.left, m.right]);
}

/** The tokenizer.json (as a plain object) of a Llama 2 style SentencePiece vocabulary. */
export function llama2TokenizerJson(vocabulary: Llama2cVocabulary): Record<string, unknown> {
  const ids = new Map<string, number>();
  vocabulary.pieces.forEach((piece, id) => ids.set(piece, id));
  const special = (id: number) => ({ id, content: vocabulary.pieces[id], single_word: false, lstrip: false, rstrip: false, normalized: false, special: true });
  return {
    version: "1.0",
    truncation: null,
    padding: null,
    added_tokens: [special(0), special(1), special(2)],
    normalizer: {
      type: "Sequence",
      normalizers: [{ type: "Prepend", prepend: SPACE_MARK }, { type: "Replace", pattern: { String: " " }, content: SPACE_MARK }],
    },
    pre_tokenizer: null,
    post_processor: {
      type: "TemplateProcessing",
      single: [{ SpecialToken: { id: "<s>", type_id: 0 } }, { Sequence: { id: "A", type_id: 0 } }],
      pair: [{ SpecialToken: { id: "<s>", type_id: 0 } }, { Sequence: { id: "A", type_id: 0 } }, { SpecialToken: { id: "<s>", type_id: 1 } }, { Sequence: { id: "B", type_id: 1 } }],
      special_tokens: { "<s>": { id: "<s>", ids: [1], tokens: ["<s>"] } },
    },
    decoder: {
      type: "Sequence",
      decoders: [
        { type: "Replace", pattern: { String: SPACE_MARK }, content: " " },
        { type: "ByteFallback" },
        { type: "Fuse" },
        { type: "Strip", content: " ", start: 1, stop: 0 },
      ],
    },
    model: {
      type: "BPE",
      dropout: null,
      unk_token: "<unk>",
      continuing_subword_prefix: null,
      end_of_word_suffix: null,
      fuse_unk: true,
      byte_fallback: true,
      ignore_merges: false,
      vocab: Object.fromEntries(vocabulary.pieces.map((piece, id) => [piece, id])),
      merges: mergesOf(vocabulary, ids),
    },
  };
}
