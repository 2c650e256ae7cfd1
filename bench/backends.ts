// Decode and prefill speed of one backend (or both, side by side) on the random-weight bench models: batch-1 decode
// tokens/s, aggregate output tokens/s with B sequences decoding together, and prefill tokens/s at given prompt
// lengths, each as a fraction of the machine's limit (memory bandwidth for decode, peak FLOP/s for prefill) when
// given. The same command runs on a GPU machine (the issue-5 harness) and on this CPU (WebGPU on lavapipe against
// WebAssembly: lavapipe is for correctness only, and this shows by how much).
// Run: npm run build && node dist/bench/backends.js [options] (USAGE below; --help prints it).
import { Engine } from "../engine/engine.js";
import { type BackendName, loadModel } from "../engine/load.js";
import type { EngineRequest } from "../engine/request.js";
import type { ModelDtype } from "../scripts/model-dtypes.js";
import { BenchCli } from "./bench-args.js";
import { benchModelPath, f32KvBytes, modelWork, printHeader, randomTokens, seededRandom } from "./bench-models.js";

interface Figures {
  backend: BackendName;
  device: string;
  model: string;
  /** Output tokens/s by batch size (batch 1 = single-stream decode). */
  decode: Record<number, number>;
  /** Prompt tokens/s by prompt length. */
  prefill: Record<number, number>;
}

/**
 * Runs `requests` (equal prompts, admitted in one step) to the end; returns their aggregate output tokens/s from the
 * step that gave every request its first token to the end (prefill excluded).
 */
async function decodeRate(engine: Engine, requests: EngineRequest[]): Promise<number> {
  const firstTokenAt: number[] = [];
  let generated = 0;
  await Promise.all(requests.map(async (request) => {
    let first = true;
    for await (const event of engine.submit(request)) {
      if (event.type === "error") throw event.error;
      if (event.type === "text" && first) {
        firstTokenAt.push(performance.now());
        first = false;
      }
      if (event.type === "finish") generated += event.usage.completionTokens;
    }
  }));
  const seconds = (performance.now() - Math.max(...firstTokenAt)) / 1000;
  return (generated - requests.length) / seconds;
}

async function measure(backend: BackendName, preset: string, dtype: ModelDtype, batches: number[], prefills: number[], decode: number, threads: number): Promise<Figures> {
  const path = await benchModelPath(preset, dtype);
  const longest = Math.max(...prefills, 64) + decode + 16;
  const contexts = Math.max(...batches) + 1;
  const model = await loadModel(path, {
    backend, threads, contextSize: longest, maxSequences: Math.max(...batches), batchSize: Math.max(...prefills, 128),
    kvCache: { bytes: f32KvBytes(path, longest, contexts) },
  });
  const random = seededRandom(7);
  const figures: Figures = { backend, device: model.device, model: `${preset} ${dtype.toUpperCase()}`, decode: {}, prefill: {} };
  try {
    const engine = new Engine(model, { cache: { prefixCaching: false, sectionCaching: false } });
    const request = (promptTokens: number, maxTokens: number): EngineRequest => ({
      input: { tokens: randomTokens(random, promptTokens, model.config.vocab_size) }, maxTokens, sampling: { temperature: 0 }, ignoreEndOfGeneration: true,
    });
    await decodeRate(engine, [request(16, 4)]); // warm-up: pipelines, first touches
    for (const batch of batches) {
      figures.decode[batch] = await decodeRate(engine, Array.from({ length: batch }, () => request(16, decode)));
    }
    for (const length of prefills) {
      let seconds = Infinity;
      for (let run = 0; run < 2; run++) {
        const start = performance.now();
        for await (const event of engine.submit(request(length, 1))) if (event.type === "error") throw event.error;
        seconds = Math.min(seconds, (performance.now() - start) / 1000);
      }
      figures.prefill[length] = length / seconds;
    }
    engine.close();
  } finally {
    await model.dispose();
  }
  return figures;
}

/** The command line; --help prints it. */
const USAGE = `node dist/bench/backends.js [--backends wasm,webgpu] [--models smollm2-135m:q8_0,...]
       [--batches 1,8] [--prefill 128] [--decode 32] [--threads 2] [--bandwidth-gbs G] [--peak-tflops T]`;
const cli: BenchCli = new BenchCli("backends", USAGE);

async function main(): Promise<void> {
  const values = cli.parse({
    backends: { type: "string" }, models: { type: "string" }, batches: { type: "string" }, prefill: { type: "string" }, decode: { type: "string" },
    threads: { type: "string" }, "bandwidth-gbs": { type: "string" }, "peak-tflops": { type: "string" },
  });
  const backends = cli.someOf("backends", values.backends ?? "wasm,webgpu", ["wasm", "webgpu"] as const satisfies readonly BackendName[]);
  const models = (values.models ?? "smollm2-135m:q8_0").split(",").map((spec) => spec.split(":") as [string, ModelDtype]);
  const batches = cli.integers("batches", values.batches ?? "1,8");
  const prefills = cli.integers("prefill", values.prefill ?? "128");
  const decode = cli.integer("decode", values.decode ?? 32);
  const threads = cli.integer("threads", values.threads ?? 2);
  const bandwidth = values["bandwidth-gbs"] === undefined ? undefined : Number(values["bandwidth-gbs"]) * 1e9;
  const peak = values["peak-tflops"] === undefined ? undefined : Number(values["peak-tflops"]) * 1e12;
  const command = `node dist/bench/backends.js --backends ${backends.join(",")} --models ${models.map((m) => m.join(":")).join(",")} --batches ${batches.join(",")} `
    + `--prefill ${prefills.join(",")} --decode ${decode} --threads ${threads}${bandwidth ? ` --bandwidth-gbs ${bandwidth / 1e9}` : ""}${peak ? ` --peak-tflops ${peak / 1e12}` : ""}`;
  printHeader(command, threads, [
    "greedy, end-of-generation ignored, caches off; decode B = B sequences of 16 prompt tokens decoding together (aggregate output tok/s after every first token);",
    `prefill L = one L-token prompt, best of 2; % of bandwidth = weight bytes per step x steps/s / bandwidth; % of peak = 2 x layer parameters x tok/s / peak`,
  ]);
  console.log("");
  console.log(`| model | backend | device | ${batches.map((b) => `decode B=${b} tok/s`).join(" | ")} | ${prefills.map((l) => `prefill ${l} tok/s`).join(" | ")} |`);
  console.log(`|---|---|---|${batches.map(() => "---|").join("")}${prefills.map(() => "---|").join("")}`);
  const results: Figures[] = [];
  for (const [preset, dtype] of models) {
    const work = modelWork(await benchModelPath(preset, dtype));
    for (const backend of backends) {
      const f = await measure(backend, preset, dtype, batches, prefills, decode, threads);
      results.push(f);
      const decodeCells = batches.map((b) => {
        const steps = f.decode[b] / b;
        return `${f.decode[b].toFixed(1)}${bandwidth ? ` (${((100 * steps * work.bytesPerToken) / bandwidth).toFixed(1)}%)` : ""}`;
      });
      const prefillCells = prefills.map((l) => `${f.prefill[l].toFixed(1)}${peak ? ` (${((100 * 2 * work.layerParameters * f.prefill[l]) / peak).toFixed(1)}%)` : ""}`);
      console.log(`| ${f.model} | ${f.backend} | ${f.device} | ${decodeCells.join(" | ")} | ${prefillCells.join(" | ")} |`);
    }
  }
  console.log(JSON.stringify({ bench: "backends", command, results }));
}

await main();
process.exit(0);
