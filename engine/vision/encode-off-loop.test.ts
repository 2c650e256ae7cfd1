// Encoding an image never holds up the engine: while an image's embeddings are on their way (held here by the test,
// around the real encoder), a text request is served to its end and a new one is admitted; the image's request then
// finishes as it would have; and an image that fails to encode fails its own request only.
import sharp from "sharp";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RgbImage } from "../chat/messages.js";
import { Engine } from "../engine.js";
import { type LoadedModel, loadModel } from "../load.js";
import type { EngineEvent, EngineRequest } from "../request.js";
import { failIfMissing, skipOutsideCi, titled } from "../testing/fixtures.js";
import { ensureTestMmproj, ensureTestModel, testModelSkipReason } from "../../scripts/test-models.js";
import type { VisionEncoder } from "./encoder.js";

const skip = testModelSkipReason("tiny-gemma3");

async function collect(stream: AsyncIterable<EngineEvent>): Promise<EngineEvent[]> {
  const events: EngineEvent[] = [];
  for await (const event of stream) events.push(event);
  return events;
}

/** The model's encoder, with each answer held until the test releases it (or fails it). */
function held(encoder: VisionEncoder) {
  const gates: Array<{ release: () => void; fail: (error: Error) => void }> = [];
  const wrapped: VisionEncoder = {
    config: encoder.config, path: encoder.path, dispose: () => encoder.dispose(),
    encode: (image) => new Promise<void>((release, fail) => gates.push({ release, fail })).then(() => encoder.encode(image)),
  };
  return { wrapped, gates };
}

describe.skipIf(skipOutsideCi(skip))(titled("image encoding off the engine's steps (tiny-gemma3)", skip), () => {
  let model: LoadedModel;
  let image: RgbImage;
  beforeAll(async () => {
    failIfMissing(skip);
    const [path, mmproj] = await Promise.all([ensureTestModel("tiny-gemma3", "gguf", "f32"), ensureTestMmproj("tiny-gemma3")]);
    model = await loadModel(path, { mmproj, contextSize: 256, threads: 2 });
    const { data, info } = await sharp({ create: { width: 64, height: 48, channels: 3, background: { r: 200, g: 40, b: 90 } } }).raw().toBuffer({ resolveWithObject: true });
    image = { width: info.width, height: info.height, data: new Uint8Array(data) };
  }, 180_000);
  afterAll(() => model?.dispose());

  const withImage = (): EngineRequest => ({
    input: { messages: [{ role: "user", content: "describe", images: [{ offset: 0, image }] }] }, maxTokens: 6, sampling: { temperature: 0 }, ignoreEndOfGeneration: true,
  });
  const text: EngineRequest = { input: { messages: [{ role: "user", content: "hello" }] }, maxTokens: 6, sampling: { temperature: 0 }, ignoreEndOfGeneration: true };

  it("serves other requests while an image is encoding, then the image's request as without the wait", async () => {
    const plain = new Engine(model);
    const direct = await collect(plain.submit(withImage()));
    plain.close();
    const { wrapped, gates } = held(model.vision!);
    const engine = new Engine({ ...model, vision: wrapped });
    try {
      const imageEvents = collect(engine.submit(withImage()));
      // The image request's text before the image runs; then it waits, and a text request arriving now is served.
      while (engine.stats().running === 0) await new Promise((resolve) => setTimeout(resolve, 5));
      await new Promise((resolve) => setTimeout(resolve, 100));
      const textEvents = await collect(engine.submit(text));
      expect(textEvents.at(-1)).toMatchObject({ type: "finish", reason: "length" });
      expect(gates).toHaveLength(1);
      gates[0]!.release();
      const events = await imageEvents;
      expect(events.at(-1)).toMatchObject({ type: "finish", tokens: (direct.at(-1) as { tokens: number[] }).tokens });
    } finally {
      engine.close();
    }
  }, 60_000);

  it("encodes a fork group's image once: the n choices share the first member's encode, and fork its prompt", async () => {
    const alone = new Engine(model);
    const direct = await collect(alone.submit({ ...withImage(), sampling: { temperature: 1, seed: 3 } }));
    alone.close();
    const { wrapped, gates } = held(model.vision!);
    const engine = new Engine({ ...model, vision: wrapped });
    try {
      const members = [0, 1, 2].map((i) => collect(engine.submit({ ...withImage(), id: `img-${i}`, sampling: { temperature: 1, seed: 3 + i }, fork: { group: "img", size: 3 } })));
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect(gates).toHaveLength(1);
      gates[0]!.release();
      const events = await Promise.all(members);
      for (const each of events) expect(each.at(-1)).toMatchObject({ type: "finish" });
      expect(events[0]!.at(-1)).toMatchObject({ tokens: (direct.at(-1) as { tokens: number[] }).tokens });
      expect(engine.stats().tokens.forkedPrompt).toBeGreaterThan(0);
    } finally {
      engine.close();
    }
  }, 60_000);

  it("refuses prompt logprobs for a prompt with images (placeholder tokens have none), naming promptLogprobs", async () => {
    const engine = new Engine(model);
    const events = await collect(engine.submit({ ...withImage(), promptLogprobs: { top: 1 } }));
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ type: "error", error: { kind: "invalid_request", field: "promptLogprobs" } });
    expect(events.filter((event) => event.type === "prompt_logprobs")).toEqual([]);
    engine.close();
  });

  it("fails only the request whose image could not be encoded", async () => {
    const { wrapped, gates } = held(model.vision!);
    const engine = new Engine({ ...model, vision: wrapped });
    try {
      const failing = collect(engine.submit(withImage()));
      const passing = collect(engine.submit(withImage()));
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect(gates).toHaveLength(2);
      gates[0]!.fail(new Error("the encoder's thread died"));
      gates[1]!.release();
      const [failed, passed] = await Promise.all([failing, passing]);
      expect(failed.at(-1)).toMatchObject({ type: "error", error: { kind: "internal", message: expect.stringContaining("the encoder's thread died") } });
      expect(passed.at(-1)).toMatchObject({ type: "finish" });
    } finally {
      engine.close();
    }
  }, 60_000);
});
