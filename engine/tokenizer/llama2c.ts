// Loads a llama2.c `tokenizer.bin`: an int32 max token length, then for each token a float32 score, an int32 byte
// length and the token's bytes. The vocabulary is turned into a SentencePiece one the way llama.cpp's
// convert-llama2c-to-ggml does it: ids 0, 1, 2 are <unk>, <s>, </s>; `<0xXX>` pieces are byte tokens; spaces become U+2581.
import { readFileSync } from "node:fs";
import { ModelFileError } from "../model/errors.js";
import { Tokenizer } from "./tokenizer.js";
import { TokenType, type VocabularySpec } from "./vocabulary.js";

const BYTE_TOKEN = /^<0x[0-9A-Fa-f]{1,2}>$/;

/** Reads a llama2.c tokenizer file into a vocabulary description ("llama" model with scores and token types). */
export function vocabularySpecFromLlama2c(path: string): VocabularySpec {
  let file: Buffer;
  try {
    file = readFileSync(path);
  } catch (error) {
    throw new ModelFileError(path, `cannot read llama2.c tokenizer: ${(error as Error).message}`);
  }
  if (file.length < 4) throw new ModelFileError(path, `not a llama2.c tokenizer: only ${file.length} bytes`);
  const maxTokenLength = file.readInt32LE(0);
  if (maxTokenLength <= 0 || maxTokenLength > 1 << 16) {
    throw new ModelFileError(path, `not a llama2.c tokenizer: max token length ${maxTokenLength} is implausible`);
  }
  const decoder = new TextDecoder("utf-8", { fatal: true });
  const tokens: string[] = [];
  const scores: number[] = [];
  const types: number[] = [];
  let offset = 4;
  while (offset < file.length) {
    const id = tokens.length;
    if (offset + 8 > file.length) throw new ModelFileError(path, `truncated: token ${id} header at byte ${offset} runs past the end`);
    const score = file.readFloatLE(offset);
    const length = file.readInt32LE(offset + 4);
    offset += 8;
    if (length < 0 || length > maxTokenLength || offset + length > file.length) {
      throw new ModelFileError(path, `token ${id} claims ${length} bytes at byte ${offset} (max token length ${maxTokenLength}, file ${file.length} bytes)`);
    }
    let text: string;
    try {
      text = decoder.decode(file.subarray(offset, offset + length));
    } catch {
      throw new ModelFileError(path, `token ${id} at byte ${offset} is not valid UTF-8`);
    }
    offset += length;
    let type: number = TokenType.NORMAL;
    if (id === 0) {
      text = "<unk>";
      type = TokenType.UNKNOWN;
    } else if (id === 1) {
      text = "<s>";
      type = TokenType.CONTROL;
    } else if (id === 2) {
      text = "</s>";
      type = TokenType.CONTROL;
    } else if (text === "") {
      type = TokenType.CONTROL;
    } else if (BYTE_TOKEN.test(text)) {
      type = TokenType.BYTE;
    }
    tokens.push(text.replaceAll(" ", "\u2581"));
    scores.push(score);
    types.push(type);
  }
  if (tokens.length < 3) throw new ModelFileError(path, `a llama2.c tokenizer needs at least <unk>, <s> and </s>; found ${tokens.length} tokens`);
  return {
    source: path,
    model: "llama",
    tokens,
    scores: Float32Array.from(scores),
    tokenTypes: Int32Array.from(types),
    specialIds: { unk: 0, bos: 1, eos: 2 },
    addBos: true,
  };
}

/** Builds the tokenizer of a llama2.c `tokenizer.bin` file. Throws ModelFileError naming the file if it is malformed. */
export function tokenizerFromLlama2c(path: string): Tokenizer {
  return new Tokenizer(vocabularySpecFromLlama2c(path));
}
