// Prefill and decode speed of loom's WebAssembly backend against llama.cpp (node-llama-cpp, same thread count)
// on the same GGUF files, with each figure as a fraction of the machine's physical limit.
// Run: npm run build && node dist/bench/generate-vs-llama-cpp.js [--threads 2] [--prompt 128] [--decode 128]
import { parseArgs } from "node:util";
import { generate } from "../engine/generate.js";
import { loadModel } from "../engine/load.js";
import { openModelSource } from "../engine/model/source.js";
import { REFERENCE_CONTEXT_OPTIONS, referenceLlama } from "../engine/testing/llama-cpp.js";
import type { ModelDtype } from "../scripts/model-dtypes.js";
import { benchModelPath } from "./bench-models.js";
import { describeMachine } from "./machine.js";
import { measureReadBandwidth } from "./memory-bandwidth.js";

interface Speeds {
  prefillTokensPerSecond: number;
  decodeTokensPerSecond: number;
}

const CASES: Array<{ preset: string; dtype: ModelDtype }> = [
  { preset: "smollm2-135m", dtype: "f32" },
  { preset: "smollm2-135m", dtype: "q8_0" },
  { preset: "qwen3-0.6b", dtype: "q8_0" },
];

/** A prompt of exactly `count` ordinary tokens (ids in the middle of the vocabulary, after BOS). */
function syntheticPrompt(vocabulary: number, count: number, bos: number | undefined): number[] {
  const tokens = Array.from({ length: count }, (_, i) => 1000 + ((i * 7919) % Math.min(20000, vocabulary - 1000)));
  if (bos !== undefined) tokens[0] = bos;
  return tokens;
}

async function loomSpeeds(path: string, prompt: number[], decode: number, threads: number): Promise<Speeds> {
  const model = await loadModel(path, { threads, contextSize: prompt.length + decode + 16 });
  try {
    let best: Speeds = { prefillTokensPerSecond: 0, decodeTokensPerSecond: 0 };
    for (let run = 0; run < 3; run++) {
      for await (const event of generate(model, prompt, { maxTokens: decode, sampling: { temperature: 0 }, ignoreEndOfGeneration: true })) {
        if (event.type === "done") {
          best = {
            prefillTokensPerSecond: Math.max(best.prefillTokensPerSecond, event.prefillTokensPerSecond),
            decodeTokensPerSecond: Math.max(best.decodeTokensPerSecond, event.decodeTokensPerSecond),
          };
        }
      }
    }
    return best;
  } finally {
    await model.dispose();
  }
}

async function llamaCppSpeeds(path: string, prompt: number[], decode: number, threads: number): Promise<Speeds> {
  const llama = await referenceLlama();
  const model = await llama.loadModel({ modelPath: path });
  try {
    let best: Speeds = { prefillTokensPerSecond: 0, decodeTokensPerSecond: 0 };
    for (let run = 0; run < 3; run++) {
      const context = await model.createContext({ contextSize: prompt.length + decode + 16, batchSize: 512, threads, ...REFERENCE_CONTEXT_OPTIONS });
      try {
        const sequence = context.getSequence();
        const start = performance.now();
        let first = 0;
        let count = 0;
        for await (const _ of sequence.evaluate(prompt as never, { temperature: 0 })) {
          if (count === 0) first = performance.now();
          if (++count >= decode) break;
        }
        const end = performance.now();
        best = {
          prefillTokensPerSecond: Math.max(best.prefillTokensPerSecond, prompt.length / ((first - start) / 1000)),
          decodeTokensPerSecond: Math.max(best.decodeTokensPerSecond, (count - 1) / ((end - first) / 1000)),
        };
      } finally {
        await context.dispose();
      }
    }
    return best;
  } finally {
    await model.dispose();
  }
}

/**
 * Bytes of weights one decode step reads (every matrix once; the embedding table only if it is also the output),
 * and the parameters each prompt token multiplies in prefill (the layers: logits are computed for the last token only).
 */
function weightBytesPerToken(path: string): { bytes: number; layerParameters: number } {
  const source = openModelSource(path);
  let bytes = 0;
  let layerParameters = 0;
  for (const tensor of source.tensors.values()) {
    const isEmbedding = tensor.name === "token_embd.weight";
    if (!isEmbedding || source.config.tie_word_embeddings) bytes += tensor.byteLength;
    if (tensor.name.startsWith("blk.")) layerParameters += tensor.shape.reduce((a, b) => a * b, 1);
  }
  return { bytes, layerParameters };
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { threads: { type: "string" }, prompt: { type: "string" }, decode: { type: "string" } } });
  const threads = Number(values.threads ?? 2);
  const promptLength = Number(values.prompt ?? 128);
  const decode = Number(values.decode ?? 128);
  const machine = describeMachine();
  const bandwidth = await measureReadBandwidth(1 << 30, 5, threads);
  const command = `node dist/bench/generate-vs-llama-cpp.js --threads ${threads} --prompt ${promptLength} --decode ${decode}`;
  console.log(`# ${command}`);
  console.log(`# ${machine.date}, ${machine.cpu}, ${machine.cores} cores @ ${machine.megahertz} MHz, ${threads} threads`);
  console.log(`# measured read bandwidth ${(bandwidth / 1e9).toFixed(1)} GB/s (wasm streaming sum, ${threads} threads); peak ${(machine.peakFlops / 1e9).toFixed(0)} GFLOP/s f32`);
  console.log("");
  console.log("| model | weights | prefill tok/s loom | llama.cpp | ratio | loom % peak FLOP/s | decode tok/s loom | llama.cpp | ratio | loom % bandwidth | llama.cpp % bandwidth |");
  console.log("|---|---|---|---|---|---|---|---|---|---|---|");
  for (const { preset, dtype } of CASES) {
    const path = await benchModelPath(preset, dtype);
    const source = openModelSource(path);
    const bos = source.ggufMetadata?.get("tokenizer.ggml.bos_token_id");
    const prompt = syntheticPrompt(source.config.vocab_size, promptLength, typeof bos === "number" ? bos : undefined);
    const { bytes, layerParameters } = weightBytesPerToken(path);
    const loom = await loomSpeeds(path, prompt, decode, threads);
    const reference = await llamaCppSpeeds(path, prompt, decode, threads);
    const percentBandwidth = (tokensPerSecond: number) => `${((100 * tokensPerSecond * bytes) / bandwidth).toFixed(0)}%`;
    const percentFlops = (tokensPerSecond: number) => `${((100 * tokensPerSecond * 2 * layerParameters) / machine.peakFlops).toFixed(1)}%`;
    console.log(`| ${preset} | ${dtype.toUpperCase()} (${(bytes / 1e6).toFixed(0)} MB/token) | ${loom.prefillTokensPerSecond.toFixed(1)} | ${reference.prefillTokensPerSecond.toFixed(1)} | ${(loom.prefillTokensPerSecond / reference.prefillTokensPerSecond).toFixed(2)}x | ${percentFlops(loom.prefillTokensPerSecond)} | ${loom.decodeTokensPerSecond.toFixed(1)} | ${reference.decodeTokensPerSecond.toFixed(1)} | ${(loom.decodeTokensPerSecond / reference.decodeTokensPerSecond).toFixed(2)}x | ${percentBandwidth(loom.decodeTokensPerSecond)} | ${percentBandwidth(reference.decodeTokensPerSecond)} |`);
  }
}

await main();
process.exit(0);
