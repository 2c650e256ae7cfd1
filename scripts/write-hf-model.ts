// Writes a random-weight model as a Hugging Face directory: config.json, generation_config.json, tokenizer files
// and safetensors weights (one file, or shards plus model.safetensors.index.json).
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { GgmlType } from "../kernels/formats/types.js";
import { type SafetensorsDtype, type SafetensorsTensorInput, writeSafetensorsModel } from "../engine/model/safetensors/writer.js";
import type { GeneratorStamp } from "./gguf-model-metadata.js";
import type { ProgressListener } from "./generation-progress.js";
import { type ModelDtype, checkFormatDtype } from "./model-dtypes.js";
import type { ModelPreset } from "./model-presets.js";
import { planTensors, tensorValueChunks } from "./model-tensors.js";
import { quantize } from "../kernels/formats/quantize.js";
import { writeHuggingFaceTokenizerFiles } from "./tokenizer-files.js";

const SAFETENSORS: Partial<Record<ModelDtype, { dtype: SafetensorsDtype; type: GgmlType; torch: string }>> = {
  f32: { dtype: "F32", type: GgmlType.F32, torch: "float32" },
  f16: { dtype: "F16", type: GgmlType.F16, torch: "float16" },
  bf16: { dtype: "BF16", type: GgmlType.BF16, torch: "bfloat16" },
};

/** Writes `preset` with seeded random weights into the directory `dir` (created if missing) as `dtype`. */
export function writeHuggingFaceModel(
  preset: ModelPreset,
  dtype: ModelDtype,
  seed: number,
  dir: string,
  stamp: GeneratorStamp,
  shardBytes?: number,
  onProgress?: ProgressListener,
): void {
  checkFormatDtype("hf", dtype);
  const target = SAFETENSORS[dtype]!;
  mkdirSync(dir, { recursive: true });
  const config = { ...preset.config, torch_dtype: target.torch, transformers_version: "4.51.3" };
  writeFileSync(join(dir, "config.json"), JSON.stringify(config, null, 2) + "\n");
  const generation = {
    _from_model_config: true,
    bos_token_id: preset.config.bos_token_id,
    eos_token_id: preset.config.eos_token_id,
    transformers_version: "4.51.3",
  };
  writeFileSync(join(dir, "generation_config.json"), JSON.stringify(generation, null, 2) + "\n");
  writeHuggingFaceTokenizerFiles(preset, dir);

  const planned = planTensors(preset.config);
  const tensors: SafetensorsTensorInput[] = planned.map((tensor) => ({
    name: tensor.huggingFaceName,
    dtype: target.dtype,
    shape: tensor.shape,
    data: function* () {
      for (const values of tensorValueChunks(tensor, seed)) yield quantize(target.type, values);
    },
  }));
  let tensorsDone = 0;
  writeSafetensorsModel(dir, tensors, {
    shardBytes,
    metadata: { format: "pt", "loom.generator.preset": preset.name, "loom.generator.version": String(stamp.version), "loom.generator.seed": String(stamp.seed) },
    onTensorWritten: (tensorName, bytesDone, totalBytes) => {
      tensorsDone++;
      onProgress?.({ tensorName, tensorsDone, tensorCount: tensors.length, bytesDone, totalBytes });
    },
  });
}
