// MXFP4 decoding checked against llama.cpp's on random raw blocks (every code, exponents over a wide range): one layer
// whose matrices are MXFP4 zeros, so the logits of a single token are output · norm(embedding row), with a Q8_0
// embedding and an MXFP4 output matrix (matmul_mxfp4 against Q8_0 activations, as llama.cpp's CPU backend). Decoding
// the blocks identically gives the same argmax for every token up to rounding ties; a layout or exponent mistake would
// agree on none. An MXFP4 embedding (which llama.cpp's quantizer never writes, and loom has no get_rows for) is refused
// by name.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { GgmlType } from "../kernels/formats/types.js";
import { quantizeQ8_0 } from "../kernels/formats/q8_0.js";
import type { GgufTensorInput } from "./model/gguf/writer.js";
import { loadModel } from "./load.js";
import { ModelFileError } from "./model/errors.js";
import { nextTokenAgreement, writeOneLayerModel } from "./testing/decoding-check.js";
import { FIXTURES, failIfMissing, missingFixtureReason, skipOutsideCi, titled } from "./testing/fixtures.js";

const tokenizer = FIXTURES.stories260kTokenizer;
const tokenizerReason = missingFixtureReason(tokenizer);
const work = mkdtempSync(join(tmpdir(), "loom-mxfp4-"));
afterAll(() => rmSync(work, { recursive: true, force: true }));

const HIDDEN = 256;
const VOCAB = 512;

/** A seeded stream of bytes. */
function bytes(length: number, seed: number): Uint8Array {
  const out = new Uint8Array(length);
  let s = seed;
  for (let i = 0; i < length; i++) out[i] = (s = (Math.imul(s, 1664525) + 1013904223) >>> 0) >>> 24;
  return out;
}

/** Random raw MXFP4 blocks: every code, exponents 110..126 (scales 2^-18 .. 2^-2), so rows differ in scale by blocks. */
function randomMxfp4Blocks(values: number, seed: number): Uint8Array {
  const out = bytes((values / 32) * 17, seed);
  for (let b = 0; b < values / 32; b++) out[b * 17] = 110 + (out[b * 17] % 17);
  return out;
}

/** A one-layer llama GGUF: `embedding` and `output` as given, every layer matrix MXFP4 zeros (e = 0, codes 0). */
function writeModel(path: string, embedding: GgufTensorInput, output: GgufTensorInput): void {
  writeOneLayerModel(path, HIDDEN, tokenizer, embedding, output, { type: GgmlType.MXFP4, data: new Uint8Array((HIDDEN * HIDDEN / 32) * 17) });
}

const embeddingQ8_0 = (): GgufTensorInput => {
  const values = Float32Array.from(bytes(HIDDEN * VOCAB, 1), (b) => (b - 127.5) / 128);
  return { name: "token_embd.weight", shape: [HIDDEN, VOCAB], type: GgmlType.Q8_0, data: quantizeQ8_0(values) };
};

describe.skipIf(skipOutsideCi(tokenizerReason))(titled("MXFP4 decoding against llama.cpp", tokenizerReason), () => {
  beforeAll(() => failIfMissing(tokenizerReason));

  it("gives llama.cpp's next token for nearly every single-token prompt", async () => {
    const path = join(work, "mxfp4.gguf");
    writeModel(path, embeddingQ8_0(), { name: "output.weight", shape: [HIDDEN, VOCAB], type: GgmlType.MXFP4, data: randomMxfp4Blocks(HIDDEN * VOCAB, 2) });
    expect(await nextTokenAgreement(path, 40)).toBeGreaterThanOrEqual(39);
  }, 300_000);

  it("refuses an MXFP4 embedding by name (llama.cpp's quantizer never writes one; there is no MXFP4 get_rows)", async () => {
    const path = join(work, "mxfp4-embedding.gguf");
    writeModel(
      path,
      { name: "token_embd.weight", shape: [HIDDEN, VOCAB], type: GgmlType.MXFP4, data: randomMxfp4Blocks(HIDDEN * VOCAB, 3) },
      { name: "output.weight", shape: [HIDDEN, VOCAB], type: GgmlType.MXFP4, data: randomMxfp4Blocks(HIDDEN * VOCAB, 2) },
    );
    const error = await loadModel(path, { contextSize: 64, threads: 2 }).then(async (model) => {
      await model.dispose();
      return undefined;
    }, (caught: unknown) => caught);
    expect(error).toBeInstanceOf(ModelFileError);
    expect(String((error as Error).message)).toMatch(/token_embd\.weight.*MXFP4/);
  }, 120_000);
});
