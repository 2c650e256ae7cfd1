// Writes a random-weight model as one GGUF file, tensor by tensor, in the layout llama.cpp's converter produces.
import { GgmlType } from "../kernels/formats/types.js";
import { llama3RopeFreqFactors } from "../kernels/rope-frequencies.js";
import { type GeneratorStamp, ggufArchitectureMetadata, ggufPoolingKeys } from "./gguf-model-metadata.js";
import { type StreamedGgufTensor, ggufDataBytes, writeGgufStreaming } from "./gguf-stream-writer.js";
import type { ProgressListener } from "./generation-progress.js";
import { type ModelDtype, ggufTensorType, roundToCheckpointPrecision } from "./model-dtypes.js";
import { type ModelPreset, headDimOf, isGemma4 } from "./model-presets.js";
import { type ExpertCut, type PlannedTensor, cutValueChunks, ggufTensorGroups, permuteForGguf, planTensors, tensorValueChunks } from "./model-tensors.js";
import { quantize } from "../kernels/formats/quantize.js";
import { ggufTokenizerKeys } from "./tokenizer-files.js";

/** GGML shape (row length first) of a checkpoint-order shape. */
function ggmlShape(shape: readonly number[]): number[] {
  return [...shape].reverse();
}

/**
 * The tensor's GGUF bytes, chunk by chunk: permuted (llama q/k), rounded (vectors of f16/bf16 models), shifted
 * (Gemma 3 norms: w + 1, added as the converter does: in f32, or in f16 for an f16 checkpoint, which it keeps in f16
 * until the norm is written as F32), encoded.
 */
function* ggufChunks(tensor: PlannedTensor, type: GgmlType, dtype: ModelDtype, seed: number): Generator<Uint8Array> {
  const rowLength = tensor.shape.length === 1 ? 1 : tensor.shape[1];
  const headDim = tensor.ggufPermuteHeads ? tensor.shape[0] / tensor.ggufPermuteHeads : 0;
  const rowMultiple = tensor.shape.length === 1 ? tensor.shape[0] : Math.max(1, headDim);
  for (let values of tensorValueChunks(tensor, seed, rowMultiple)) {
    if (headDim) values = permuteForGguf(values, headDim, rowLength);
    if (type === GgmlType.F32) roundToCheckpointPrecision(values, dtype); // vectors and routers; a no-op for f32 files
    if (tensor.normOffset) {
      for (let i = 0; i < values.length; i++) values[i] += tensor.normOffset;
      if (dtype === "f16") roundToCheckpointPrecision(values, "f16");
    }
    yield quantize(type, values);
  }
}

/** A cut's GGUF bytes (gpt-oss's fused experts), expert by expert: rounded (F32 biases of f16/bf16 models), encoded. */
function* cutChunks(tensor: PlannedTensor, cut: ExpertCut, type: GgmlType, dtype: ModelDtype, seed: number): Generator<Uint8Array> {
  for (const values of cutValueChunks(tensor, cut, seed)) {
    if (type === GgmlType.F32) roundToCheckpointPrecision(values, dtype);
    yield quantize(type, values);
  }
}

/** Writes `preset` with seeded random weights to `path` as a GGUF file of `dtype`. */
export function writeGgufModel(preset: ModelPreset, dtype: ModelDtype, seed: number, path: string, stamp: GeneratorStamp, onProgress?: ProgressListener): void {
  const config = preset.config;
  const tensors: StreamedGgufTensor[] = [];
  if (config.rope_scaling?.rope_type === "llama3") {
    // llama.cpp's converter writes llama3 scaling as per-frequency divisors instead of metadata.
    const headDim = headDimOf(config);
    const factors = llama3RopeFreqFactors(config.rope_scaling, config.rope_theta, headDim);
    tensors.push({ name: "rope_freqs.weight", shape: [headDim / 2], type: GgmlType.F32, chunks: () => [new Uint8Array(factors.buffer)] });
  }
  if (isGemma4(config)) {
    // Proportional RoPE on the full layers, as Gemma4Model.generate_extra_tensors writes it: divisor 1 for the rotated
    // pairs, 1e30 (angle ~0) for the others.
    const pairs = config.global_head_dim / 2;
    const rotated = Math.floor((config.global_head_dim * config.rope_parameters.full_attention.partial_rotary_factor) / 2);
    const factors = Float32Array.from({ length: pairs }, (_, i) => (i < rotated ? 1 : 1e30));
    tensors.push({ name: "rope_freqs.weight", shape: [pairs], type: GgmlType.F32, chunks: () => [new Uint8Array(factors.buffer)] });
  }
  for (const group of ggufTensorGroups(planTensors(config))) {
    const cut = group.cut;
    if (cut) {
      const part = group.parts[0];
      const type = ggufTensorType({ ...part, shape: group.shape, role: cut.role }, dtype);
      tensors.push({ name: group.ggufName, shape: ggmlShape(group.shape), type, chunks: () => cutChunks(part, cut, type, dtype, seed) });
      continue;
    }
    // Stacked experts share one type (chosen on the stack's 3-D shape, as llama.cpp's quantizer sees it); each expert's
    // matrix follows the previous one's, in whole rows.
    const type = ggufTensorType({ ...group.parts[0], shape: group.shape }, dtype);
    const chunks = function* () {
      for (const part of group.parts) yield* ggufChunks(part, type, dtype, seed);
    };
    tensors.push({ name: group.ggufName, shape: ggmlShape(group.shape), type, chunks });
  }
  const metadata = [...ggufArchitectureMetadata(preset, dtype, stamp), ...ggufPoolingKeys(preset), ...ggufTokenizerKeys(preset)];
  const totalBytes = ggufDataBytes(tensors);
  let bytesDone = 0;
  let tensorsDone = 0;
  writeGgufStreaming(path, metadata, tensors, (tensorName, bytes) => {
    bytesDone += bytes;
    tensorsDone++;
    onProgress?.({ tensorName, tensorsDone, tensorCount: tensors.length, bytesDone, totalBytes });
  });
}
