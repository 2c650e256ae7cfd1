// One loom measurement of bench/vision-encode.ts in a fresh process, as llama-mtmd-cli is one: "encode" loads the
// mmproj alone and encodes one image; "ttft" loads the text model with the mmproj and times one image request to its
// first token. Prints one JSON line (ChildResult) on stdout. Run by vision-encode.js: node vision-encode-child.js JSON.
import { readFileSync } from "node:fs";
import sharp from "sharp";
import type { RgbImage } from "../engine/chat/messages.js";
import { Engine } from "../engine/engine.js";
import { loadModel } from "../engine/load.js";
import { imagePatches } from "../engine/vision/preprocess.js";
import { WasmVisionEncoder } from "../engine/vision/wasm-encoder.js";
import { KernelProfile, setKernelProfile } from "../kernels/wasm/kernel-profile.js";
import { f32KvBytes } from "./bench-models.js";

/** What the parent asks for. */
export interface ChildTask {
  role: "encode" | "ttft";
  mmproj: string;
  /** The text model (ttft only). */
  model?: string;
  image: string;
  prompt: string;
  threads: number;
  /** Context of the ttft request's model (KV for one sequence of it). */
  context: number;
}

/** What a child measured. Times in milliseconds. */
export interface ChildResult {
  role: ChildTask["role"];
  /** Loading the mmproj (encode) or the text model with it (ttft). */
  loadMs: number;
  /** The PNG to RGB pixels (sharp). */
  decodeMs: number;
  /** encode: imagePatches alone (letterbox, normalisation, patch layout), which encode() also does. */
  preprocessMs?: number;
  /** WasmVisionEncoder.encode, preprocessing included (ttft: the request's one call, timed inside the engine's step). */
  encodeMs?: number;
  /** ttft: from submit to the first text or finish event; and the engine's own timeToFirstToken. */
  ttftMs?: number;
  engineTtftMs?: number;
  promptTokens?: number;
  /** Process CPU seconds (every thread) during the timed encode or request; and in all, load included. */
  cpuSeconds: number;
  processCpuSeconds: number;
  /** Peak RSS of the process, bytes. */
  maxRssBytes: number;
  /** The WebAssembly kernels' wall time during the timed part, by kernel: calls and milliseconds. */
  kernels: Record<string, { calls: number; milliseconds: number }>;
}

function cpuSeconds(): number {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1e6;
}

async function decodePng(path: string): Promise<RgbImage> {
  const { data, info } = await sharp(readFileSync(path)).removeAlpha().raw().toBuffer({ resolveWithObject: true });
  return { width: info.width, height: info.height, data: new Uint8Array(data) };
}

function kernelTimes(profile: KernelProfile): ChildResult["kernels"] {
  return Object.fromEntries([...profile.kernels].map(([name, { calls, milliseconds }]) => [name, { calls, milliseconds }]));
}

async function encodeRun(task: ChildTask): Promise<ChildResult> {
  let started = performance.now();
  const encoder = await WasmVisionEncoder.load(task.mmproj, { threads: task.threads });
  const loadMs = performance.now() - started;
  try {
    started = performance.now();
    const image = await decodePng(task.image);
    const decodeMs = performance.now() - started;
    started = performance.now();
    imagePatches(image, encoder.config);
    const preprocessMs = performance.now() - started;
    // One dispatch costs a performance.now() pair: a few hundred per image, nothing against minutes.
    const profile = new KernelProfile();
    setKernelProfile(profile);
    const cpuBefore = cpuSeconds();
    started = performance.now();
    const embeddings = await encoder.encode(image);
    const encodeMs = performance.now() - started;
    const cpu = cpuSeconds() - cpuBefore;
    setKernelProfile(undefined);
    if (!embeddings.every(Number.isFinite)) throw new Error("the encoder's output is not finite");
    return { role: "encode", loadMs, decodeMs, preprocessMs, encodeMs, cpuSeconds: cpu, processCpuSeconds: cpuSeconds(), maxRssBytes: process.resourceUsage().maxRSS * 1024, kernels: kernelTimes(profile) };
  } finally {
    await encoder.dispose();
  }
}

async function ttftRun(task: ChildTask): Promise<ChildResult> {
  const modelPath = task.model!;
  let started = performance.now();
  const model = await loadModel(modelPath, {
    mmproj: task.mmproj, threads: task.threads, contextSize: task.context, kvCache: { bytes: f32KvBytes(modelPath, task.context, 1) },
  });
  const loadMs = performance.now() - started;
  // The request's encode, timed where the engine calls it.
  const vision = model.vision!;
  const encode = vision.encode.bind(vision);
  let encodeMs = 0;
  vision.encode = (image: RgbImage) => {
    const at = performance.now();
    const rows = encode(image);
    const done = () => void (encodeMs += performance.now() - at);
    if (rows instanceof Promise) return rows.finally(done);
    done();
    return rows;
  };
  const engine = new Engine(model);
  try {
    started = performance.now();
    const image = await decodePng(task.image);
    const decodeMs = performance.now() - started;
    const profile = new KernelProfile();
    setKernelProfile(profile);
    const cpuBefore = cpuSeconds();
    started = performance.now();
    let ttftMs: number | undefined;
    let engineTtftMs: number | undefined;
    let promptTokens: number | undefined;
    for await (const event of engine.submit({
      input: { messages: [{ role: "user", content: task.prompt, images: [{ offset: 0, image }] }] },
      maxTokens: 1, sampling: { temperature: 0 }, ignoreEndOfGeneration: true,
    })) {
      if ((event.type === "text" || event.type === "finish") && ttftMs === undefined) ttftMs = performance.now() - started;
      if (event.type === "start") promptTokens = event.promptTokens;
      if (event.type === "finish") engineTtftMs = event.timings.timeToFirstToken * 1000;
      if (event.type === "error") throw event.error;
    }
    const cpu = cpuSeconds() - cpuBefore;
    setKernelProfile(undefined);
    return { role: "ttft", loadMs, decodeMs, encodeMs, ttftMs, engineTtftMs, promptTokens, cpuSeconds: cpu, processCpuSeconds: cpuSeconds(), maxRssBytes: process.resourceUsage().maxRSS * 1024, kernels: kernelTimes(profile) };
  } finally {
    engine.close();
    await model.dispose();
  }
}

const task = JSON.parse(process.argv[2] ?? "{}") as ChildTask;
const result = task.role === "ttft" ? await ttftRun(task) : await encodeRun(task);
process.stdout.write(`${JSON.stringify(result)}\n`);
