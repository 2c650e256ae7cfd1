// Q4_K and Q6_K decoding checked against llama.cpp's on random raw blocks (every bit pattern of quants and packed
// scales): one layer whose matrices are zero, so the logits of a single token are output · norm(embedding row),
// with a Q6_K embedding (get_rows) and a Q4_K output matrix (matmul against Q8_K activations). Decoding both
// tables identically gives the same argmax for every token up to rounding ties; a layout mistake would agree on none.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { GgmlType } from "../kernels/formats/types.js";
import { f32ToF16 } from "../kernels/formats/f16.js";
import { nextTokenAgreement, writeOneLayerModel } from "./testing/decoding-check.js";
import { FIXTURES, failIfMissing, missingFixtureReason, skipOutsideCi, titled } from "./testing/fixtures.js";

const tokenizer = FIXTURES.stories260kTokenizer;
const tokenizerReason = missingFixtureReason(tokenizer);
const work = mkdtempSync(join(tmpdir(), "loom-kquant-"));
afterAll(() => rmSync(work, { recursive: true, force: true }));

/** Random raw K-quant blocks with sane f16 scales (every byte pattern of the rest is a valid block). */
function randomBlocks(type: GgmlType.Q4_K | GgmlType.Q6_K, rows: number, k: number, seed: number): Uint8Array {
  const blockBytes = type === GgmlType.Q4_K ? 144 : 210;
  const blocks = (rows * k) / 256;
  const bytes = new Uint8Array(blocks * blockBytes);
  let s = seed;
  for (let i = 0; i < bytes.length; i++) bytes[i] = (s = (Math.imul(s, 1664525) + 1013904223) >>> 0) >>> 24;
  const view = new DataView(bytes.buffer);
  for (let b = 0; b < blocks; b++) {
    const base = b * blockBytes;
    if (type === GgmlType.Q4_K) {
      view.setUint16(base, f32ToF16(0.002 + (b % 7) * 0.0003), true); // d
      view.setUint16(base + 2, f32ToF16(0.004), true); // dmin
    } else {
      view.setUint16(base + 208, f32ToF16(0.0005 + (b % 5) * 0.0001), true); // d
    }
  }
  return bytes;
}

describe.skipIf(skipOutsideCi(tokenizerReason))(titled("K-quant decoding against llama.cpp", tokenizerReason), () => {
  beforeAll(() => failIfMissing(tokenizerReason));
  it("gives llama.cpp's next token for nearly every single-token prompt", async () => {
    const hidden = 256;
    const vocab = 512;
    const path = join(work, "kquant.gguf");
    writeOneLayerModel(
      path, hidden, tokenizer,
      { name: "token_embd.weight", shape: [hidden, vocab], type: GgmlType.Q6_K, data: randomBlocks(GgmlType.Q6_K, vocab, hidden, 1) },
      { name: "output.weight", shape: [hidden, vocab], type: GgmlType.Q4_K, data: randomBlocks(GgmlType.Q4_K, vocab, hidden, 2) },
      { type: GgmlType.Q4_K, data: new Uint8Array((hidden * hidden / 256) * 144) },
    );
    expect(await nextTokenAgreement(path, 40)).toBeGreaterThanOrEqual(39);
  }, 300_000);
});
