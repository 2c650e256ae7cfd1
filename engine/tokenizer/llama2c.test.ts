// llama2.c tokenizer.bin loading: stories260K's tok512.bin must give exactly the vocabulary llama.cpp's converter put
// into stories260K.gguf, and malformed files must fail with the file named.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { ModelFileError } from "../model/errors.js";
import { readGgufHeader } from "../model/gguf/reader.js";
import { gguf } from "../model/gguf/writer.js";
import { tokenizerFromGguf, vocabularySpecFromGguf } from "./gguf.js";
import { tokenizerFromLlama2c, vocabularySpecFromLlama2c } from "./llama2c.js";
import { ggufTokenizerMetadata } from "./gguf-metadata.js";
import { CORPUS } from "./test-corpus.js";
import { FIXTURES, failIfMissing, missingFixtureReason, skipOutsideCi, titled } from "../testing/fixtures.js";

const directory = mkdtempSync(join(tmpdir(), "loom-llama2c-"));
afterAll(() => rmSync(directory, { recursive: true, force: true }));

const reason = missingFixtureReason(FIXTURES.stories260kTokenizer, FIXTURES.stories260kGguf);
describe.skipIf(skipOutsideCi(reason))(titled("stories260K tok512.bin", reason), () => {
  it("reads the same tokens, scores and token types llama.cpp's converter wrote into stories260K.gguf", () => {
    failIfMissing(reason);
    const fromBin = vocabularySpecFromLlama2c(FIXTURES.stories260kTokenizer);
    const fromGguf = vocabularySpecFromGguf(readGgufHeader(FIXTURES.stories260kGguf).metadata, FIXTURES.stories260kGguf);
    expect(fromBin.tokens).toEqual(fromGguf.tokens);
    expect(Array.from(fromBin.scores!)).toEqual(Array.from(fromGguf.scores!));
    expect(Array.from(fromBin.tokenTypes!)).toEqual(Array.from(fromGguf.tokenTypes!));
    expect(fromBin.specialIds).toMatchObject({ unk: 0, bos: 1, eos: 2 });
  });

  it("encodes and decodes as the GGUF vocabulary does", () => {
    failIfMissing(reason);
    const fromBin = tokenizerFromLlama2c(FIXTURES.stories260kTokenizer);
    const fromGguf = tokenizerFromGguf(readGgufHeader(FIXTURES.stories260kGguf).metadata, FIXTURES.stories260kGguf);
    for (const text of CORPUS) {
      const ids = fromBin.encode(text, { addSpecial: true, parseSpecial: true });
      expect(ids).toEqual(fromGguf.encode(text, { addSpecial: true, parseSpecial: true }));
      expect(fromBin.decode(ids)).toBe(fromGguf.decode(ids));
    }
    expect(fromBin.encode("Once upon a time", { addSpecial: true })[0]).toBe(1);
    expect([...fromBin.endOfGenerationIds]).toEqual([2]);
  });

  it("produces the GGUF keys of a llama SentencePiece vocabulary", () => {
    failIfMissing(reason);
    const entries = new Map(ggufTokenizerMetadata(FIXTURES.stories260kTokenizer));
    expect(entries.get("tokenizer.ggml.model")).toEqual(gguf.string("llama"));
    expect(entries.get("tokenizer.ggml.unknown_token_id")).toEqual(gguf.u32(0));
    expect(entries.get("tokenizer.ggml.bos_token_id")).toEqual(gguf.u32(1));
    expect(entries.get("tokenizer.ggml.eos_token_id")).toEqual(gguf.u32(2));
    expect(entries.get("tokenizer.ggml.add_bos_token")).toEqual(gguf.bool(true));
    expect((entries.get("tokenizer.ggml.tokens") as { value: readonly string[] }).value).toHaveLength(512);
    expect(entries.get("tokenizer.ggml.scores")).toMatchObject({ type: "array", itemType: "f32" });
    expect(entries.get("tokenizer.ggml.token_type")).toMatchObject({ type: "array", itemType: "i32" });
    expect(entries.has("tokenizer.ggml.merges")).toBe(false);
  });

  it("fails on truncated and malformed files, naming the file", () => {
    failIfMissing(reason);
    const bytes = readFileSync(FIXTURES.stories260kTokenizer);
    const truncated = join(directory, "truncated.bin");
    writeFileSync(truncated, bytes.subarray(0, bytes.length - 3));
    expect(() => tokenizerFromLlama2c(truncated)).toThrow(ModelFileError);
    expect(() => tokenizerFromLlama2c(truncated)).toThrow(/truncated.bin: token 511 claims/);
    const garbage = join(directory, "garbage.bin");
    writeFileSync(garbage, Buffer.from([0xff, 0xff, 0xff, 0xff, 1, 2, 3]));
    expect(() => tokenizerFromLlama2c(garbage)).toThrow(/garbage.bin: not a llama2.c tokenizer/);
    expect(() => tokenizerFromLlama2c(join(directory, "absent.bin"))).toThrow(/absent.bin: cannot read/);
  });
});
