// The stream decoder never emits a broken character: bytes of a character split across tokens are held back until
// the character is complete, and only bytes that can never complete become U+FFFD (at the point they fail, or on flush).
import { describe, expect, it } from "vitest";
import { Tokenizer } from "./tokenizer.js";
import { BYTE_TO_CHAR } from "./unicode.js";
import { TokenType, type VocabularySpec } from "./vocabulary.js";

const HEX = (byte: number) => `<0x${byte.toString(16).toUpperCase().padStart(2, "0")}>`;

/** SentencePiece vocabulary of <unk>, <s>, </s>, the 256 byte tokens and a few pieces. */
function byteFallbackTokenizer(): Tokenizer {
  const pieces = ["▁", "▁a", "b"];
  const spec: VocabularySpec = {
    source: "stream-test",
    model: "llama",
    tokens: ["<unk>", "<s>", "</s>", ...Array.from({ length: 256 }, (_, b) => HEX(b)), ...pieces],
    tokenTypes: [TokenType.UNKNOWN, TokenType.CONTROL, TokenType.CONTROL, ...new Array(256).fill(TokenType.BYTE), ...pieces.map(() => TokenType.NORMAL)],
    scores: new Array(3 + 256 + pieces.length).fill(0),
  };
  return new Tokenizer(spec);
}

const byteToken = (byte: number) => 3 + byte;

describe("stream decoder", () => {
  const tokenizer = byteFallbackTokenizer();

  it("holds back the bytes of an emoji sent as four byte tokens until the last one arrives", () => {
    const ids = tokenizer.encode("🦙");
    const bytes = [...new TextEncoder().encode("🦙")];
    expect(ids.slice(-4)).toEqual(bytes.map(byteToken));
    const stream = tokenizer.createStreamDecoder();
    const outputs = bytes.map((byte) => stream.push(byteToken(byte)));
    expect(outputs).toEqual(["", "", "", "🦙"]);
    expect(stream.flush()).toBe("");
  });

  it("never yields U+FFFD or a lone surrogate for any split of a mixed text", () => {
    const text = "a 👩‍👩‍👧‍👦 b 中文 é 🇺🇸";
    const stream = tokenizer.createStreamDecoder();
    let joined = "";
    for (const id of tokenizer.encode(text)) {
      const piece = stream.push(id);
      expect(piece).not.toContain("\ufffd");
      expect(piece.isWellFormed()).toBe(true);
      joined += piece;
    }
    joined += stream.flush();
    expect(joined).toBe(` ${text}`); // pieces keep SentencePiece's leading space, as llama.cpp's token_to_piece does
  });

  it("replaces bytes that can never form a character, and an unfinished character at flush", () => {
    const stream = tokenizer.createStreamDecoder();
    expect(stream.push(byteToken(0xf0))).toBe("");
    expect(stream.push(byteToken(0x9f))).toBe("");
    expect(stream.push(byteToken(0x41))).toBe("\ufffdA"); // "A" cannot continue the sequence
    expect(stream.push(byteToken(0xe4))).toBe("");
    expect(stream.flush()).toBe("\ufffd");
    // After a flush the decoder starts clean.
    expect(stream.push(byteToken(0x62))).toBe("b");
  });

  it("renders control tokens only when not skipping special tokens", () => {
    const withSpecial = tokenizer.createStreamDecoder();
    const without = tokenizer.createStreamDecoder({ skipSpecial: true });
    expect(withSpecial.push(1)).toBe("<s>");
    expect(without.push(1)).toBe("");
  });

  it("holds back a character split across two byte-level BPE tokens", () => {
    // "🦙" is F0 9F A6 99: give it to the model as two tokens of two bytes each.
    const first = BYTE_TO_CHAR[0xf0] + BYTE_TO_CHAR[0x9f];
    const second = BYTE_TO_CHAR[0xa6] + BYTE_TO_CHAR[0x99];
    const bpe = new Tokenizer({
      source: "stream-test-bpe",
      model: "gpt2",
      pre: "qwen2",
      tokens: [...BYTE_TO_CHAR, first, second],
      merges: [`${BYTE_TO_CHAR[0xf0]} ${BYTE_TO_CHAR[0x9f]}`, `${BYTE_TO_CHAR[0xa6]} ${BYTE_TO_CHAR[0x99]}`],
    });
    expect(bpe.encode("🦙")).toEqual([256, 257]);
    const stream = bpe.createStreamDecoder();
    expect(stream.push(256)).toBe("");
    expect(stream.push(257)).toBe("🦙");
  });
});
