// Writes a random-weight Gemma 3 vision tower and projector as one mmproj GGUF (general.architecture "clip"), with the
// keys and tensors convert_hf_to_gguf.py --mmproj writes and llama.cpp's tools/mtmd (clip.cpp) reads.
import { gguf, type GgufTypedValue } from "../engine/model/gguf/writer.js";
import { quantize } from "../kernels/formats/quantize.js";
import {
  GEMMA3_DEFAULT_SCALE_FACTOR, type MmprojDtype, type PlannedVisionTensor, mmprojTensorType, planVisionTensors, projectorScaleFactor,
} from "./gemma3-vision-tensors.js";
import type { GeneratorStamp } from "./gguf-model-metadata.js";
import { type StreamedGgufTensor, ggufDataBytes, writeGgufStreaming } from "./gguf-stream-writer.js";
import type { ProgressListener } from "./generation-progress.js";
import type { Gemma3VisionConfig, ModelPreset } from "./model-presets.js";
import { tensorValueChunks } from "./model-tensors.js";

/** llama.cpp's general.file_type of an mmproj: the converter's ftype (0 all F32, 1 mostly F16). */
const MMPROJ_FILE_TYPE: Readonly<Record<MmprojDtype, number>> = { f32: 0, f16: 1 };

/**
 * The mmproj's metadata, in the order Gemma3VisionModel.set_gguf_parameters (on MmprojModel's) writes it:
 * clip.has_vision_encoder, clip.vision.projection_dim (the text model's hidden size), the tower's shape, image_mean /
 * image_std, clip.projector_type gemma3, the LayerNorm epsilon, clip.use_gelu, and clip.vision.projector.scale_factor
 * only when it is not llama.cpp's default of 4 (the converter's rule, for the tinygemma3 test model).
 */
export function mmprojMetadata(preset: ModelPreset, vision: Gemma3VisionConfig, dtype: MmprojDtype, stamp: GeneratorStamp): Array<[string, GgufTypedValue]> {
  const v = vision.vision_config;
  const entries: Array<[string, GgufTypedValue]> = [
    ["general.architecture", gguf.string("clip")],
    ["general.type", gguf.string("mmproj")],
    ["general.name", gguf.string(`${preset.name} vision (random weights)`)],
    ["general.quantization_version", gguf.u32(2)],
    ["general.file_type", gguf.u32(MMPROJ_FILE_TYPE[dtype])],
    ["loom.generator.preset", gguf.string(preset.name)],
    ["loom.generator.version", gguf.u32(stamp.version)],
    ["loom.generator.seed", gguf.u32(stamp.seed)],
    ["clip.has_vision_encoder", gguf.bool(true)],
    ["clip.vision.projection_dim", gguf.u32(preset.config.hidden_size)],
    ["clip.vision.image_size", gguf.u32(v.image_size)],
    ["clip.vision.patch_size", gguf.u32(v.patch_size)],
    ["clip.vision.embedding_length", gguf.u32(v.hidden_size)],
    ["clip.vision.feed_forward_length", gguf.u32(v.intermediate_size)],
    ["clip.vision.block_count", gguf.u32(v.num_hidden_layers)],
    ["clip.vision.attention.head_count", gguf.u32(v.num_attention_heads)],
    ["clip.vision.image_mean", gguf.f32s(vision.image_mean)],
    ["clip.vision.image_std", gguf.f32s(vision.image_std)],
    ["clip.projector_type", gguf.string("gemma3")],
    ["clip.vision.attention.layer_norm_epsilon", gguf.f32(v.layer_norm_eps)],
    ["clip.use_gelu", gguf.bool(true)],
  ];
  const scale = projectorScaleFactor(vision);
  if (scale !== GEMMA3_DEFAULT_SCALE_FACTOR) entries.push(["clip.vision.projector.scale_factor", gguf.u32(scale)]);
  return entries;
}

/**
 * A vision tensor's values as the mmproj holds them (before F16 rounding), chunk by chunk: the checkpoint's, except
 * soft_emb_norm's w + 1 (tensorValueChunks yields the checkpoint's w; the converter adds 1 back).
 */
export function* mmprojValueChunks(tensor: PlannedVisionTensor, seed: number): Generator<Float32Array> {
  for (const values of tensorValueChunks(tensor, seed)) {
    if (tensor.normOffset) for (let i = 0; i < values.length; i++) values[i] += tensor.normOffset;
    yield values;
  }
}

/** Writes the vision tower and projector of `vision` (projecting to `preset`'s text model) with seeded random weights to `path`. */
export function writeGgufMmproj(
  preset: ModelPreset, vision: Gemma3VisionConfig, dtype: MmprojDtype, seed: number, path: string, stamp: GeneratorStamp, onProgress?: ProgressListener,
): void {
  const tensors: StreamedGgufTensor[] = planVisionTensors(vision, preset.config.hidden_size).map((tensor) => {
    const type = mmprojTensorType(tensor, dtype);
    return {
      name: tensor.ggufName,
      shape: [...tensor.shape].reverse(),
      type,
      chunks: function* () {
        for (const values of mmprojValueChunks(tensor, seed)) yield quantize(type, values);
      },
    };
  });
  const totalBytes = ggufDataBytes(tensors);
  let bytesDone = 0;
  let tensorsDone = 0;
  writeGgufStreaming(path, mmprojMetadata(preset, vision, dtype, stamp), tensors, (tensorName, bytes) => {
    bytesDone += bytes;
    tensorsDone++;
    onProgress?.({ tensorName, tensorsDone, tensorCount: tensors.length, bytesDone, totalBytes });
  });
}
