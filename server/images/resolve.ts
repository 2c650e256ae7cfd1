// Turns a parsed request's pending images into pixels on its messages: counted against the per-request limit, each
// one's bytes taken from its base64 (its length checked before it is decoded) or fetched from its URL, then decoded
// (decode.ts). Runs after parsing and before the request is counted or reaches the engine; every failure is a 400
// naming the image's block and the limit or the fault, and concerns that request alone.
import type { RgbImage } from "../../engine/chat/messages.js";
import { type InternalRequest, ProtocolError } from "../protocol/internal.js";
import { ImageDecodeError, decodeImage } from "./decode.js";
import { ImageFetchError, fetchImage } from "./fetch.js";
import type { ImageSettings } from "./limits.js";
import type { PendingImage } from "./source.js";

/** Standard base64, padded or not; no line breaks, no URL-safe alphabet. */
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

/**
 * Resolves `request.images`: each image decoded and put on its message's `images` (in the order the request has
 * them, so images at one offset keep their order), then `request.images` removed. Nothing is put on any message
 * unless every image resolves.
 * @throws ProtocolError("invalid_request") naming the image (`messages[0].content[2]`) and what is wrong: too many
 *   images, too many bytes or pixels, bad base64, a URL that could not be fetched, bytes that are not a JPEG, PNG, GIF
 *   or WebP image or do not decode.
 */
export async function resolveImages(request: InternalRequest, settings: ImageSettings): Promise<void> {
  const pending = request.images;
  if (pending === undefined || pending.length === 0) return;
  const { maxPerRequest } = settings.limits;
  if (pending.length > maxPerRequest) {
    const first = pending[maxPerRequest]!;
    const message = maxPerRequest === 0
      ? `${first.path}: image input is turned off on this server (maxImagesPerRequest is 0)`
      : `${first.path}: a request may carry at most ${maxPerRequest} images (maxImagesPerRequest); this one carries ${pending.length}`;
    throw new ProtocolError("invalid_request", message, first.path);
  }
  // The first failure stops the fetches still running: their images would be thrown away.
  const abort = new AbortController();
  let images: RgbImage[];
  try {
    images = await Promise.all(pending.map((image) => resolveOne(image, settings, abort.signal)));
  } catch (error) {
    abort.abort();
    throw error;
  }
  pending.forEach(({ message, offset }, index) => (message.images ??= []).push({ offset, image: images[index]! }));
  delete request.images;
}

/** One image's pixels. */
async function resolveOne(pending: PendingImage, settings: ImageSettings, signal: AbortSignal): Promise<RgbImage> {
  const { source, path } = pending;
  const { maxBytes, maxPixels } = settings.limits;
  const refuse = (message: string) => new ProtocolError("invalid_request", `${path}: ${message}`, path);
  let bytes: Buffer;
  let where = "the image";
  let servedAs = "";
  if (source.type === "base64") {
    bytes = base64Bytes(source.data, maxBytes, refuse);
  } else {
    where = `the image at ${shortUrl(source.url)}`;
    try {
      const fetched = await fetchImage(source.url, settings, signal);
      bytes = fetched.bytes;
      if (fetched.contentType !== undefined && !/^\s*image\//i.test(fetched.contentType)) servedAs = ` (served as ${fetched.contentType.slice(0, 80)})`;
    } catch (error) {
      if (!(error instanceof ImageFetchError)) throw error;
      if (error.tooLarge) throw refuse(`${where} is larger than the ${maxBytes} bytes an image may have (maxImageBytes)`);
      throw refuse(`could not fetch the image: ${error.message}`);
    }
  }
  if (signal.aborted) throw refuse("not decoded: another image of the request failed");
  try {
    const { width, height, data } = await decodeImage(bytes, { maxPixels });
    return { width, height, data };
  } catch (error) {
    if (!(error instanceof ImageDecodeError)) throw error;
    if (error.tooLarge) throw refuse(`${where} ${error.message}, more than the ${maxPixels} pixels an image may have (maxImagePixels)`);
    throw refuse(`${where} ${error.message}${servedAs}`);
  }
}

/**
 * The bytes of base64 data, its decoded size checked against `maxBytes` from its length alone, before it is decoded.
 * @throws what `refuse` makes of the problem.
 */
function base64Bytes(data: string, maxBytes: number, refuse: (message: string) => ProtocolError): Buffer {
  const padding = data.endsWith("==") ? 2 : data.endsWith("=") ? 1 : 0;
  const unpadded = data.length - padding;
  const size = Math.floor((unpadded * 3) / 4);
  if (size > maxBytes) throw refuse(`the image is ${size} bytes, more than the ${maxBytes} bytes an image may have (maxImageBytes)`);
  if (data.length === 0) throw refuse("the image data is empty");
  if (!BASE64.test(data) || unpadded % 4 === 1 || (padding > 0 && data.length % 4 !== 0)) {
    throw refuse("the image data is not valid base64 (standard alphabet A-Z a-z 0-9 + /, = padding, no line breaks)");
  }
  return Buffer.from(data, "base64");
}

/** A URL for a message, bounded. */
function shortUrl(url: string): string {
  return url.length > 200 ? `${url.slice(0, 200)}...` : url;
}
