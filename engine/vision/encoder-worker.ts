// The vision encoder's thread (started by ThreadedVisionEncoder, engine/vision/encoder-thread.ts): loads the
// projector into a WebAssembly encoder of its own and answers each image with its embeddings (transferred, not copied).
import { parentPort, workerData } from "node:worker_threads";
import type { RgbImage } from "../chat/messages.js";
import { sendableError } from "../host/messages.js";
import type { EncoderReady, EncoderWorkerData } from "./encoder-thread.js";
import { WasmVisionEncoder } from "./wasm-encoder.js";

const port = parentPort;
if (!port) throw new Error("encoder-worker.js runs as a worker thread (started by ThreadedVisionEncoder)");
const data = workerData as EncoderWorkerData;

try {
  const encoder = await WasmVisionEncoder.load(data.path, { threads: data.threads, simd: data.simd });
  port.on("message", ({ call, image }: { call: number; image: RgbImage }) => {
    try {
      const embeddings = encoder.encode(image);
      port.postMessage({ call, answer: embeddings }, [embeddings.buffer as ArrayBuffer]); // a copy out of the shared memory
    } catch (error) {
      port.postMessage({ call, error: sendableError(error) });
    }
  });
  port.postMessage({ ready: encoder.config } satisfies EncoderReady);
} catch (error) {
  port.postMessage({ failed: sendableError(error) } satisfies EncoderReady);
}
