// What image input may cost a request: how many images, how many bytes each (before decoding) and how many pixels
// (read from the header, before the full decode), and how image URLs are fetched. The config file sets the limits
// (maxImagesPerRequest, maxImageBytes, maxImagePixels; docs/api/limits.md).
import type { NetworkPolicy } from "../runs/tools/network-policy.js";
import { DEFAULT_READ_PAGE_LIMITS } from "../runs/tools/read-page.js";

/** Per-request image limits; each is refused with a 400 naming it and the image. */
export interface ImageLimits {
  /** Images in one request, stored conversation included (config `maxImagesPerRequest`). 0: image input is off. */
  maxPerRequest: number;
  /** Bytes of one image as sent or fetched, before decoding (config `maxImageBytes`). */
  maxBytes: number;
  /** Pixels (width x height) of one image, read from its header (config `maxImagePixels`). */
  maxPixels: number;
}

/** Defaults of {@link ImageLimits}: 8 images, 20 MiB, 50 megapixels. */
export const DEFAULT_IMAGE_LIMITS: ImageLimits = { maxPerRequest: 8, maxBytes: 20 * 1024 * 1024, maxPixels: 50_000_000 };

/** How a server resolves images: the limits, and where image URLs may be fetched from. */
export interface ImageSettings {
  limits: ImageLimits;
  /**
   * Addresses besides public ones that image URLs may reach: the policy of agent runs' read_page (config
   * `runs.network`); default public addresses only.
   */
  network: NetworkPolicy;
  /** The deadline of one image fetch, redirects included: read_page's (15 s). */
  fetchTimeoutMs: number;
  /** Redirects followed by a fetch: read_page's (5). */
  maxRedirects: number;
}

/** The settings of a server given some of them. */
export function imageSettings(options: { limits?: Partial<ImageLimits>; network?: NetworkPolicy } = {}): ImageSettings {
  return {
    limits: { ...DEFAULT_IMAGE_LIMITS, ...options.limits },
    network: options.network ?? {},
    fetchTimeoutMs: DEFAULT_READ_PAGE_LIMITS.timeoutMs,
    maxRedirects: DEFAULT_READ_PAGE_LIMITS.maxRedirects,
  };
}
