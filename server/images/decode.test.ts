// Decoding images to RGB as llama.cpp's stb_image load with 3 channels does: each format from real bytes made with
// sharp here (a 16-bit PNG written by hand), alpha dropped not composited, grey repeated, GIF's first frame, no EXIF
// rotation, and the refusals: not an image, corrupt, truncated, too many pixels.
import { crc32, deflateSync } from "node:zlib";
import sharp from "sharp";
import { describe, expect, it } from "vitest";
import { ImageDecodeError, decodeImage, sniffImageFormat } from "./decode.js";

const LIMIT = { maxPixels: 50_000_000 };

/** Raw 8-bit pixels (`channels` per pixel) as an image of `format`. */
function encode(pixels: number[], width: number, height: number, channels: 1 | 2 | 3 | 4, format: "png" | "jpeg" | "webp" | "gif"): Promise<Buffer> {
  let image = sharp(Buffer.from(pixels), { raw: { width, height, channels } });
  if (channels <= 2) image = image.toColourspace("b-w");
  if (format === "png") return image.png().toBuffer();
  if (format === "jpeg") return image.jpeg({ quality: 100 }).toBuffer();
  // exact: libwebp would otherwise zero the colour of fully transparent pixels.
  if (format === "webp") return image.webp({ lossless: true, exact: true }).toBuffer();
  return image.gif().toBuffer();
}

/** A PNG chunk: length, type, data, CRC of type and data. */
function chunk(type: string, data: Buffer): Buffer {
  const length = Buffer.alloc(4);
  length.writeUInt32BE(data.length);
  const body = Buffer.concat([Buffer.from(type, "latin1"), data]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(body));
  return Buffer.concat([length, body, crc]);
}

/** A 16-bit PNG written by hand (colour type 2, RGB; 0, grey), one row per entry of `rows`, samples big-endian. */
function png16(rows: number[][], width: number, colourType: 0 | 2): Buffer {
  const header = Buffer.alloc(13);
  header.writeUInt32BE(width, 0);
  header.writeUInt32BE(rows.length, 4);
  header[8] = 16;
  header[9] = colourType;
  const raw = Buffer.concat(rows.map((row) => {
    const line = Buffer.alloc(1 + row.length * 2); // filter type 0
    row.forEach((sample, index) => line.writeUInt16BE(sample, 1 + index * 2));
    return line;
  }));
  const signature = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  return Buffer.concat([signature, chunk("IHDR", header), chunk("IDAT", deflateSync(raw)), chunk("IEND", Buffer.alloc(0))]);
}

async function failure(bytes: Uint8Array, maxPixels = LIMIT.maxPixels): Promise<ImageDecodeError> {
  const error = await decodeImage(bytes, { maxPixels }).then(() => undefined, (caught: unknown) => caught);
  expect(error).toBeInstanceOf(ImageDecodeError);
  return error as ImageDecodeError;
}

describe("decodeImage", () => {
  it("decodes PNG, lossless WebP, GIF and JPEG to row-major 8-bit RGB", async () => {
    const pixels = [255, 0, 0, 0, 255, 0, 0, 0, 255, 255, 255, 255, 10, 20, 30, 200, 100, 50];
    for (const format of ["png", "webp"] as const) {
      const decoded = await decodeImage(await encode(pixels, 3, 2, 3, format), LIMIT);
      expect([format, decoded.format, decoded.width, decoded.height, [...decoded.data]]).toEqual([format, format, 3, 2, pixels]);
    }
    // GIF's palette holds these exact colours; a JPEG of one flat colour comes back within rounding.
    const gifPixels = [255, 0, 0, 0, 255, 0, 0, 0, 255, 255, 255, 255];
    const gif = await decodeImage(await encode(gifPixels, 2, 2, 3, "gif"), LIMIT);
    expect([gif.format, gif.width, gif.height, [...gif.data]]).toEqual(["gif", 2, 2, gifPixels]);
    const jpeg = await decodeImage(await encode(Array(16 * 16 * 3).fill(120), 16, 16, 3, "jpeg"), LIMIT);
    expect([jpeg.format, jpeg.width, jpeg.height, jpeg.data.length]).toEqual(["jpeg", 16, 16, 16 * 16 * 3]);
    for (const sample of jpeg.data) expect(Math.abs(sample - 120)).toBeLessThanOrEqual(1);
  });

  it("drops alpha without compositing: a fully transparent pixel keeps its colour (RGBA PNG, lossless WebP)", async () => {
    const rgba = [200, 100, 50, 0, 10, 20, 30, 128, 1, 2, 3, 255];
    for (const format of ["png", "webp"] as const) {
      const decoded = await decodeImage(await encode(rgba, 3, 1, 4, format), LIMIT);
      expect([...decoded.data]).toEqual([200, 100, 50, 10, 20, 30, 1, 2, 3]);
    }
  });

  it("repeats grey into R, G and B (grey, and grey with alpha: the alpha dropped)", async () => {
    const grey = await decodeImage(await encode([0, 77, 255], 3, 1, 1, "png"), LIMIT);
    expect(await sharp(await encode([0, 77, 255], 3, 1, 1, "png")).metadata().then((meta) => meta.channels)).toBe(1);
    expect([...grey.data]).toEqual([0, 0, 0, 77, 77, 77, 255, 255, 255]);
    const greyAlpha = await decodeImage(await encode([9, 0, 200, 255], 2, 1, 2, "png"), LIMIT);
    expect([...greyAlpha.data]).toEqual([9, 9, 9, 200, 200, 200]);
  });

  it("reduces 16-bit samples to their high byte, as stb_image does (RGB and grey PNGs)", async () => {
    const rgb = await decodeImage(png16([[0xffff, 0x8080, 0x01ff, 0x0000, 0x00ff, 0x7fff]], 2, 2), LIMIT);
    expect([rgb.width, rgb.height, [...rgb.data]]).toEqual([2, 1, [255, 128, 1, 0, 0, 127]]);
    const grey = await decodeImage(png16([[0xffff], [0x8080], [0x0100]], 1, 0), LIMIT);
    expect([grey.width, grey.height, [...grey.data]]).toEqual([1, 3, [255, 255, 255, 128, 128, 128, 1, 1, 1]]);
  });

  it("takes a GIF's first frame only", async () => {
    // Two frames of 2x1 stacked: red, then blue.
    const frames = [255, 0, 0, 255, 0, 0, 0, 0, 255, 0, 0, 255];
    const animated = await sharp(Buffer.from(frames), { raw: { width: 2, height: 2, channels: 3, pageHeight: 1 } }).gif({ loop: 0 }).toBuffer();
    expect(await sharp(animated).metadata().then((meta) => meta.pages)).toBe(2);
    const decoded = await decodeImage(animated, LIMIT);
    expect([decoded.width, decoded.height, [...decoded.data]]).toEqual([2, 1, [255, 0, 0, 255, 0, 0]]);
  });

  it("keeps the pixels as stored: no EXIF rotation", async () => {
    const turned = await sharp(Buffer.from([255, 0, 0, 0, 0, 255]), { raw: { width: 2, height: 1, channels: 3 } }).withMetadata({ orientation: 6 }).jpeg({ quality: 100 }).toBuffer();
    expect(await sharp(turned).metadata().then((meta) => meta.orientation)).toBe(6);
    const decoded = await decodeImage(turned, LIMIT);
    expect([decoded.width, decoded.height]).toEqual([2, 1]);
  });

  it("refuses bytes that are not a JPEG, PNG, GIF or WebP image, before libvips reads them (SVG, BMP, text, nothing)", async () => {
    const svg = Buffer.from('<svg xmlns="http://www.w3.org/2000/svg" width="1" height="1"/>');
    const bmp = Buffer.from([0x42, 0x4d, 0, 0, 0, 0]);
    for (const bytes of [svg, bmp, Buffer.from("hello"), Buffer.alloc(0)]) {
      expect((await failure(bytes)).message).toMatch(/^is not a JPEG, PNG, GIF or WebP image \(its first bytes are /);
    }
    expect((await failure(bmp)).message).toBe("is not a JPEG, PNG, GIF or WebP image (its first bytes are 42 4d 00 00 00 00)");
  });

  it("refuses a corrupt image and a truncated one, saying what libvips found", async () => {
    const png = await encode(Array(64 * 64 * 3).fill(7), 64, 64, 3, "png");
    const corrupt = Buffer.from(png);
    corrupt.fill(0xaa, 16, 40); // the header's width, height and CRC
    expect((await failure(corrupt)).message).toMatch(/^could not be (read|decoded) as PNG: /);
    expect((await failure(png.subarray(0, png.length >> 1))).message).toMatch(/^could not be (read|decoded) as PNG: /);
    const jpeg = await encode(Array(32 * 32 * 3).fill(90), 32, 32, 3, "jpeg");
    expect((await failure(jpeg.subarray(0, jpeg.length - 60))).message).toMatch(/^could not be (read|decoded) as JPEG: .*(premature end|corrupt)/i);
    expect((await failure(Buffer.from([0xff, 0xd8, 0xff, 0xe0, 1, 2, 3]))).message).toMatch(/^could not be read as JPEG/);
  });

  it("refuses an image over the pixel limit from its header, with its size", async () => {
    const png = await encode(Array(20 * 10 * 3).fill(1), 20, 10, 3, "png");
    const error = await failure(png, 199);
    expect([error.message, error.tooLarge]).toEqual(["is 20x10 (200 pixels)", { width: 20, height: 10 }]);
    expect((await decodeImage(png, { maxPixels: 200 })).width).toBe(20);
  });
});

describe("sniffImageFormat", () => {
  it("knows the four signatures, and nothing else", () => {
    expect(sniffImageFormat(Buffer.from([0xff, 0xd8, 0xff, 0xdb]))).toBe("jpeg");
    expect(sniffImageFormat(Buffer.from("\x89PNG\r\n\x1a\n", "latin1"))).toBe("png");
    expect(sniffImageFormat(Buffer.from("GIF87a"))).toBe("gif");
    expect(sniffImageFormat(Buffer.from("GIF89a"))).toBe("gif");
    expect(sniffImageFormat(Buffer.from("GIF88a"))).toBeUndefined();
    expect(sniffImageFormat(Buffer.from("RIFF\0\0\0\0WEBPVP8 "))).toBe("webp");
    expect(sniffImageFormat(Buffer.from("RIFF\0\0\0\0WAVEfmt "))).toBeUndefined();
    expect(sniffImageFormat(Buffer.from([0xff, 0xd8]))).toBeUndefined();
  });
});
