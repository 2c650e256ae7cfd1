// The image inputs of a parsed request before they are fetched and decoded: where each comes from (inline base64 or
// an http(s) URL), the message and offset it goes to, and the reading of `data:` and http(s) URLs into sources.
import type { ChatMessage } from "../../engine/chat/messages.js";

/** Where an image's bytes are: inline (base64, from a `data:` URL or an Anthropic base64 source) or at a URL. */
export type ImageSource =
  | { type: "base64"; data: string; /** The media type the client declared (`image/png`); the bytes decide. */ mediaType: string }
  | { type: "url"; url: string };

/** An image of a request as parsed: not yet fetched or decoded (server/images/resolve.ts does that). */
export interface PendingImage {
  /** The message it belongs to (its `images` get the decoded image). */
  message: ChatMessage;
  /** UTF-16 index into the message's content where the image sits (see ChatImage). */
  offset: number;
  source: ImageSource;
  /** The block or part it came from, for errors: `messages[0].content[2]`. */
  path: string;
}

/** The `detail` values of OpenAI's image parts. Gemma 3 sees every image at one fixed resolution, whichever is sent. */
export const IMAGE_DETAILS: readonly string[] = ["auto", "low", "high"];

/** What an image URL must be, for error messages. */
export const IMAGE_URL_RULE = "a data: URL with base64 image data (data:image/png;base64,...) or an http:// or https:// URL";

/** `data:<media type>[;parameters];base64,`: only the head is matched, never the (long) data. */
const DATA_URL_HEAD = /^data:([^;,]*)((?:;[^;,]*)*),/i;

/**
 * The source an image URL names: a `data:` URL with base64 image data, or an http(s) URL. The media type of a data
 * URL only has to be an image type: the bytes are sniffed when decoded, and they decide.
 * @returns the source, or why the URL is not one (the caller words the error in its format).
 */
export function imageSourceOfUrl(url: string): ImageSource | { refused: string } {
  if (/^data:/i.test(url)) {
    const head = DATA_URL_HEAD.exec(url.slice(0, 256));
    if (!head) return { refused: "a data: URL of the form data:image/png;base64,<data>" };
    const mediaType = head[1]!.trim().toLowerCase();
    if (!mediaType.startsWith("image/")) return { refused: `a data: URL of an image type (image/jpeg, image/png, image/gif, image/webp), not ${JSON.stringify(mediaType.slice(0, 60) || "(none)")}` };
    const parameters = head[2]!.split(";").map((parameter) => parameter.trim().toLowerCase());
    if (!parameters.includes("base64")) return { refused: "a base64 data: URL (data:image/png;base64,<data>)" };
    return { type: "base64", data: url.slice(head[0].length), mediaType };
  }
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return { refused: IMAGE_URL_RULE };
  }
  if (parsed.protocol !== "http:" && parsed.protocol !== "https:") return { refused: IMAGE_URL_RULE };
  return { type: "url", url };
}

/** An image placed in a message being built, before the message exists. */
export interface PlacedImage {
  offset: number;
  source: ImageSource;
  path: string;
}

/**
 * A message's content built from its parts in order: texts joined by `separator` (empty ones skipped when
 * `skipEmpty`), each image at the offset of the text so far (so [text "A", image, text "B"] puts it at 1, before the
 * separator).
 */
export class ContentBuilder {
  readonly #texts: string[] = [];
  #length = 0;
  readonly images: PlacedImage[] = [];

  constructor(
    private readonly separator: string,
    private readonly skipEmpty: boolean,
  ) {}

  text(text: string): void {
    if (this.skipEmpty && text.length === 0) return;
    this.#length += (this.#texts.length > 0 ? this.separator.length : 0) + text.length;
    this.#texts.push(text);
  }

  image(source: ImageSource, path: string): void {
    this.images.push({ offset: this.#length, source, path });
  }

  /** Whether nothing was added (no text kept, no image). */
  get empty(): boolean {
    return this.#texts.length === 0 && this.images.length === 0;
  }

  get content(): string {
    return this.#texts.join(this.separator);
  }

  /** The images as pending images of `message` (the message built from this content). */
  pendingOf(message: ChatMessage): PendingImage[] {
    return this.images.map((image) => ({ message, ...image }));
  }
}
