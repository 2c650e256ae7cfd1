// Image bytes -> 8-bit RGB pixels with sharp (libvips), as llama.cpp's stb_image load with 3 channels gives them: JPEG,
// PNG, WebP and GIF (its first frame) only, sniffed from the bytes; alpha dropped without compositing, no EXIF
// rotation, no ICC conversion, 16-bit samples reduced to 8 bits, grey repeated into R, G and B. Runs on libuv's
// thread pool (sharp), a few images at a time server-wide, each bounded in pixels and time.
import sharp, { type OutputInfo } from "sharp";
import type { RgbImage } from "../../engine/chat/messages.js";

/** The formats decoded. Anything else (SVG, TIFF, HEIF, AVIF...) is refused before libvips sees it. */
export type ImageFormat = "jpeg" | "png" | "gif" | "webp";

/** Why bytes could not be decoded; the message says what to fix, fit to follow "the image ". */
export class ImageDecodeError extends Error {
  override readonly name = "ImageDecodeError";
  constructor(
    message: string,
    /** Set when the image has more pixels than allowed: its width and height. */
    readonly tooLarge?: { width: number; height: number },
  ) {
    super(message);
  }
}

/** The format the bytes are, from their signature, or undefined when they are none of the four. */
export function sniffImageFormat(bytes: Uint8Array): ImageFormat | undefined {
  const at = (offset: number, signature: number[]) => signature.every((byte, index) => bytes[offset + index] === byte);
  if (at(0, [0xff, 0xd8, 0xff])) return "jpeg";
  if (at(0, [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])) return "png";
  if (at(0, [0x47, 0x49, 0x46, 0x38]) && (bytes[4] === 0x37 || bytes[4] === 0x39) && bytes[5] === 0x61) return "gif"; // GIF87a, GIF89a
  if (at(0, [0x52, 0x49, 0x46, 0x46]) && at(8, [0x57, 0x45, 0x42, 0x50])) return "webp"; // RIFF....WEBP
  return undefined;
}

/** The media type of a format (for messages comparing it with a declared one). */
export function mediaTypeOf(format: ImageFormat): string {
  return `image/${format}`;
}

/**
 * Decodes at most this many images at once across the server: each decode takes a thread of libuv's pool (4 by
 * default), which DNS lookups and file reads share, and a large image's pixels while it runs.
 */
const DECODE_CONCURRENCY = 2;
/** The longest one decode may run (sharp's timeout); a 50-megapixel JPEG takes about a second. */
const DECODE_TIMEOUT_SECONDS = 20;

// One-off decodes: libvips' operation cache would only keep their pixels alive.
sharp.cache(false);

let running = 0;
const waiting: Array<() => void> = [];

/** Runs `task` once fewer than DECODE_CONCURRENCY decodes are running. */
async function limited<T>(task: () => Promise<T>): Promise<T> {
  if (running >= DECODE_CONCURRENCY) await new Promise<void>((resolve) => waiting.push(resolve));
  running++;
  try {
    return await task();
  } finally {
    running--;
    waiting.shift()?.();
  }
}

/**
 * Decodes image bytes to RGB. The pixel count is read from the header first, and an image over `maxPixels` is refused
 * before its pixels are decoded.
 * @throws ImageDecodeError for bytes that are not a JPEG, PNG, GIF or WebP image, a corrupt or truncated image, or one
 *   over `maxPixels` (with `tooLarge` set).
 */
export async function decodeImage(bytes: Uint8Array, options: { maxPixels: number }): Promise<RgbImage & { format: ImageFormat }> {
  const format = sniffImageFormat(bytes);
  if (format === undefined) {
    const start = Buffer.from(bytes.subarray(0, 8)).toString("hex").replace(/(..)(?!$)/g, "$1 ");
    throw new ImageDecodeError(`is not a JPEG, PNG, GIF or WebP image (its first bytes are ${start || "none: it is empty"})`);
  }
  const input = Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  // failOn "error": libvips' warnings (a JPEG's extraneous bytes) are common in images that decode fine; pages 1: a
  // GIF's or WebP's first frame; ignoreIcc and no autoOrient: the pixels as stored, as stb_image reads them.
  const open = (limitInputPixels: number | false) => sharp(input, { failOn: "error", limitInputPixels, ignoreIcc: true, autoOrient: false, pages: 1, page: 0 });
  return limited(async () => {
    let width: number;
    let height: number;
    try {
      // The header only (no pixel limit yet: the size is checked below, to say what it is).
      ({ width, height } = await open(false).metadata());
    } catch (error) {
      throw new ImageDecodeError(`could not be read as ${format.toUpperCase()}: ${describeSharpError(error)}`);
    }
    if (width * height > options.maxPixels) {
      throw new ImageDecodeError(`is ${width}x${height} (${width * height} pixels)`, { width, height });
    }
    let decoded: { data: Buffer; info: OutputInfo };
    try {
      decoded = await open(options.maxPixels)
        .removeAlpha()
        .toColourspace("srgb")
        .raw({ depth: "uchar" })
        .timeout({ seconds: DECODE_TIMEOUT_SECONDS })
        .toBuffer({ resolveWithObject: true });
    } catch (error) {
      throw new ImageDecodeError(`could not be decoded as ${format.toUpperCase()}: ${describeSharpError(error)}`);
    }
    const { data, info } = decoded;
    if (info.channels !== 3 || data.length !== info.width * info.height * 3) {
      throw new ImageDecodeError(`decoded to ${info.channels} channels of ${info.width}x${info.height}, not RGB`);
    }
    return { format, width: info.width, height: info.height, data: new Uint8Array(data.buffer, data.byteOffset, data.length) };
  });
}

/** A sharp error's message, on one line and bounded (libvips repeats its lines). */
function describeSharpError(error: unknown): string {
  const lines = [...new Set(String((error as Error).message ?? error).split("\n").map((line) => line.trim()).filter((line) => line !== ""))];
  const text = lines.join("; ");
  return text.length > 300 ? `${text.slice(0, 300)}...` : text;
}
