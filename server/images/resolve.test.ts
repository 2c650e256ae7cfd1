// Resolving a request's pending images: base64 and URL sources to RGB on their messages, in order; the limits (count,
// bytes before any decoding, pixels), bad base64, URLs fetched from a loopback server the policy allows (and refused by
// the default policy: SSRF), and every failure a 400 naming the image's block.
import { type Server, createServer } from "node:http";
import type { AddressInfo } from "node:net";
import sharp from "sharp";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ChatMessage } from "../../engine/chat/messages.js";
import { type InternalRequest, ProtocolError } from "../protocol/internal.js";
import { imageSettings } from "./limits.js";
import { resolveImages } from "./resolve.js";
import type { ImageSource, PendingImage } from "./source.js";

/** A 2x1 PNG: red, blue. */
const RED_BLUE = await sharp(Buffer.from([255, 0, 0, 0, 0, 255]), { raw: { width: 2, height: 1, channels: 3 } }).png().toBuffer();
/** A 1x1 PNG: green. */
const GREEN = await sharp(Buffer.from([0, 255, 0]), { raw: { width: 1, height: 1, channels: 3 } }).png().toBuffer();

const base64 = (bytes: Buffer, mediaType = "image/png"): ImageSource => ({ type: "base64", data: bytes.toString("base64"), mediaType });

/** A request whose pending images are `sources`, all on one user message, at offsets 0, 1, 2... */
function requestWith(sources: ImageSource[]): { request: InternalRequest; message: ChatMessage } {
  const message: ChatMessage = { role: "user", content: "abcdefgh" };
  const images: PendingImage[] = sources.map((source, index) => ({ message, offset: index, source, path: `messages[0].content[${index}]` }));
  const request: InternalRequest = {
    format: "openai", model: "m", messages: [message], images, sampling: {}, stop: [], stream: false, includeUsage: false, thinking: { enabled: false }, autoCompaction: true,
  };
  return { request, message };
}

async function refusal(sources: ImageSource[], settings = imageSettings()): Promise<ProtocolError> {
  const { request, message } = requestWith(sources);
  const error = await resolveImages(request, settings).then(() => undefined, (caught: unknown) => caught);
  expect(error).toBeInstanceOf(ProtocolError);
  expect((error as ProtocolError).kind).toBe("invalid_request");
  // Nothing is put on a message unless every image resolved.
  expect(message.images).toBeUndefined();
  return error as ProtocolError;
}

describe("resolveImages: inline images", () => {
  it("decodes each image onto its message at its offset, in order, and removes the pending list", async () => {
    const { request, message } = requestWith([base64(RED_BLUE), base64(GREEN, "image/jpeg")]);
    request.images![1]!.offset = 0; // two images at one offset keep their order
    const other: ChatMessage = { role: "user", content: "x" };
    request.messages.push(other);
    request.images!.push({ message: other, offset: 1, source: base64(GREEN), path: "messages[1].content[1]" });
    await resolveImages(request, imageSettings());
    expect(request.images).toBeUndefined();
    expect(message.images?.map(({ offset, image }) => [offset, image.width, image.height, [...image.data]])).toEqual([
      [0, 2, 1, [255, 0, 0, 0, 0, 255]],
      [0, 1, 1, [0, 255, 0]],
    ]);
    expect(other.images?.map(({ offset, image }) => [offset, [...image.data]])).toEqual([[1, [0, 255, 0]]]);
  });

  it("leaves a request without images as it is", async () => {
    const { request, message } = requestWith([]);
    delete request.images;
    await resolveImages(request, imageSettings({ limits: { maxPerRequest: 0 } }));
    expect(message.images).toBeUndefined();
  });

  it("refuses more images than maxImagesPerRequest, naming the first one over and the limit; 0 turns images off", async () => {
    const three = [base64(GREEN), base64(GREEN), base64(GREEN)];
    const error = await refusal(three, imageSettings({ limits: { maxPerRequest: 2 } }));
    expect([error.param, error.message]).toEqual(["messages[0].content[2]", "messages[0].content[2]: a request may carry at most 2 images (maxImagesPerRequest); this one carries 3"]);
    const off = await refusal([base64(GREEN)], imageSettings({ limits: { maxPerRequest: 0 } }));
    expect(off.message).toBe("messages[0].content[0]: image input is turned off on this server (maxImagesPerRequest is 0)");
  });

  it("refuses an image over maxImageBytes from its base64 length, before decoding the base64", async () => {
    // 40 base64 characters are 30 bytes; none of them is valid base64, so only the length can have been read.
    const error = await refusal([{ type: "base64", data: "!".repeat(40), mediaType: "image/png" }], imageSettings({ limits: { maxBytes: 29 } }));
    expect([error.param, error.message]).toEqual(["messages[0].content[0]", "messages[0].content[0]: the image is 30 bytes, more than the 29 bytes an image may have (maxImageBytes)"]);
    const padded = base64(GREEN);
    const size = GREEN.length;
    await expect(resolveImages(requestWith([padded]).request, imageSettings({ limits: { maxBytes: size } }))).resolves.toBeUndefined();
    expect((await refusal([padded], imageSettings({ limits: { maxBytes: size - 1 } }))).message).toMatch(new RegExp(`the image is ${size} bytes, more than the ${size - 1} bytes`));
  });

  it("refuses an image over maxImagePixels, with its size", async () => {
    const error = await refusal([base64(RED_BLUE)], imageSettings({ limits: { maxPixels: 1 } }));
    expect(error.message).toBe("messages[0].content[0]: the image is 2x1 (2 pixels), more than the 1 pixels an image may have (maxImagePixels)");
  });

  it("refuses data that is not base64, a corrupt image and bytes of another format, naming the block", async () => {
    const bad = ["AAA*", "A", "AAAAA", "AA=A", "QUJD\nREVG", "-_-_"];
    for (const data of bad) {
      const error = await refusal([{ type: "base64", data, mediaType: "image/png" }]);
      expect([error.param, error.message]).toEqual(["messages[0].content[0]", "messages[0].content[0]: the image data is not valid base64 (standard alphabet A-Z a-z 0-9 + /, = padding, no line breaks)"]);
    }
    const corrupt = Buffer.from(RED_BLUE);
    corrupt.fill(0, 20, corrupt.length - 12);
    expect((await refusal([base64(GREEN), base64(corrupt)])).message).toMatch(/^messages\[0\]\.content\[1\]: the image could not be (read|decoded) as PNG: /);
    const text = await refusal([base64(Buffer.from("GIF? no, text"), "image/gif")]);
    expect(text.message).toBe("messages[0].content[0]: the image is not a JPEG, PNG, GIF or WebP image (its first bytes are 47 49 46 3f 20 6e 6f 2c)");
  });

  it("decodes the format the bytes are, whatever media type was declared", async () => {
    const { request, message } = requestWith([base64(RED_BLUE, "image/webp")]);
    await resolveImages(request, imageSettings());
    expect([...message.images![0]!.image.data]).toEqual([255, 0, 0, 0, 0, 255]);
  });
});

describe("resolveImages: URL images", () => {
  let server: Server;
  let base: string;
  let hits = 0;
  beforeAll(async () => {
    server = createServer((req, res) => {
      hits++;
      if (req.url === "/red-blue.png") return res.writeHead(200, { "content-type": "image/png" }).end(RED_BLUE);
      if (req.url === "/moved") return res.writeHead(302, { location: "/red-blue.png" }).end();
      if (req.url === "/page") return res.writeHead(200, { "content-type": "text/html" }).end("<html><body>not an image</body></html>");
      if (req.url === "/big") return res.writeHead(200, { "content-type": "image/png" }).end(Buffer.alloc(5000));
      res.writeHead(404).end();
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  /** Loopback allowed, as read_page's tests allow it. */
  const loopback = (limits = {}) => imageSettings({ network: { allowHosts: ["127.0.0.1"] }, limits });

  it("fetches an image the policy allows, following redirects, and decodes it", async () => {
    const { request, message } = requestWith([{ type: "url", url: `${base}/red-blue.png` }, { type: "url", url: `${base}/moved` }]);
    await resolveImages(request, loopback());
    expect(message.images?.map(({ image }) => [image.width, [...image.data]])).toEqual([
      [2, [255, 0, 0, 0, 0, 255]],
      [2, [255, 0, 0, 0, 0, 255]],
    ]);
  });

  it("refuses a loopback URL under the default policy (public addresses only) without connecting", async () => {
    const before = hits;
    const error = await refusal([{ type: "url", url: `${base}/red-blue.png` }]);
    expect(error.param).toBe("messages[0].content[0]");
    expect(error.message).toMatch(/^messages\[0\]\.content\[0\]: could not fetch the image: refused: 127\.0\.0\.1 is a loopback address/);
    const mapped = await refusal([{ type: "url", url: "http://[::ffff:169.254.169.254]/latest/meta-data" }]);
    expect(mapped.message).toMatch(/could not fetch the image: refused: 169\.254\.169\.254 is a link-local address/);
    expect(hits).toBe(before);
  });

  it("refuses an error status, a body over maxImageBytes, and a page that is not an image", async () => {
    expect((await refusal([{ type: "url", url: `${base}/missing.png` }], loopback())).message).toBe(`messages[0].content[0]: could not fetch the image: ${base}/missing.png answered HTTP 404`);
    expect((await refusal([{ type: "url", url: `${base}/big` }], loopback({ maxBytes: 4999 }))).message).toBe(
      `messages[0].content[0]: the image at ${base}/big is larger than the 4999 bytes an image may have (maxImageBytes)`,
    );
    expect((await refusal([{ type: "url", url: `${base}/page` }], loopback())).message).toBe(
      `messages[0].content[0]: the image at ${base}/page is not a JPEG, PNG, GIF or WebP image (its first bytes are 3c 68 74 6d 6c 3e 3c 62) (served as text/html)`,
    );
  });
});
