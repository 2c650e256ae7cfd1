// Shared by the serving benchmarks: the random-weight bench models (generated on first use into
// .cache/bench-models/, as bench/generate-vs-llama-cpp.ts does), their per-token work, seeded synthetic tokens,
// and the header every figure is printed with.
import { existsSync } from "node:fs";
import { join } from "node:path";
import { kvBlockBytes } from "../engine/kv/budget.js";
import { KV_BLOCK_SIZE } from "../engine/load.js";
import { openModelSource } from "../engine/model/source.js";
import { REPOSITORY_ROOT } from "../engine/testing/fixtures.js";
import { generateModel } from "../scripts/generate-model.js";
import type { ModelDtype } from "../scripts/model-dtypes.js";
import { type MachineDescription, describeMachine } from "./machine.js";
import { seededRandom } from "../engine/testing/seeded-random.js";

export { seededRandom };

/** The bench model file for a preset and dtype, generated if missing (every end-to-end bench shares these files). */
export async function benchModelPath(preset: string, dtype: ModelDtype): Promise<string> {
  const path = join(REPOSITORY_ROOT, ".cache", "bench-models", `${preset}-${dtype}.gguf`);
  if (!existsSync(path)) {
    process.stderr.write(`generating ${path} ...\n`);
    await generateModel({ preset, format: "gguf", dtype, out: path });
  }
  return path;
}

/**
 * The f32 KV budget in bytes for `contexts` contexts of `context` positions (each rounded up to whole KV blocks) of
 * the model at `path`: benches size the cache so that nothing is preempted.
 */
export function f32KvBytes(path: string, context: number, contexts: number): number {
  const { config } = openModelSource(path);
  const blocks = Math.ceil(context / KV_BLOCK_SIZE) * contexts;
  return kvBlockBytes(config.num_hidden_layers, config.num_key_value_heads * config.head_dim, KV_BLOCK_SIZE, "f32") * blocks;
}

/** What one token costs a model: weight bytes a decode step reads, and the multiply-adds of its layers and of the logits. */
export interface ModelWork {
  /**
   * Bytes of weights one token's decode step reads (every matrix once; the embedding table only if it is also the
   * output; of a mixture of experts' expert tensors, the share of the experts one token uses).
   */
  bytesPerToken: number;
  /** Parameters of the transformer layers one computed token multiplies (of expert tensors, its experts' share). */
  layerParameters: number;
  /** Parameters of the output projection (only tokens whose logits are computed multiply them). */
  outputParameters: number;
  vocabSize: number;
  bosId: number | undefined;
}

export function modelWork(path: string): ModelWork {
  const source = openModelSource(path);
  let bytesPerToken = 0;
  let layerParameters = 0;
  let outputParameters = 0;
  const { num_experts: experts, num_experts_per_tok: used } = source.config;
  for (const tensor of source.tensors.values()) {
    // An expert stack ([k, n, experts]; its biases and scales [n, experts]): a token reads `used` of its experts.
    const share = experts !== undefined && used !== undefined && tensor.shape.at(-1) === experts && /_exps\./.test(tensor.name) ? used / experts : 1;
    const parameters = tensor.shape.reduce((a, b) => a * b, 1) * share;
    const isEmbedding = tensor.name === "token_embd.weight";
    if (!isEmbedding || source.config.tie_word_embeddings) bytesPerToken += tensor.byteLength * share;
    if (tensor.name.startsWith("blk.")) layerParameters += parameters;
    if (tensor.name === "output.weight" || (isEmbedding && source.config.tie_word_embeddings)) outputParameters += parameters;
  }
  const bos = source.ggufMetadata?.get("tokenizer.ggml.bos_token_id");
  return { bytesPerToken, layerParameters, outputParameters, vocabSize: source.config.vocab_size, bosId: typeof bos === "number" ? bos : undefined };
}

/**
 * FLOPs of the matrix products (attention excluded) for `computedPromptTokens` prompt tokens run through the layers
 * and `generatedTokens` tokens sampled over `requests` requests: each sampled token needs the logits of the token
 * before it, and every sampled token but each request's last is fed back through the layers.
 */
export function matmulFlops(work: ModelWork, computedPromptTokens: number, generatedTokens: number, requests: number): number {
  return 2 * work.layerParameters * (computedPromptTokens + generatedTokens - requests) + 2 * work.outputParameters * generatedTokens;
}


/** `count` ordinary token ids drawn from the middle of the vocabulary (clear of special tokens). */
export function randomTokens(random: () => number, count: number, vocabSize: number): number[] {
  const low = Math.min(1000, Math.floor(vocabSize / 4));
  const high = Math.min(vocabSize - 1, low + 30000);
  return Array.from({ length: count }, () => low + Math.floor(random() * (high - low)));
}

/** Prints the command, machine and date lines every figure goes out with; returns the machine. */
export function printHeader(command: string, threads: number, extra: string[] = []): MachineDescription {
  const machine = describeMachine();
  console.log(`# ${command}`);
  console.log(`# ${machine.date}, ${machine.cpu}, ${machine.cores} cores @ ${machine.megahertz} MHz, ${threads} threads, Node ${process.version}`);
  for (const line of extra) console.log(`# ${line}`);
  return machine;
}

export function mean(values: readonly number[]): number {
  return values.length === 0 ? Number.NaN : values.reduce((a, b) => a + b, 0) / values.length;
}

export function median(values: readonly number[]): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const middle = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
}

/** The `p` quantile (0-1) of `values`, interpolated between the two nearest ranks; NaN when empty. */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const at = (sorted.length - 1) * p;
  const low = Math.floor(at);
  const high = Math.ceil(at);
  return sorted[low] + (sorted[high] - sorted[low]) * (at - low);
}
