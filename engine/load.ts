// Loads a model path into everything generation needs: config, tokenizer, chat template and a ready runner.
import { availableParallelism } from "node:os";
import type { ModelRunner, RunnerOptions } from "./backends/runner.js";
import type { MemoryLimits } from "./backends/wasm/memory-plan.js";
import { WasmModelRunner } from "./backends/wasm/model-runner.js";
import type { LoadProgress } from "./backends/wasm/weight-loader.js";
import type { WebGpuTuning } from "./backends/webgpu/model-runner.js";
import { probeGpu } from "./backends/webgpu/probe.js";
import { webGpuUnsupported } from "./backends/webgpu/architectures.js";
import { BlockPool } from "./kv/block-pool.js";
import type { KvBudget, KvDtype } from "./kv/budget.js";
import { SlidingWindowKv } from "./kv/sliding-window.js";
import type { ModelConfig } from "./model/config.js";
import { openModelSource } from "./model/source.js";
import type { Tokenizer } from "./tokenizer/tokenizer.js";
import { tokenizerFromGguf } from "./tokenizer/gguf.js";
import { tokenizerFromHuggingFace } from "./tokenizer/huggingface.js";
import { type PoolingType, poolingFromGguf } from "./embed/pooling.js";
import { ModelFileError } from "./model/errors.js";
import { GEMMA3_IMAGE_MARKERS } from "./vision/clip-config.js";
import type { VisionEncoder } from "./vision/encoder.js";
import { openVisionFile } from "./vision/vision-file.js";
import { ThreadedVisionEncoder } from "./vision/encoder-thread.js";

/** Options for {@link loadModel}. */
export interface LoadOptions {
  /** Compute threads (default: all cores). */
  threads?: number;
  /**
   * WebAssembly backend: which build of the kernels runs, "relaxed" (relaxed SIMD's int8 dot products), "plain", or
   * "auto" (default: relaxed where this V8 runs it correctly). Both give identical results.
   */
  simd?: "auto" | "relaxed" | "plain";
  /** Longest sequence to support, prompt plus output (default: min(model context, 4096)). */
  contextSize?: number;
  /** Most tokens per forward pass, over all sequences (default 512). */
  batchSize?: number;
  /** Most sequences per forward pass (default 32). */
  maxSequences?: number;
  /**
   * KV cache memory budget (bytes or a fraction of free memory; default 0.4 of free memory) and dtype (default f32);
   * `keepWindowKv`: sliding-window layers keep KV for every position instead of freeing it behind the window.
   */
  kvCache?: KvBudget & { dtype?: KvDtype; keepWindowKv?: boolean };
  /** Called as weight bytes arrive. */
  onProgress?: (progress: LoadProgress) => void;
  /**
   * A vision projector (an `mmproj` GGUF, llama.cpp's flag name) for the model to take images: Gemma 3's. Its encoder
   * runs where the model does: on a WebGPU model's device (loaded again on the new device after a device loss; until
   * then images fail with an error that says the device was lost), or beside a WebAssembly model on a thread of its
   * own with its own WebAssembly threads (the engine's steps go on while it encodes).
   */
  mmproj?: string;
  /** Where the model runs (default "wasm"; "auto": WebGPU when a hardware GPU adapter is present, found by probeGpu). */
  backend?: BackendName | "auto";
  /** WebGPU only: weight part size and kernel choices that tests and benchmarks change (default: what the device allows). */
  webgpu?: WebGpuTuning;
  /**
   * WebAssembly only: the largest memory to create and the most layers per memory (default 4 GiB, as many as fit).
   * A model that does not fit one memory is spread over several, consecutive layers in each; these force a split.
   */
  wasm?: MemoryLimits;
}

/** The backends a model can run on. */
export type BackendName = "wasm" | "webgpu";

/** A model ready to generate. */
export interface LoadedModel {
  path: string;
  config: ModelConfig;
  tokenizer: Tokenizer;
  chatTemplate: string | null;
  runner: ModelRunner;
  /** The backend it runs on, and the device in words. */
  backend: BackendName;
  device: string;
  kvPool: BlockPool;
  /** The sliding-window layers' slots, where the runner frees their KV behind the window. */
  localKv?: SlidingWindowKv;
  contextSize: number;
  /** Seconds spent reading weights. */
  loadSeconds: number;
  /** Bytes of tensor data in the model file. */
  tensorBytes: number;
  /** The vision encoder, when loaded with a projector (`mmproj`). */
  vision?: VisionEncoder;
  /** How the model pools its hidden states into embeddings (`<arch>.pooling_type`); absent for a generation-only model. */
  pooling?: PoolingType;
  /** Stops the compute threads; the model cannot be used afterwards. */
  dispose(): Promise<void>;
}

/** Positions per KV block. */
export const KV_BLOCK_SIZE = 16;

/**
 * Opens a GGUF file or Hugging Face directory and loads it onto a backend: WebAssembly by default; WebGPU when asked
 * (`backend: "webgpu"`: an error when no adapter works), or with `"auto"` when a hardware GPU adapter is present.
 */
export async function loadModel(path: string, options: LoadOptions = {}): Promise<LoadedModel> {
  const source = openModelSource(path);
  const tokenizer = source.ggufMetadata ? tokenizerFromGguf(source.ggufMetadata, path) : tokenizerFromHuggingFace(path);
  const pooling = source.ggufMetadata ? poolingOf(path, source.ggufMetadata) : undefined;
  const contextSize = Math.min(options.contextSize ?? 4096, source.config.max_position_embeddings);
  if (!Number.isInteger(contextSize) || contextSize <= 0) throw new RangeError(`contextSize must be a positive integer, got ${options.contextSize}`);
  const backend = options.backend ?? "wasm";
  if (backend !== "wasm" && backend !== "webgpu" && backend !== "auto") throw new RangeError(`backend must be "wasm", "webgpu" or "auto", got ${JSON.stringify(backend)}`);
  const runnerOptions: RunnerOptions = {
    maxBatchTokens: options.batchSize ?? 512,
    maxSequences: options.maxSequences ?? 32,
    maxContext: contextSize,
    blockSize: KV_BLOCK_SIZE,
    kvCache: options.kvCache ?? {},
    onProgress: options.onProgress,
  };
  const started = performance.now();
  const threads = options.threads ?? availableParallelism();
  // The projector's header is checked against the model before any weights are read; its encoder loads beside the runner.
  const mmproj = options.mmproj;
  if (mmproj !== undefined) checkVision(mmproj, source.config, tokenizer);
  /** The vision encoder `load` gives, when a projector was asked for; `dispose` frees the runner if it fails. */
  const withVision = async (dispose: () => Promise<void>, load: (path: string) => Promise<VisionEncoder>): Promise<VisionEncoder | undefined> => {
    if (mmproj === undefined) return undefined;
    try {
      return await load(mmproj);
    } catch (error) {
      await dispose();
      throw error;
    }
  };
  const loaded = (runner: ModelRunner, backendName: BackendName, device: string, dispose: () => Promise<void>, vision: VisionEncoder | undefined): LoadedModel => {
    const kvPool = new BlockPool(runner.kvBlocks, KV_BLOCK_SIZE);
    const localKv = runner.localKvBlocks === undefined ? undefined : new SlidingWindowKv(kvPool, runner.localKvBlocks, source.config.sliding_window!);
    return {
      path, config: source.config, tokenizer, chatTemplate: source.chatTemplate, runner, backend: backendName, device, kvPool, localKv, contextSize,
      loadSeconds: (performance.now() - started) / 1000, tensorBytes: source.totalTensorBytes, ...(vision ? { vision } : {}),
      ...(pooling ? { pooling } : {}),
      dispose: async () => {
        await vision?.dispose(); // first: a WebGPU encoder runs on the runner's device
        await dispose();
      },
    };
  };
  return loadRunner();

  async function loadRunner(): Promise<LoadedModel> {
    // "auto" looks for a hardware GPU in a child process first: opening Dawn here prints its adapter warnings on stderr.
    // Models the WebGPU backend does not run yet stay on WebAssembly under "auto".
    const gpuRuns = webGpuUnsupported(source.config) === undefined;
    if (backend === "webgpu" || (backend === "auto" && gpuRuns && (await probeGpu()).hardware)) {
      // Dawn is loaded only when a GPU is wanted; where its native module cannot load, "auto" means WebAssembly.
      const gpu = await import("../kernels/webgpu/gpu.js").then(
        ({ openGpu }) => openGpu(),
        (error: Error) => ({ unavailable: `Dawn (npm webgpu) could not be loaded: ${error.message}` }),
      );
      if ("unavailable" in gpu) {
        if (backend === "webgpu") throw new Error(`--backend webgpu: ${gpu.unavailable}; use --backend wasm`);
      } else if (backend === "auto" && gpu.adapter.software) {
        gpu.device.destroy(); // a CPU Vulkan driver is slower than the WebAssembly kernels
      } else {
        try {
          const { RecoveringGpuRunner } = await import("./backends/webgpu/recovering-runner.js");
          const runner = await RecoveringGpuRunner.create(source, gpu, runnerOptions, options.webgpu);
          // The encoder runs on the runner's device, whichever that is now (a new one after a loss).
          const vision = await withVision(async () => runner.dispose(), async (path) => {
            const { RecoveringVisionEncoder } = await import("./vision/recovering-encoder.js");
            return RecoveringVisionEncoder.load(path, () => runner.gpu);
          });
          const device = `${gpu.adapter.description || gpu.adapter.vendor}${gpu.adapter.software ? " (software)" : ""}`;
          return loaded(runner, "webgpu", device, async () => runner.dispose(), vision);
        } catch (error) {
          gpu.device.destroy();
          throw error;
        }
      }
    }
    const runner = await WasmModelRunner.create(source, runnerOptions, { threads, simd: options.simd, ...options.wasm });
    // On a thread of its own: an image's encoding (as long as a long prefill) never holds up the model's steps.
    const vision = await withVision(() => runner.dispose(), (path) => ThreadedVisionEncoder.start(path, { threads, simd: options.simd }));
    const simd = runner.simd === "relaxed" ? ", relaxed SIMD" : "";
    const memories = runner.memoryCount > 1 ? `, ${runner.memoryCount} memories` : "";
    return loaded(runner, "wasm", `WebAssembly, ${threads} thread${threads === 1 ? "" : "s"}${simd}${memories}`, () => runner.dispose(), vision);
  }
}

/**
 * The pooling a GGUF declares (engine/embed/pooling.ts), checked: loom's layers attend causally, so a model that asks
 * for bidirectional attention (`<arch>.attention.causal` false: BERT-like encoders) is refused rather than run wrong.
 */
function poolingOf(path: string, metadata: ReadonlyMap<string, unknown>): PoolingType | undefined {
  const arch = String(metadata.get("general.architecture"));
  if (metadata.get(`${arch}.attention.causal`) === false) throw new ModelFileError(path, `${arch}.attention.causal is false: bidirectional attention is not supported`);
  try {
    return poolingFromGguf(metadata);
  } catch (error) {
    throw new ModelFileError(path, (error as Error).message);
  }
}

/**
 * Checks the projector at `path` (its header) against the text model it feeds: Gemma 3 only, its output as wide as
 * the model's embeddings, the image markers in the vocabulary. @throws ModelFileError naming the mismatch.
 */
function checkVision(path: string, config: ModelConfig, tokenizer: Tokenizer): void {
  if (config.architecture !== "gemma3") {
    throw new ModelFileError(path, `a vision projector needs a Gemma 3 model (architecture gemma3); this model is ${config.architecture}`);
  }
  const { config: vision } = openVisionFile(path);
  for (const marker of [GEMMA3_IMAGE_MARKERS.begin, GEMMA3_IMAGE_MARKERS.end]) {
    if (tokenizer.tokenId(marker) === undefined) throw new ModelFileError(path, `the model's vocabulary has no ${marker} token, which images need`);
  }
  if (vision.outputSize !== config.hidden_size) {
    throw new ModelFileError(path, `the projector writes embeddings of ${vision.outputSize} values, but the model's hidden size is ${config.hidden_size}: not this model's projector`);
  }
}
