// Image input over HTTP with the official openai and @anthropic-ai/sdk clients: /v1/models says which model takes
// images; chat completions, messages (and count_tokens) and the Responses API (a stored conversation continued) hand
// the engine decoded pixels at their offsets, from base64 and from URLs on a loopback server; a corrupt image, one
// over a limit and an address the policy refuses are 400s naming the block, and fail no other request.
//
// NOTE: the engine here is ScriptedEngine, the server tests' stand-in at the ServingEngine boundary, serving a
// ModelInfo with `vision` set: the real engine refuses images until its vision encoder lands (its end-to-end tests
// with a real model are the engine's). This checks what the server hands an engine, not what a model makes of it.
import { type Server, createServer } from "node:http";
import type { AddressInfo } from "node:net";
import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";
import sharp from "sharp";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ChatMessage } from "../engine/chat/messages.js";
import type { EngineRequest } from "../engine/request.js";
import { createEndpoints } from "./adapters/endpoints.js";
import type { InputItemsPage, ResponseRecord, ResponseStore } from "./adapters/responses/store.js";
import { StaticKeys } from "./http/auth.js";
import { ModelRegistry } from "./models.js";
import { type LoomServer, startServer } from "./server.js";
import { SCRIPTED_MODEL, ScriptedEngine } from "./testing/scripted-engine.js";

const KEY = "sk-images";
const CHAT = "service/tim-gemma-27b";
const MESSAGES = "service/gemma-marathon";
const BLIND_CHAT = "service/tim-text-27b";
const BLIND_MESSAGES = "service/text-marathon";
const VISION = { path: "/models/mmproj-gemma3.gguf", tokensPerImage: 258, imageSize: 896 };

/** A 2x1 PNG (red, blue), a 1x1 PNG (green), and the first as a data: URL. */
const RED_BLUE = await sharp(Buffer.from([255, 0, 0, 0, 0, 255]), { raw: { width: 2, height: 1, channels: 3 } }).png().toBuffer();
const GREEN = await sharp(Buffer.from([0, 255, 0]), { raw: { width: 1, height: 1, channels: 3 } }).png().toBuffer();
const RED_BLUE_URL = `data:image/png;base64,${RED_BLUE.toString("base64")}`;

/** Stored responses in memory: what the Responses API needs of a store here. */
class MemoryResponseStore implements ResponseStore {
  readonly records = new Map<string, ResponseRecord>();
  async save(record: ResponseRecord): Promise<void> {
    this.records.set(record.id, structuredClone(record));
  }
  async get(owner: string, id: string) {
    const record = this.records.get(id);
    return record && record.owner === owner ? structuredClone(record) : undefined;
  }
  async delete(owner: string, id: string): Promise<boolean> {
    return (await this.get(owner, id)) !== undefined && this.records.delete(id);
  }
  async inputItems(owner: string, id: string): Promise<InputItemsPage | undefined> {
    const record = await this.get(owner, id);
    return record && { items: record.inputItems, hasMore: false };
  }
  async deleteExpired(): Promise<number> {
    return 0;
  }
}

/** The messages of an engine request. */
const messagesOf = (request: EngineRequest | undefined) => (request?.input as { messages: ChatMessage[] }).messages;
/** A message's images as [offset, width, height, pixels]. */
const imagesOf = (message: ChatMessage | undefined) => message?.images?.map(({ offset, image }) => [offset, image.width, image.height, [...image.data]]);

describe("image input over HTTP", () => {
  const engine = new ScriptedEngine();
  const blindEngine = new ScriptedEngine();
  const store = new MemoryResponseStore();
  let server: LoomServer;
  let images: Server;
  let base: string;
  let imageBase: string;

  beforeAll(async () => {
    images = createServer((req, res) => {
      if (req.url === "/green.png") return res.writeHead(200, { "content-type": "image/png" }).end(GREEN);
      res.writeHead(404).end();
    });
    await new Promise<void>((resolve) => images.listen(0, "127.0.0.1", resolve));
    imageBase = `http://127.0.0.1:${(images.address() as AddressInfo).port}`;
    const registry = new ModelRegistry([
      { model: { ...SCRIPTED_MODEL, path: "/models/gemma3.gguf", vision: VISION }, engine, slugs: { openai: [CHAT], anthropic: [MESSAGES] }, created: 1_700_000_000 },
      { model: { ...SCRIPTED_MODEL, path: "/models/text.gguf" }, engine: blindEngine, slugs: { openai: [BLIND_CHAT], anthropic: [BLIND_MESSAGES] }, created: 1_700_000_000 },
    ]);
    const responses = { store, retentionMs: 3_600_000 };
    server = await startServer({
      registry,
      auth: new StaticKeys([KEY]),
      endpoints: createEndpoints(registry, { responses }),
      responses,
      maxBodyBytes: 1024 * 1024,
      // Loopback allowed for the image server, as read_page's tests allow it; link-local and the rest still refused.
      images: { limits: { maxPerRequest: 3 }, network: { allowHosts: ["127.0.0.1"] } },
    }, "127.0.0.1", 0);
    base = `http://127.0.0.1:${server.port}`;
    engine.script = { deltas: ["A picture."] };
  });

  afterAll(async () => {
    await server?.close();
    await new Promise<void>((resolve) => images?.close(() => resolve()));
  });

  const openai = () => new OpenAI({ apiKey: KEY, baseURL: `${base}/v1`, maxRetries: 0 });
  const anthropic = () => new Anthropic({ apiKey: KEY, baseURL: base, maxRetries: 0 });

  it("lists which models take images, in both listing shapes", async () => {
    const listed = (await openai().models.list()).data as Array<OpenAI.Models.Model & { capabilities: string[] }>;
    expect(listed.map((model) => [model.id, model.capabilities])).toEqual([
      [CHAT, ["vision"]], [MESSAGES, ["vision"]], [BLIND_CHAT, []], [BLIND_MESSAGES, []], ["gemma3", ["vision"]], ["default", ["vision"]], ["text", []],
    ]);
    const page = await anthropic().models.list();
    expect(page.data.slice(0, 4).map((model) => [model.id, model.capabilities?.image_input.supported])).toEqual([[CHAT, true], [MESSAGES, true], [BLIND_CHAT, false], [BLIND_MESSAGES, false]]);
  });

  it("chat completions: a data: URL and a URL fetched from the loopback server reach the engine as RGB at their offsets", async () => {
    const completion = await openai().chat.completions.create({
      model: CHAT,
      messages: [{
        role: "user",
        content: [
          { type: "text", text: "Compare" },
          { type: "image_url", image_url: { url: RED_BLUE_URL, detail: "low" } },
          { type: "text", text: "and" },
          { type: "image_url", image_url: { url: `${imageBase}/green.png` } },
        ],
      }],
    });
    expect(completion.choices[0]!.message.content).toBe("A picture.");
    const [message] = messagesOf(engine.requests.at(-1));
    expect(message!.content).toBe("Compare\nand");
    expect(imagesOf(message)).toEqual([[7, 2, 1, [255, 0, 0, 0, 0, 255]], [11, 1, 1, [0, 255, 0]]]);
  });

  it("messages: base64 and URL blocks, a tool_result's image, and count_tokens with an image", async () => {
    const client = anthropic();
    const reply = await client.messages.create({
      model: MESSAGES,
      max_tokens: 50,
      messages: [
        { role: "user", content: "Take a screenshot." },
        { role: "assistant", content: [{ type: "tool_use", id: "toolu_1", name: "screenshot", input: {} }] },
        {
          role: "user",
          content: [
            { type: "tool_result", tool_use_id: "toolu_1", content: [{ type: "image", source: { type: "base64", media_type: "image/png", data: RED_BLUE.toString("base64") } }] },
            { type: "text", text: "And this?" },
            { type: "image", source: { type: "url", url: `${imageBase}/green.png` } },
          ],
        },
      ],
    });
    expect(reply.content).toMatchObject([{ type: "text", text: "A picture." }]);
    const messages = messagesOf(engine.requests.at(-1));
    expect(messages.map((message) => [message.role, message.content, imagesOf(message)])).toEqual([
      ["user", "Take a screenshot.", undefined],
      ["assistant", "", undefined],
      ["tool", "", [[0, 2, 1, [255, 0, 0, 0, 0, 255]]]],
      ["user", "And this?", [[9, 1, 1, [0, 255, 0]]]],
    ]);
    const counted = await client.messages.countTokens({ model: MESSAGES, messages: [{ role: "user", content: [{ type: "image", source: { type: "base64", media_type: "image/png", data: GREEN.toString("base64") } }, { type: "text", text: "What is it?" }] }] });
    expect(counted.input_tokens).toBe(30);
    expect(imagesOf(messagesOf(engine.requests.at(-1))[0])).toEqual([[0, 1, 1, [0, 255, 0]]]);
  });

  it("Responses: an input_image is stored as sent and shown to the model again when the response is continued", async () => {
    const client = openai();
    const first = await client.responses.create({ model: CHAT, input: [{ role: "user", content: [{ type: "input_text", text: "Look" }, { type: "input_image", image_url: RED_BLUE_URL, detail: "auto" }] }] });
    expect(imagesOf(messagesOf(engine.requests.at(-1))[0])).toEqual([[4, 2, 1, [255, 0, 0, 0, 0, 255]]]);
    const items = await client.responses.inputItems.list(first.id);
    expect(items.data[0]).toMatchObject({ type: "message", role: "user", content: [{ type: "input_text", text: "Look" }, { type: "input_image", image_url: RED_BLUE_URL, detail: "auto" }] });
    await client.responses.create({ model: CHAT, previous_response_id: first.id, input: [{ role: "user", content: [{ type: "input_image", image_url: `${imageBase}/green.png`, detail: "high" }] }] });
    const messages = messagesOf(engine.requests.at(-1));
    expect(messages.map((message) => [message.role, message.content, imagesOf(message)])).toEqual([
      ["user", "Look", [[4, 2, 1, [255, 0, 0, 0, 0, 255]]]],
      ["assistant", "A picture.", undefined],
      ["user", "", [[0, 1, 1, [0, 255, 0]]]],
    ]);
    const refused = await client.responses.create({ model: CHAT, input: [{ role: "user", content: [{ type: "input_image", file_id: "file-1", detail: "auto" }] }] }).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(OpenAI.BadRequestError);
    expect((refused as InstanceType<typeof OpenAI.BadRequestError>).param).toBe("input[0].content[0].file_id");
  });

  it("answers a corrupt image with a 400 naming its block, while a request sent beside it succeeds", async () => {
    const client = openai();
    const corrupt = Buffer.from(RED_BLUE);
    corrupt.fill(0x55, 16, 30);
    const [bad, good] = await Promise.allSettled([
      client.chat.completions.create({ model: CHAT, messages: [{ role: "user", content: [{ type: "text", text: "x" }, { type: "image_url", image_url: { url: `data:image/png;base64,${corrupt.toString("base64")}` } }] }] }),
      client.chat.completions.create({ model: CHAT, messages: [{ role: "user", content: [{ type: "image_url", image_url: { url: RED_BLUE_URL } }] }] }),
    ]);
    expect(good.status).toBe("fulfilled");
    expect(bad.status).toBe("rejected");
    const error = (bad as PromiseRejectedResult).reason as InstanceType<typeof OpenAI.BadRequestError>;
    expect(error).toBeInstanceOf(OpenAI.BadRequestError);
    expect(error.param).toBe("messages[0].content[1]");
    expect(error.message).toMatch(/messages\[0\]\.content\[1\]: the image could not be (read|decoded) as PNG/);
    const anthropicError = await anthropic().messages.create({ model: MESSAGES, max_tokens: 5, messages: [{ role: "user", content: [{ type: "image", source: { type: "base64", media_type: "image/gif", data: Buffer.from("not a gif").toString("base64") } }] }] }).catch((caught: unknown) => caught);
    expect(anthropicError).toBeInstanceOf(Anthropic.BadRequestError);
    expect((anthropicError as Error).message).toMatch(/messages\[0\]\.content\[0\]: the image is not a JPEG, PNG, GIF or WebP image/);
  });

  it("refuses what the limits and the address policy refuse, naming the block; and images for a model without vision", async () => {
    const client = openai();
    const refusal = async (model: string, content: OpenAI.ChatCompletionContentPart[]) => {
      const error = await client.chat.completions.create({ model, messages: [{ role: "user", content }] }).catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(OpenAI.BadRequestError);
      const bad = error as InstanceType<typeof OpenAI.BadRequestError>;
      return [bad.param, bad.message];
    };
    const image = (url: string): OpenAI.ChatCompletionContentPart => ({ type: "image_url", image_url: { url } });
    expect(await refusal(CHAT, [image(RED_BLUE_URL), image(RED_BLUE_URL), image(RED_BLUE_URL), image(RED_BLUE_URL)])).toEqual([
      "messages[0].content[3]", expect.stringMatching(/a request may carry at most 3 images \(maxImagesPerRequest\); this one carries 4/),
    ]);
    expect(await refusal(CHAT, [image("http://169.254.169.254/latest/meta-data/")])).toEqual([
      "messages[0].content[0]", expect.stringMatching(/could not fetch the image: refused: 169\.254\.169\.254 is a link-local address/),
    ]);
    expect(await refusal(CHAT, [image(`${imageBase}/missing.png`)])).toEqual(["messages[0].content[0]", expect.stringMatching(/answered HTTP 404/)]);
    expect(await refusal(BLIND_CHAT, [image(RED_BLUE_URL)])).toEqual(["messages[0].content[0]", expect.stringMatching(/has no vision input/)]);
    expect(blindEngine.requests).toHaveLength(0);
  });

  it("refuses a body over maxBodyBytes with 413 and the limit: inline images count toward it", async () => {
    const noise = await sharp(Buffer.from(Array.from({ length: 700 * 700 * 3 }, (_, index) => (index * 7919) % 251)), { raw: { width: 700, height: 700, channels: 3 } }).png({ compressionLevel: 0 }).toBuffer();
    const error = await openai().chat.completions.create({ model: CHAT, messages: [{ role: "user", content: [{ type: "image_url", image_url: { url: `data:image/png;base64,${noise.toString("base64")}` } }] }] }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(OpenAI.APIError);
    expect((error as InstanceType<typeof OpenAI.APIError>).status).toBe(413);
    expect((error as Error).message).toMatch(/exceeds the limit of 1048576 bytes/);
  });
});
