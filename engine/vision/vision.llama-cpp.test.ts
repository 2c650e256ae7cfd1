// Gemma 3 image input against llama.cpp's mtmd on the same files: tiny-gemma3 and its random-weight mmproj. The image
// embeddings (the projector's output) of six images of different sizes and formats equal the ones llama-mtmd-cli
// dumps (MTMD_DEBUG_EMBEDDINGS), and the greedy reply to an image-and-text prompt is llama-mtmd-cli's.
// The peer is a native build of the llama.cpp source node-llama-cpp ships (docs/models.md says how to build it); its
// path comes from LOOM_LLAMA_MTMD_CLI. Without it (CI does not build llama.cpp) the comparisons read what it answered
// last, recorded in testdata/llama-cpp-tiny-gemma3.json for this generator version: set LOOM_LLAMA_MTMD_CLI and
// LOOM_RECORD_VISION_REFERENCE=1 to record it again (the generator's models changed, or llama.cpp did).
import { execFile } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import sharp from "sharp";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RgbImage } from "../chat/messages.js";
import { Engine } from "../engine.js";
import { type LoadedModel, loadModel } from "../load.js";
import { failIfMissing, skipOutsideCi, titled } from "../testing/fixtures.js";
import { GENERATOR_VERSION } from "../../scripts/generate-model.js";
import { ensureTestMmproj, ensureTestModel, testModelSkipReason } from "../../scripts/test-models.js";
import { WasmVisionEncoder } from "./wasm-encoder.js";

const skip = testModelSkipReason("tiny-gemma3");
const mtmdCli = process.env.LOOM_LLAMA_MTMD_CLI;
const live = mtmdCli !== undefined && existsSync(mtmdCli);
const RECORDED = join(import.meta.dirname ?? new URL(".", import.meta.url).pathname, "testdata", "llama-cpp-tiny-gemma3.json");

/** What llama-mtmd-cli answered for the test images: embeddings (base64 f32) by image name, and the greedy reply. */
interface Recorded {
  generatorVersion: number;
  command: string;
  embeddings: Record<string, { tokens: number; width: number; values: string }>;
  greedy: string;
}

function readRecorded(): Recorded | undefined {
  return existsSync(RECORDED) ? (JSON.parse(readFileSync(RECORDED, "utf8")) as Recorded) : undefined;
}
const recorded = readRecorded();
const noPeer = live || recorded?.generatorVersion === GENERATOR_VERSION
  ? undefined
  : `LOOM_LLAMA_MTMD_CLI does not name a llama-mtmd-cli binary, and ${RECORDED} is not of generator version ${GENERATOR_VERSION}`;

/** A test image: smooth colour gradients with a few edges, `width` x `height`. */
function pattern(width: number, height: number, seed: number): Buffer {
  const data = Buffer.alloc(width * height * 3);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const at = (y * width + x) * 3;
      data[at] = (x * 255) / Math.max(1, width - 1);
      data[at + 1] = (y * 255) / Math.max(1, height - 1);
      data[at + 2] = ((x + y + seed * 37) % 64 < 32 ? 40 : 220) ^ (seed * 29);
    }
  }
  return data;
}

interface TestImage {
  name: string;
  /** The encoded file as a client sends it. */
  bytes: Buffer;
  /** What llama.cpp reads: the same file, or (WebP, which stb_image cannot read; JPEG, which it decodes otherwise) the same pixels as a PNG. */
  forLlama: Buffer;
}

async function testImages(): Promise<TestImage[]> {
  const raw = (width: number, height: number, seed: number) => sharp(pattern(width, height, seed), { raw: { width, height, channels: 3 } });
  const png = await raw(112, 112, 1).png().toBuffer();
  const wide = await raw(200, 150, 2).png().toBuffer();
  const gif = await raw(300, 97, 3).gif().toBuffer();
  const webp = await raw(64, 96, 4).webp({ lossless: true }).toBuffer();
  const tall = await raw(17, 400, 5).png().toBuffer();
  const jpeg = await raw(160, 120, 6).jpeg({ quality: 90 }).toBuffer();
  return [
    { name: "png 112x112 (the model's own size)", bytes: png, forLlama: png },
    { name: "png 200x150 (letterboxed)", bytes: wide, forLlama: wide },
    { name: "gif 300x97 (shrunk)", bytes: gif, forLlama: gif },
    { name: "webp 64x96 (enlarged)", bytes: webp, forLlama: await sharp(webp).png().toBuffer() },
    { name: "png 17x400 (thin)", bytes: tall, forLlama: tall },
    // libjpeg-turbo (sharp) and stb_image (llama.cpp) decode a JPEG to slightly different pixels (the embeddings then
    // differ by 5e-3 relative RMS here): llama.cpp gets the pixels sharp decoded, as a PNG, to compare the encoders.
    { name: "jpeg 160x120 (lossy)", bytes: jpeg, forLlama: await sharp(jpeg).png().toBuffer() },
  ];
}

async function decode(bytes: Buffer): Promise<RgbImage> {
  const { data, info } = await sharp(bytes).removeAlpha().raw().toBuffer({ resolveWithObject: true });
  return { width: info.width, height: info.height, data: new Uint8Array(data) };
}

/** Runs llama-mtmd-cli; resolves to its stdout. */
function runMtmd(args: string[], env: Record<string, string> = {}): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(mtmdCli!, args, { env: { ...process.env, ...env }, maxBuffer: 64 << 20 }, (error, stdout, stderr) => {
      if (error) reject(new Error(`llama-mtmd-cli failed: ${stderr.split("\n").slice(-5).join("\n")}`));
      else resolve(stdout);
    });
  });
}

/** Relative RMS difference of two vectors. */
function relativeRms(actual: Float32Array, expected: Float32Array): number {
  let difference = 0;
  let reference = 0;
  for (let i = 0; i < expected.length; i++) {
    difference += (actual[i]! - expected[i]!) ** 2;
    reference += expected[i]! ** 2;
  }
  return Math.sqrt(difference / reference);
}

describe.skipIf(skipOutsideCi(skip))(titled("Gemma 3 image input against llama.cpp's mtmd (tiny-gemma3)", skip), () => {
  let modelPath: string;
  let mmproj: string;
  let images: TestImage[];
  let scratch: string;
  beforeAll(async () => {
    failIfMissing(skip);
    [modelPath, mmproj, images] = await Promise.all([ensureTestModel("tiny-gemma3", "gguf", "f32"), ensureTestMmproj("tiny-gemma3"), testImages()]);
    scratch = mkdtempSync(join(tmpdir(), "loom-vision-"));
  }, 180_000);
  afterAll(() => rmSync(scratch, { recursive: true, force: true }));

  it("gives every image its tokens, and different images different embeddings", async () => {
    const encoder = await WasmVisionEncoder.load(mmproj, { threads: 2 });
    try {
      const outputs = [];
      for (const image of images) outputs.push(encoder.encode(await decode(image.bytes)));
      for (const output of outputs) expect(output.length).toBe(encoder.config.tokensPerImage * encoder.config.outputSize);
      for (const output of outputs) expect(output.every(Number.isFinite)).toBe(true);
      expect(relativeRms(outputs[0]!, outputs[1]!)).toBeGreaterThan(0.05);
      // The same pixels encode to the same bits (the prefix cache relies on it).
      expect(encoder.encode(await decode(images[0]!.bytes))).toEqual(outputs[0]);
    } finally {
      await encoder.dispose();
    }
  });

  /** llama.cpp's embeddings of one image: asked now, or as recorded. */
  async function llamaEmbeddings(image: TestImage, index: number, record?: Recorded): Promise<{ tokens: number; width: number; values: Float32Array }> {
    if (!live) {
      const entry = recorded!.embeddings[image.name]!;
      const bytes = Buffer.from(entry.values, "base64");
      return { tokens: entry.tokens, width: entry.width, values: new Float32Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength)) };
    }
    const file = join(scratch, `image-${index}`);
    const dump = join(scratch, `embeddings-${index}.bin`);
    writeFileSync(file, image.forLlama);
    // Flash attention off: llama.cpp then keeps K and V in f32, as loom does.
    await runMtmd(["-m", modelPath, "--mmproj", mmproj, "--image", file, "-p", "describe", "-n", "1", "--temp", "0", "-fa", "off", "-t", "2"], { MTMD_DEBUG_EMBEDDINGS: dump });
    const bytes = readFileSync(dump);
    const [tokens, width] = [bytes.readInt32LE(0), bytes.readInt32LE(4)];
    const values = new Float32Array(bytes.buffer.slice(bytes.byteOffset + 8, bytes.byteOffset + 8 + tokens * width * 4));
    if (record) record.embeddings[image.name] = { tokens, width, values: Buffer.from(values.buffer).toString("base64") };
    return { tokens, width, values };
  }

  /** llama-mtmd-cli's greedy reply to `image` and "describe": asked now (its stdout holds it), or as recorded. */
  async function llamaGreedy(image: TestImage, record?: Recorded): Promise<string> {
    if (!live) return recorded!.greedy;
    const file = join(scratch, "greedy.png");
    writeFileSync(file, image.forLlama);
    const stdout = await runMtmd(["-m", modelPath, "--mmproj", mmproj, "--image", file, "-p", "describe", "-n", "32", "--temp", "0", "-fa", "off", "-t", "2"]);
    if (record) record.greedy = stdout;
    return stdout;
  }

  it.skipIf(!live || process.env.LOOM_RECORD_VISION_REFERENCE !== "1")("records llama.cpp's answers for runs without it", async () => {
    const record: Recorded = {
      generatorVersion: GENERATOR_VERSION,
      command: "LOOM_LLAMA_MTMD_CLI=<llama-mtmd-cli> LOOM_RECORD_VISION_REFERENCE=1 npx vitest run engine/vision/vision.llama-cpp.test.ts",
      embeddings: {}, greedy: "",
    };
    for (const [i, image] of images.entries()) await llamaEmbeddings(image, i, record);
    await llamaGreedy(images[1]!, record);
    writeFileSync(RECORDED, `${JSON.stringify(record, null, 1)}\n`);
  }, 180_000);

  it.skipIf(noPeer)(titled(`image embeddings equal llama.cpp's within float tolerance, on six images (${live ? "llama-mtmd-cli now" : "as recorded"})`, noPeer), async () => {
    const encoder = await WasmVisionEncoder.load(mmproj, { threads: 2 });
    try {
      for (const [i, image] of images.entries()) {
        const { tokens, width, values: theirs } = await llamaEmbeddings(image, i);
        const ours = encoder.encode(await decode(image.bytes));
        expect([tokens, width], image.name).toEqual([encoder.config.tokensPerImage, encoder.config.outputSize]);
        // llama.cpp rounds activations to f16 before its f16 matmuls; loom multiplies them in f32: ~6e-4 apart.
        expect(relativeRms(ours, theirs), image.name).toBeLessThan(2e-3);
      }
    } finally {
      await encoder.dispose();
    }
  }, 180_000);

  it.skipIf(noPeer)(titled(`the greedy reply to an image and text equals llama-mtmd-cli's for 32 tokens (${live ? "now" : "as recorded"})`, noPeer), async () => {
    const stdout = await llamaGreedy(images[1]!);
    let model: LoadedModel | undefined;
    let engine: Engine | undefined;
    try {
      model = await loadModel(modelPath, { mmproj, contextSize: 256, threads: 2 });
      engine = new Engine(model);
      const image = await decode(images[1]!.bytes);
      let text = "";
      let tokens: number[] = [];
      for await (const event of engine.submit({
        input: { messages: [{ role: "user", content: "describe", images: [{ offset: 0, image }] }] },
        maxTokens: 32, sampling: { temperature: 0 }, ignoreEndOfGeneration: true,
      })) {
        if (event.type === "text") text += event.text;
        if (event.type === "finish") tokens = event.tokens;
        if (event.type === "error") throw event.error;
      }
      expect(tokens.length).toBe(32);
      expect(text.length).toBeGreaterThan(20);
      expect(stdout).toContain(text);
    } finally {
      engine?.close();
      await model?.dispose();
    }
  }, 180_000);
});
