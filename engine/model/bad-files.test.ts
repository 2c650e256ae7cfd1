// Truncated, corrupt and unsupported model files must fail with a ModelFileError that names the file and problem.
import { mkdtempSync, readFileSync, rmSync, writeFileSync, mkdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FIXTURES, failIfMissing, missingFixtureReason, skipOutsideCi, titled } from "../testing/fixtures.js";
import { ModelFileError } from "./errors.js";
import { GgmlType } from "../../kernels/formats/types.js";
import { gguf, writeGguf } from "./gguf/writer.js";
import { type ModelSource, openModelSource } from "./source.js";
import { loadModel } from "../load.js";

const stories = FIXTURES.stories260kGguf;
const storiesReason = missingFixtureReason(stories);
const work = mkdtempSync(join(tmpdir(), "loom-bad-files-"));
afterAll(() => rmSync(work, { recursive: true, force: true }));

function expectModelFileError(path: string, problem: RegExp, reportedPath = path): void {
  let thrown: unknown;
  try {
    openModelSource(path);
  } catch (error) {
    thrown = error;
  }
  expect(thrown).toBeInstanceOf(ModelFileError);
  expect((thrown as ModelFileError).path).toBe(reportedPath);
  expect((thrown as Error).message).toMatch(problem);
}

describe.skipIf(skipOutsideCi(storiesReason))(titled("bad GGUF files", storiesReason), () => {
  let original = Buffer.alloc(0);
  beforeAll(() => {
    failIfMissing(storiesReason);
    original = readFileSync(stories);
  });

  it("names the file and the problem when truncated at any point", () => {
    for (const length of [0, 3, 8, 24, 100, 1000, 14_000, 200_000, original.length - 1]) {
      const path = join(work, `truncated-${length}.gguf`);
      writeFileSync(path, original.subarray(0, length));
      expectModelFileError(path, /truncated|not a GGUF|runs past|only \d+ bytes/);
    }
  });

  it("rejects files that are not GGUF", () => {
    const path = join(work, "text.gguf");
    writeFileSync(path, "this is a text file, not a model at all\n".repeat(10));
    expectModelFileError(path, /not a GGUF file/);
  });

  it("rejects unsupported versions and architectures", () => {
    const version = Buffer.from(original);
    version.writeUInt32LE(1, 4);
    const versionPath = join(work, "v1.gguf");
    writeFileSync(versionPath, version);
    expectModelFileError(versionPath, /version 1 is not supported/);

    const archPath = join(work, "mamba.gguf");
    writeGguf(archPath, [["general.architecture", gguf.string("mamba")]], [{ name: "x", shape: [4], type: GgmlType.F32, data: new Uint8Array(16) }]);
    expectModelFileError(archPath, /architecture 'mamba' is not supported/);
  });

  it("rejects tensor types it cannot read, naming the tensor and type", () => {
    const path = join(work, "iq4_nl.gguf");
    writeGguf(path, [["general.architecture", gguf.string("llama")]], [{ name: "blk.0.attn_q.weight", shape: [256], type: GgmlType.F32, data: new Uint8Array(1024) }]);
    const bytes = readFileSync(path);
    // The tensor type is the u32 after the name and the one u64 dimension; patch F32 (0) to IQ4_NL (20).
    const nameEnd = bytes.indexOf("blk.0.attn_q.weight") + "blk.0.attn_q.weight".length;
    bytes.writeUInt32LE(20, nameEnd + 4 + 8);
    writeFileSync(path, bytes);
    expectModelFileError(path, /'blk\.0\.attn_q\.weight' has type IQ4_NL, which loom does not support/);
  });

  it("survives random corruption of the header: refused with a ModelFileError naming the file, or a model that loads as the original's", async () => {
    /**
     * What a source says about the model: its config and each tensor's name, type, shape and size. NOTE: not where the
     * tensors lie: the reader does not check that they are packed in order (llama.cpp's gguf reader does), so a file
     * whose offset points at another tensor's bytes loads with those weights.
     */
    const structureOf = (source: ModelSource) => ({ config: source.config, tensors: [...source.tensors.values()].map(({ path: _, fileOffset: __, ...tensor }) => tensor) });
    const originalStructure = structureOf(openModelSource(stories));
    let seed = 12345;
    const random = () => ((seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) / 2 ** 32);
    const path = join(work, "fuzz.gguf");
    let refused = 0;
    let loaded = 0;
    for (let round = 0; round < 300; round++) {
      const bytes = Buffer.from(original);
      const flips = 1 + Math.floor(random() * 4);
      for (let i = 0; i < flips; i++) bytes[Math.floor(random() * 14_200)] = Math.floor(random() * 256);
      writeFileSync(path, bytes);
      // Opened and loaded (the loader checks each tensor's shape against the config: a corrupt shape that still lies
      // within the file is refused there).
      let outcome: { structure: ReturnType<typeof structureOf> } | { error: unknown };
      try {
        const model = await loadModel(path, { contextSize: 64, threads: 1 });
        await model.dispose();
        outcome = { structure: structureOf(openModelSource(path)) };
      } catch (error) {
        outcome = { error };
      }
      if ("structure" in outcome) {
        // What loads is the model the file held: the corruption hit bytes that describe nothing of its structure.
        expect(outcome.structure, `round ${round}`).toEqual(originalStructure);
        loaded++;
        continue;
      }
      if (!(outcome.error instanceof ModelFileError)) throw new Error(`round ${round}: ${(outcome.error as Error).stack}`);
      expect(outcome.error.path, `round ${round}`).toBe(path);
      refused++;
    }
    // The seed makes these the same 300 corruptions every run (most hit the vocabulary's strings and lengths, some the
    // tensor table): a change in how many are refused is a change in what the reader accepts. Look at which ones
    // before changing these figures.
    expect({ refused, loaded }).toEqual({ refused: 268, loaded: 32 });
  });
});

describe("bad Hugging Face directories", () => {
  it("explains a directory without config.json", () => {
    const dir = join(work, "empty-dir");
    mkdirSync(dir, { recursive: true });
    expectModelFileError(dir, /no config\.json/);
  });

  it("explains invalid config.json and unsupported architectures", () => {
    const dir = join(work, "bad-config");
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, "config.json"), "{ not json");
    expectModelFileError(dir, /not valid JSON/, join(dir, "config.json"));
    writeFileSync(join(dir, "config.json"), JSON.stringify({ architectures: ["MambaForCausalLM"] }));
    expect(() => openModelSource(dir)).toThrow(/architecture 'MambaForCausalLM' is not supported/);
  });

  it("explains missing, truncated and unsupported safetensors", () => {
    const dir = join(work, "bad-safetensors");
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, "config.json"), JSON.stringify({
      architectures: ["LlamaForCausalLM"], hidden_size: 64, intermediate_size: 128, num_hidden_layers: 1,
      num_attention_heads: 4, num_key_value_heads: 2, vocab_size: 100, max_position_embeddings: 128,
    }));
    expect(() => openModelSource(dir)).toThrow(/no model\.safetensors/);
    const header = Buffer.from(JSON.stringify({ "model.norm.weight": { dtype: "I8", shape: [64], data_offsets: [0, 64] } }));
    const length = Buffer.alloc(8);
    length.writeBigUInt64LE(BigInt(header.length));
    writeFileSync(join(dir, "model.safetensors"), Buffer.concat([length, header, Buffer.alloc(64)]));
    expect(() => openModelSource(dir)).toThrow(/dtype I8, which loom does not support/);
    const f32 = Buffer.from(JSON.stringify({ "model.norm.weight": { dtype: "F32", shape: [64], data_offsets: [0, 256] } }));
    length.writeBigUInt64LE(BigInt(f32.length));
    writeFileSync(join(dir, "model.safetensors"), Buffer.concat([length, f32, Buffer.alloc(100)]));
    expect(() => openModelSource(dir)).toThrow(/model\.safetensors: truncated: tensor 'model\.norm\.weight'/);
    length.writeBigUInt64LE(1n << 40n);
    writeFileSync(join(dir, "model.safetensors"), Buffer.concat([length, f32]));
    expect(() => openModelSource(dir)).toThrow(/header claims \d+ bytes/);
  });
});
