// Reads a vision projector file (an `mmproj` GGUF in llama.cpp's "clip" format) into the shape of its encoder.
// loom runs Gemma 3's projector (a SigLIP vision transformer, average pooling, a soft-embedding norm and a linear map
// into the text model's embeddings); any other projector type is refused by name.
import { ModelFileError } from "../model/errors.js";
import { positiveInteger, positiveNumber } from "../model/config-values.js";
import type { GgufValue } from "../model/gguf/format.js";
import { type GgufTensorInfo, readGgufHeader } from "../model/gguf/reader.js";
import type { PromptVision } from "./image-tokens.js";

/** The encoder's shape, as its mmproj file declares it. */
export interface VisionConfig {
  /** `clip.projector_type`: "gemma3" is the one loom runs. */
  projectorType: "gemma3";
  /** Side of the square every image is resized (and padded) to. */
  imageSize: number;
  patchSize: number;
  /** Patches per side: imageSize / patchSize. */
  patchesPerSide: number;
  hiddenSize: number;
  feedForwardSize: number;
  layers: number;
  heads: number;
  headDim: number;
  layerNormEps: number;
  /** Per channel (R, G, B): pixel / 255 is normalised as (value - mean) / std. */
  imageMean: [number, number, number];
  imageStd: [number, number, number];
  /** Patches per side averaged into one image token (llama.cpp's n_merge: 4 unless the file says otherwise). */
  mergeFactor: number;
  /** Image tokens one image becomes: (patchesPerSide / mergeFactor)^2. */
  tokensPerImage: number;
  /** Width of each image token: the text model's hidden size. */
  outputSize: number;
}

/** Gemma 3's pooling default (llama.cpp's clip.cpp: "used by all model sizes in gemma 3 family"). */
const GEMMA3_MERGE_FACTOR = 4;

/**
 * The encoder shape of an mmproj file from its metadata and tensor directory.
 * @throws ModelFileError naming the key or tensor at fault.
 */
export function visionConfigFromGguf(path: string, metadata: ReadonlyMap<string, GgufValue>, tensors: readonly GgufTensorInfo[]): VisionConfig {
  const architecture = metadata.get("general.architecture");
  if (architecture !== "clip") throw new ModelFileError(path, `not a vision projector: general.architecture is ${JSON.stringify(architecture)}, an mmproj file has "clip"`);
  const projector = metadata.get("clip.projector_type") ?? metadata.get("clip.vision.projector_type");
  if (projector !== "gemma3") {
    throw new ModelFileError(path, `clip.projector_type ${JSON.stringify(projector)} is not supported: loom runs Gemma 3's vision projector ("gemma3")`);
  }
  if (metadata.get("clip.has_vision_encoder") === false) throw new ModelFileError(path, "clip.has_vision_encoder is false: the file has no vision encoder");
  const integer = (key: string) => positiveInteger(path, key, metadata.get(key));
  const imageSize = integer("clip.vision.image_size");
  const patchSize = integer("clip.vision.patch_size");
  const hiddenSize = integer("clip.vision.embedding_length");
  const heads = integer("clip.vision.attention.head_count");
  const mergeKey = "clip.vision.projector.scale_factor";
  const mergeFactor = metadata.has(mergeKey) ? integer(mergeKey) : GEMMA3_MERGE_FACTOR;
  if (imageSize % patchSize !== 0) throw new ModelFileError(path, `clip.vision.image_size ${imageSize} is not a multiple of clip.vision.patch_size ${patchSize}`);
  const patchesPerSide = imageSize / patchSize;
  if (patchesPerSide % mergeFactor !== 0) throw new ModelFileError(path, `${patchesPerSide} patches per side do not pool by ${mergeKey} ${mergeFactor}`);
  if (hiddenSize % heads !== 0) throw new ModelFileError(path, `clip.vision.embedding_length ${hiddenSize} is not a multiple of clip.vision.attention.head_count ${heads}`);
  const projection = tensors.find((tensor) => tensor.name === "mm.input_projection.weight");
  if (!projection) throw new ModelFileError(path, "tensor 'mm.input_projection.weight' is missing");
  if (projection.shape[1] !== hiddenSize) {
    throw new ModelFileError(path, `tensor 'mm.input_projection.weight' has shape [${projection.shape.join(", ")}], expected [text hidden size, ${hiddenSize}]`);
  }
  return {
    projectorType: "gemma3",
    imageSize, patchSize, patchesPerSide, hiddenSize, heads,
    feedForwardSize: integer("clip.vision.feed_forward_length"),
    layers: integer("clip.vision.block_count"),
    headDim: hiddenSize / heads,
    layerNormEps: positiveNumber(path, "clip.vision.attention.layer_norm_epsilon", metadata.get("clip.vision.attention.layer_norm_epsilon")),
    imageMean: channelTriple(path, "clip.vision.image_mean", metadata.get("clip.vision.image_mean")),
    imageStd: channelTriple(path, "clip.vision.image_std", metadata.get("clip.vision.image_std")),
    mergeFactor,
    tokensPerImage: (patchesPerSide / mergeFactor) ** 2,
    outputSize: projection.shape[0]!,
  };
}

/** Three finite f32 values (std: nonzero), one per channel. */
function channelTriple(path: string, key: string, value: GgufValue | undefined): [number, number, number] {
  const values = value instanceof Float32Array || Array.isArray(value) ? [...(value as ArrayLike<unknown> & Iterable<unknown>)] : undefined;
  if (!values || values.length < 3 || values.slice(0, 3).some((v) => typeof v !== "number" || !Number.isFinite(v) || (key.endsWith("std") && v === 0))) {
    throw new ModelFileError(path, `${key} must hold 3 finite numbers${key.endsWith("std") ? " (nonzero)" : ""}, found ${JSON.stringify(value === undefined ? null : values ?? String(value))}`);
  }
  return [Math.fround(values[0] as number), Math.fround(values[1] as number), Math.fround(values[2] as number)];
}

/** Gemma 3's image markers around the image tokens (llama.cpp's mtmd writes the same). */
export const GEMMA3_IMAGE_MARKERS = { begin: "<start_of_image>", end: "<end_of_image>" };

/**
 * How prompts of a model with the projector at `path` write an image: its markers and token count, from the file's
 * header alone (no weights). @throws ModelFileError as {@link visionConfigFromGguf}.
 */
export function promptVisionOf(path: string): PromptVision {
  const header = readGgufHeader(path);
  const config = visionConfigFromGguf(path, header.metadata, header.tensors);
  return { tokensPerImage: config.tokensPerImage, ...GEMMA3_IMAGE_MARKERS };
}
