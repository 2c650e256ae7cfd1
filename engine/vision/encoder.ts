// What the engine needs of a vision encoder, whichever backend runs it: one image in, its image-token embeddings out.
import type { RgbImage } from "../chat/messages.js";
import type { VisionConfig } from "./clip-config.js";

/** A loaded vision projector. */
export interface VisionEncoder {
  readonly config: VisionConfig;
  /** The mmproj file it was loaded from. */
  readonly path: string;
  /**
   * The image's token embeddings, [config.tokensPerImage, config.outputSize] f32, as the text model takes them in
   * place of token embeddings (not scaled). @throws RangeError for an image with inconsistent fields.
   */
  encode(image: RgbImage): Float32Array | Promise<Float32Array>;
  /** Frees what it holds; it cannot encode afterwards. */
  dispose(): Promise<void>;
}
