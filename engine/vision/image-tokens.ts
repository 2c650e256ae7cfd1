// How images enter a prompt: each is marked where it sits in its message, the chat template renders the markers, and
// the rendered text is cut there for the image's own tokens (begin marker, image tokens, end marker, as llama.cpp's
// mtmd writes Gemma 3's). An image token's id is a placeholder derived from the image's pixels, never a vocabulary
// id (always negative): the prefix cache, which keys blocks by token ids, then reuses an image's KV for the same
// pixels and never for different ones, and the runner knows the rows to take from the image's embeddings.
import { createHash, randomBytes } from "node:crypto";
import type { ChatMessage, RgbImage } from "../chat/messages.js";

/** How a model's prompt writes an image. */
export interface PromptVision {
  /** Image tokens per image. */
  tokensPerImage: number;
  /** Text before and after the image tokens (Gemma 3: `<start_of_image>`, `<end_of_image>`). */
  begin: string;
  end: string;
}

/** An image of a prepared prompt: its pixels and the index of its first image token. */
export interface PromptImage {
  start: number;
  image: RgbImage;
}

/** Every image of a conversation in prompt order, with the request field that holds it. */
export function messageImages(messages: readonly ChatMessage[]): Array<{ image: RgbImage; field: string }> {
  return messages.flatMap((message, m) =>
    sortedImages(message).map(({ image, index }) => ({ image: image.image, field: `input.messages[${m}].images[${index}]` })));
}

function sortedImages(message: ChatMessage) {
  return (message.images ?? []).map((image, index) => ({ image, index })).sort((a, b) => a.image.offset - b.image.offset || a.index - b.index);
}

/**
 * Copies of the messages with a marker in each image's place (`images` dropped), and the marker: random, so no
 * message text can hold it.
 */
export function markImages(messages: readonly ChatMessage[]): { messages: ChatMessage[]; marker: string } {
  const marker = `<loom-image-${randomBytes(12).toString("hex")}>`;
  const marked = messages.map((message) => {
    if (!message.images?.length) return message;
    const { images: _, ...rest } = message;
    let content = "";
    let at = 0;
    for (const { image } of sortedImages(message)) {
      const offset = Math.max(at, Math.min(image.offset, message.content.length));
      content += message.content.slice(at, offset) + marker;
      at = offset;
    }
    return { ...rest, content: content + message.content.slice(at) };
  });
  return { messages: marked, marker };
}

/**
 * The placeholder ids of an image's `count` tokens: negative 31-bit values from SHA-256 of its size and pixels
 * (token i from the hash of the digest and i / 8), so that two images share them only if their pixels are equal.
 */
export function imageTokenIds(image: RgbImage, count: number): number[] {
  const digest = createHash("sha256").update(`${image.width}x${image.height}:`).update(image.data).digest();
  const ids: number[] = [];
  for (let group = 0; ids.length < count; group++) {
    const words = createHash("sha256").update(digest).update(String(group)).digest();
    for (let i = 0; i < 8 && ids.length < count; i++) ids.push(-1 - (words.readUInt32LE(i * 4) & 0x7fffffff));
  }
  return ids;
}

/** Whether a prompt token is an image's placeholder. */
export function isImageToken(token: number): boolean {
  return token < 0;
}
