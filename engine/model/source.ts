// Opens a model path (a GGUF file or a Hugging Face directory) into one format-neutral description:
// the config, where every tensor's bytes live, and the chat template. Nothing is loaded yet.
import { existsSync, readFileSync, statSync } from "node:fs";
import { readFileRange } from "./file-io.js";
import { join } from "node:path";
import { type ModelConfig, attentionWindow, configFromGguf, configFromHuggingFace, layerAttention } from "./config.js";
import { GgmlType } from "../../kernels/formats/types.js";
import { ModelFileError } from "./errors.js";
import type { GgufValue } from "./gguf/format.js";
import { readGgufModelFiles } from "./gguf/split.js";
import { llama3RopeFreqFactors } from "../../kernels/rope-frequencies.js";
import { readSafetensorsDirectory } from "./safetensors/reader.js";
import { ggufNameOf } from "./tensor-names.js";

/** Where one tensor's bytes are, in GGML terms. */
export interface TensorLocation {
  /** GGUF-style name, e.g. `blk.0.attn_q.weight`. */
  name: string;
  type: GgmlType;
  /** GGML order: shape[0] is the row length (input features of a linear layer). */
  shape: number[];
  path: string;
  fileOffset: number;
  byteLength: number;
  /**
   * Set when the rows are in GGUF's interleaved-pair RoPE order (llama.cpp's converter permutes llama Q/K weights):
   * the loader restores Hugging Face's rotate-half order so every backend implements one RoPE layout.
   */
  interleavedRopeHeads?: number;
}

/** A model on disk, described but not loaded. */
export interface ModelSource {
  path: string;
  format: "gguf" | "huggingface";
  config: ModelConfig;
  tensors: ReadonlyMap<string, TensorLocation>;
  /** Divisors applied to RoPE frequencies (Llama 3 scaling), length rotary_dim/2. */
  ropeFreqFactors: Float32Array | null;
  chatTemplate: string | null;
  /** GGUF metadata (tokenizer lives here), for GGUF sources. */
  ggufMetadata: ReadonlyMap<string, GgufValue> | null;
  /** Total bytes of tensor data the loader will read. */
  totalTensorBytes: number;
}

/** Opens a GGUF file (the first part of a split one), or a Hugging Face model directory. */
export function openModelSource(path: string): ModelSource {
  if (!existsSync(path)) throw new ModelFileError(path, "no such file or directory");
  return statSync(path).isDirectory() ? openHuggingFace(path) : openGguf(path);
}

/** A GGUF file, or the first part of a split GGUF (`-00001-of-0000N.gguf`): its parts are read as one model. */
function openGguf(path: string): ModelSource {
  const { header, tensors: located } = readGgufModelFiles(path);
  const tensors = new Map<string, TensorLocation>();
  for (const t of located) tensors.set(t.name, t);
  const config = configFromGguf(path, header.metadata, tensors.has("output.weight"));
  // llama.cpp's converter permutes Q/K rows for the architectures it ropes in pairs (LLAMA_ROPE_TYPE_NORM).
  if (config.architecture === "llama" || config.architecture === "mistral3") {
    for (let layer = 0; layer < config.num_hidden_layers; layer++) {
      markInterleaved(tensors, `blk.${layer}.attn_q.weight`, config.num_attention_heads);
      markInterleaved(tensors, `blk.${layer}.attn_k.weight`, config.num_key_value_heads);
    }
  }
  let ropeFreqFactors: Float32Array | null = null;
  const freqs = tensors.get("rope_freqs.weight");
  const ropeFreqs = ropeFreqsOf(config);
  if (!freqs && ropeFreqs.required) throw new ModelFileError(path, `tensor 'rope_freqs.weight' is missing (${config.architecture} needs it for its full-attention layers)`);
  if (freqs) {
    if (freqs.type !== GgmlType.F32 || freqs.shape.length !== 1 || freqs.shape[0] !== ropeFreqs.length) {
      throw new ModelFileError(path, `rope_freqs.weight must be F32 with ${ropeFreqs.length} values`);
    }
    ropeFreqFactors = new Float32Array(readFileRange(freqs.path, freqs.fileOffset, freqs.byteLength).buffer);
    tensors.delete("rope_freqs.weight");
  }
  const template = header.metadata.get("tokenizer.chat_template");
  return {
    path,
    format: "gguf",
    config,
    tensors,
    ropeFreqFactors,
    chatTemplate: typeof template === "string" ? template : null,
    ggufMetadata: header.metadata,
    totalTensorBytes: [...tensors.values()].reduce((sum, t) => sum + t.byteLength, 0),
  };
}

/**
 * How long rope_freqs.weight must be, and whether the model needs it: rotary_dim / 2, else (Gemma 4, whose full
 * layers alone use it) their head size / 2, as llama.cpp's gemma4 loader creates it, required where a full layer is.
 */
function ropeFreqsOf(config: ModelConfig): { length: number; required: boolean } {
  if (!config.rope_freqs_full_only) return { length: config.rotary_dim / 2, required: false };
  const firstFull = Array.from({ length: config.num_hidden_layers }, (_, i) => i).find((i) => attentionWindow(config, i) === 0);
  if (firstFull === undefined) return { length: config.rotary_dim / 2, required: false };
  return { length: layerAttention(config, firstFull).headDim / 2, required: true };
}

function markInterleaved(tensors: Map<string, TensorLocation>, name: string, heads: number): void {
  const tensor = tensors.get(name);
  if (tensor) tensors.set(name, { ...tensor, interleavedRopeHeads: heads });
}

function readJson(path: string): Record<string, unknown> {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (error) {
    throw new ModelFileError(path, `cannot read: ${(error as Error).message}`);
  }
  try {
    const value = JSON.parse(text);
    if (value === null || typeof value !== "object" || Array.isArray(value)) throw new Error("not a JSON object");
    return value as Record<string, unknown>;
  } catch (error) {
    throw new ModelFileError(path, `not valid JSON (${(error as Error).message})`);
  }
}

function openHuggingFace(directory: string): ModelSource {
  const configPath = join(directory, "config.json");
  if (!existsSync(configPath)) throw new ModelFileError(directory, "not a model: no config.json in this directory (and not a GGUF file)");
  const config = configFromHuggingFace(configPath, readJson(configPath));
  const tensors = new Map<string, TensorLocation>();
  for (const t of readSafetensorsDirectory(directory)) {
    const name = ggufNameOf(t.name);
    if (!name) continue;
    // safetensors shapes are PyTorch order [out, in]; GGML order lists the row length first.
    tensors.set(name, { name, type: t.type, shape: [...t.shape].reverse(), path: t.path, fileOffset: t.fileOffset, byteLength: t.byteLength });
  }
  if (!tensors.has("output.weight") && !config.tie_word_embeddings && tensors.has("token_embd.weight")) {
    throw new ModelFileError(directory, "lm_head.weight is missing and tie_word_embeddings is not set");
  }
  const ropeFreqFactors = config.rope_scaling ? llama3RopeFreqFactors(config.rope_scaling, config.rope_theta, config.rotary_dim) : null;
  return {
    path: directory,
    format: "huggingface",
    config,
    tensors,
    ropeFreqFactors,
    chatTemplate: readChatTemplate(directory),
    ggufMetadata: null,
    totalTensorBytes: [...tensors.values()].reduce((sum, t) => sum + t.byteLength, 0),
  };
}

/** chat_template.jinja wins over tokenizer_config.json's chat_template, as in transformers. */
function readChatTemplate(directory: string): string | null {
  const jinja = join(directory, "chat_template.jinja");
  if (existsSync(jinja)) return readFileSync(jinja, "utf8");
  const tokenizerConfig = join(directory, "tokenizer_config.json");
  if (!existsSync(tokenizerConfig)) return null;
  const template = readJson(tokenizerConfig).chat_template;
  if (typeof template === "string") return template;
  if (Array.isArray(template)) {
    const named = template.find((t) => (t as { name?: string }).name === "default") as { template?: string } | undefined;
    return named?.template ?? null;
  }
  return null;
}
