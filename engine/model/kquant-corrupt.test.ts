// Corrupt K-quant data fails with a ModelFileError naming the tensor: a file cut inside a super-block, a
// non-finite super-block scale (d or dmin), and a K-quant matrix whose rows are not whole super-blocks.
import { copyFileSync, mkdtempSync, readFileSync, rmSync, truncateSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { GgmlType } from "../../kernels/formats/types.js";
import { ensureTestModel, testModelSkipReason } from "../../scripts/test-models.js";
import { loadModel } from "../load.js";
import { failIfMissing, skipOutsideCi, titled } from "../testing/fixtures.js";
import { ModelFileError } from "./errors.js";
import { type GgufHeader, readGgufHeader } from "./gguf/reader.js";
import { gguf, writeGguf } from "./gguf/writer.js";
import { openModelSource } from "./source.js";

const skip = testModelSkipReason("tiny-kquant");
const work = mkdtempSync(join(tmpdir(), "loom-kquant-corrupt-"));
afterAll(() => rmSync(work, { recursive: true, force: true }));

async function loadError(path: string): Promise<unknown> {
  try {
    const model = await loadModel(path, { contextSize: 64, threads: 1 });
    await model.dispose();
  } catch (error) {
    return error;
  }
  return undefined;
}

describe.skipIf(skipOutsideCi(skip))(titled("corrupt K-quant files", skip), () => {
  let original = "";
  let header: GgufHeader;
  beforeAll(async () => {
    failIfMissing(skip);
    original = await ensureTestModel("tiny-kquant", "gguf", "q4_k_m");
    header = readGgufHeader(original);
  });

  it("names the tensor a truncation cuts through, mid super-block", () => {
    const last = header.tensors.reduce((a, b) => (b.fileOffset > a.fileOffset ? b : a));
    const path = join(work, "truncated.gguf");
    copyFileSync(original, path);
    truncateSync(path, last.fileOffset + 100); // inside the first super-block of the last tensor
    expect(() => openModelSource(path)).toThrow(new RegExp(`truncated: tensor '${last.name.replace(/\./g, "\\.")}'`));
  });

  for (const [type, scaleOffset, label] of [[GgmlType.Q4_K, 0, "d"], [GgmlType.Q4_K, 2, "dmin"], [GgmlType.Q6_K, 208, "d"]] as const) {
    it(`names the tensor and block of an infinite or NaN ${GgmlType[type]} ${label}`, async () => {
      const tensor = header.tensors.find((t) => t.type === type && t.shape.length === 2)!;
      const blockBytes = type === GgmlType.Q4_K ? 144 : 210;
      const bytes = Buffer.from(readFileSync(original));
      bytes.writeUInt16LE(0x7e00, tensor.fileOffset + 3 * blockBytes + scaleOffset); // NaN in block 3
      const path = join(work, `bad-scale-${type}-${scaleOffset}.gguf`);
      writeFileSync(path, bytes);
      const error = await loadError(path);
      expect(error).toBeInstanceOf(ModelFileError);
      expect((error as Error).message).toContain(`tensor '${tensor.name}' (${GgmlType[type]}) has a non-finite scale (f16 bits 0x7e00) in block 3 of`);
    });
  }

  it("rejects a K-quant matrix whose rows are not whole 256-value super-blocks, naming it", () => {
    const path = join(work, "rows.gguf");
    writeGguf(path, [["general.architecture", gguf.string("llama")]], [
      { name: "blk.0.attn_q.weight", shape: [128, 4], type: GgmlType.Q5_K, data: new Uint8Array(2 * 176) },
    ]);
    expect(() => openModelSource(path)).toThrow(/tensor 'blk\.0\.attn_q\.weight' rows of 128 are not a multiple of the Q5_K block size 256/);
  });
});
