// An image URL's bytes, fetched through the SSRF-guarded client agent runs use for read_page (safe-http.ts): the same
// address policy, redirects re-checked at each hop, and the whole exchange bounded in time and in bytes.
import { SafeHttpError, safeRequest } from "../runs/tools/safe-http.js";
import type { ImageSettings } from "./limits.js";

/** Why an image URL gave no image; `tooLarge` when its body passed the byte limit. */
export class ImageFetchError extends Error {
  override readonly name = "ImageFetchError";
  constructor(
    message: string,
    readonly tooLarge = false,
  ) {
    super(message);
  }
}

/**
 * The body of a successful (2xx) answer to GET `url`, at most `settings.limits.maxBytes` bytes.
 * @throws ImageFetchError naming what failed: the address refused by the policy, the deadline, the size, the status.
 */
export async function fetchImage(url: string, settings: ImageSettings, signal?: AbortSignal): Promise<{ bytes: Buffer; contentType: string | undefined }> {
  let response;
  try {
    response = await safeRequest({
      url,
      timeoutMs: settings.fetchTimeoutMs,
      maxBytes: settings.limits.maxBytes,
      maxRedirects: settings.maxRedirects,
      policy: settings.network,
      headers: { accept: "image/jpeg, image/png, image/webp, image/gif;q=0.9, */*;q=0.1" },
      ...(signal ? { signal } : {}),
    });
  } catch (error) {
    if (error instanceof SafeHttpError) throw new ImageFetchError(error.message, error.code === "too_large");
    throw error;
  }
  if (response.status < 200 || response.status > 299) throw new ImageFetchError(`${response.url} answered HTTP ${response.status}`);
  const contentType = response.headers["content-type"];
  return { bytes: response.body, contentType: typeof contentType === "string" ? contentType : undefined };
}
