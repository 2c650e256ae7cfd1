// Images served end to end: tiny-gemma3 with its random-weight mmproj behind the server (the real engine and vision
// encoder), sent by the official openai and @anthropic-ai/sdk clients and the AI SDK. The same image gets the same
// greedy reply in every format and counts its tokens in usage and count_tokens; the prefix cache reuses an image's KV
// for the same pixels in a later turn and never for different ones.
import { createOpenAI } from "@ai-sdk/openai";
import { generateText } from "ai";
import sharp from "sharp";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { failIfMissing, skipOutsideCi, titled } from "../engine/testing/fixtures.js";
import { ensureTestMmproj, ensureTestModel, testModelSkipReason } from "../scripts/test-models.js";
import { type ModelServer, startModelServer } from "./testing/model-server.js";

const skip = testModelSkipReason("tiny-gemma3");
/** tiny-gemma3's projector: 16 image tokens, with <start_of_image> and <end_of_image>. */
const IMAGE_TOKENS = 18;
const MAX_TOKENS = 12;

/** A PNG of smooth gradients, different for each seed. */
function png(width: number, height: number, seed: number): Promise<Buffer> {
  const data = Buffer.alloc(width * height * 3);
  for (let i = 0; i < width * height; i++) {
    const [x, y] = [i % width, Math.floor(i / width)];
    data[i * 3] = (x * 255) / width;
    data[i * 3 + 1] = (y * 255) / height;
    data[i * 3 + 2] = (seed * 97 + x * y) & 255;
  }
  return sharp(data, { raw: { width, height, channels: 3 } }).png().toBuffer();
}

describe.skipIf(skipOutsideCi(skip))(titled("Gemma 3 images through the server (tiny-gemma3 and its mmproj)", skip), () => {
  let model: ModelServer;
  let first: Buffer;
  let second: Buffer;
  beforeAll(async () => {
    failIfMissing(skip);
    const [modelPath, mmproj] = await Promise.all([ensureTestModel("tiny-gemma3", "gguf", "f32"), ensureTestMmproj("tiny-gemma3")]);
    [first, second] = await Promise.all([png(200, 150, 1), png(200, 150, 2)]);
    model = await startModelServer({ modelPath, mmproj, contextSize: 512, responses: true });
  }, 180_000);
  afterAll(() => model?.close());

  const dataUrl = (bytes: Buffer) => `data:image/png;base64,${bytes.toString("base64")}`;

  it("lists the model as taking images", async () => {
    const listed = await model.openai().models.list();
    const entry = listed.data.find((m) => m.id === model.chatModel) as unknown as { capabilities?: string[] };
    expect(entry.capabilities).toContain("vision");
  });

  it("answers the same image alike in chat completions, messages and responses, and counts its tokens", async () => {
    const openai = model.openai();
    const chat = await openai.chat.completions.create({
      model: model.chatModel, max_tokens: MAX_TOKENS, temperature: 0,
      messages: [{ role: "user", content: [{ type: "image_url", image_url: { url: dataUrl(first) } }, { type: "text", text: "describe" }] }],
    });
    const textOnly = await openai.chat.completions.create({
      model: model.chatModel, max_tokens: 1, temperature: 0, messages: [{ role: "user", content: "describe" }],
    });
    expect(chat.usage!.prompt_tokens).toBe(textOnly.usage!.prompt_tokens + IMAGE_TOKENS);
    const reply = chat.choices[0]!.message.content!;
    expect(reply.length).toBeGreaterThan(0);

    const anthropic = model.anthropic();
    const image = { type: "image" as const, source: { type: "base64" as const, media_type: "image/png" as const, data: first.toString("base64") } };
    const content = [image, { type: "text" as const, text: "describe" }];
    const message = await anthropic.messages.create({ model: model.messagesModel, max_tokens: MAX_TOKENS, temperature: 0, messages: [{ role: "user", content }] });
    expect(message.content[0]).toMatchObject({ type: "text", text: reply });
    expect(message.usage.input_tokens + (message.usage.cache_read_input_tokens ?? 0)).toBe(chat.usage!.prompt_tokens);
    const counted = await anthropic.messages.countTokens({ model: model.messagesModel, messages: [{ role: "user", content }] });
    expect(counted.input_tokens).toBe(chat.usage!.prompt_tokens);

    const response = await openai.responses.create({
      model: model.chatModel, max_output_tokens: MAX_TOKENS, temperature: 0,
      input: [{ role: "user", content: [{ type: "input_image", image_url: dataUrl(first), detail: "auto" }, { type: "input_text", text: "describe" }] }],
    });
    expect(response.output_text).toBe(reply);

    // The AI SDK's image parts, through its OpenAI provider.
    const provider = createOpenAI({ baseURL: `${model.base}/v1`, apiKey: model.key });
    const generated = await generateText({
      model: provider.chat(model.chatModel), maxOutputTokens: MAX_TOKENS, temperature: 0,
      messages: [{ role: "user", content: [{ type: "image", image: first, mediaType: "image/png" }, { type: "text", text: "describe" }] }],
    });
    expect(generated.text).toBe(reply);
  }, 120_000);

  it("reuses an image's KV for the same pixels in a later turn, and never for a different image", async () => {
    const openai = model.openai();
    const turn = (image: Buffer, text: string) => ({ role: "user" as const, content: [{ type: "text" as const, text }, { type: "image_url" as const, image_url: { url: dataUrl(image) } }] });
    const ask = (messages: Parameters<typeof openai.chat.completions.create>[0]["messages"]) =>
      openai.chat.completions.create({ model: model.chatModel, max_tokens: 4, temperature: 0, messages });
    // A long first text puts the image past the first KV blocks: a different image then shares only those.
    const lead = "Here is a picture of the garden behind the old mill, taken in the early morning light.";
    const opening = await ask([turn(first, lead)]);
    const follow = [turn(first, lead), { role: "assistant" as const, content: opening.choices[0]!.message.content! }, { role: "user" as const, content: "and the colours?" }];
    const again = await ask(follow);
    const imageEnd = opening.usage!.prompt_tokens - 8; // the image and its end marker lie before the turn's last tokens
    expect(again.usage!.prompt_tokens_details?.cached_tokens).toBeGreaterThanOrEqual(Math.floor(imageEnd / 16) * 16);
    const other = await ask([turn(second, lead), ...follow.slice(1)]);
    const cached = other.usage!.prompt_tokens_details?.cached_tokens ?? 0;
    const imageStart = imageEnd - IMAGE_TOKENS + 1;
    // (The text before the image could be shared only where its sliding-window KV is still held: none here.)
    expect(cached).toBeLessThan(imageStart);
  }, 120_000);
});
