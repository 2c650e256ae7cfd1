// The frames between a gateway and an engine worker over one WebSocket (loom gateway / loom worker): the same
// requests, events and questions as between a server thread and its engine thread (engine/host/messages.ts), in
// msgpack binary frames, plus per-request flow control: a worker sends a request's events only against credit the
// gateway grants as its client reads them, so a slow client slows its worker stream, not the gateway's memory.
import { Packr } from "msgpackr";
import type { EngineQuestion, ModelInfo, SentError, SentEvent } from "../../engine/host/messages.js";
import type { PromptModelSource } from "../../engine/prompt-counter.js";
import type { Detokenized } from "../../engine/tokenize.js";
import type { EmbeddingResult } from "../../engine/embed/request.js";
import type { EngineRequest, EngineStats, PrefixCacheSnapshot, PrefixCacheUpdate } from "../../engine/request.js";
import type { WireFormat } from "../protocol/internal.js";

/** The largest frame either side takes (a submit carries the whole conversation; gateways bound bodies first). */
export const MAX_FRAME_BYTES = 64 * 1024 * 1024;
/** Events a worker may send for one request before the gateway grants more (about one client write each). */
export const STREAM_WINDOW = 64;

/** One model a worker serves, as gateways route to it. */
export interface WorkerModel {
  slugs: Record<WireFormat, string[]>;
  model: ModelInfo;
}

/** How frames name a worker's model: its first slug. */
export function modelKey(model: WorkerModel): string {
  return model.slugs.openai[0] ?? model.slugs.anthropic[0] ?? model.model.path;
}

/** What a worker tells a gateway when the connection opens (and publishes in Redis, see worker-registry.ts). */
export interface WorkerDescription {
  /** Unique per worker process. */
  id: string;
  /** The dedicated pool it belongs to ("default": shared by every organization without a pool). */
  pool: string;
  models: WorkerModel[];
  /** Sequences it runs at once (its engines' batch size): routing compares load against it. */
  capacity: number;
}

/** Gateway to worker. */
export type ToWorkerFrame =
  /** `model`: the WorkerModel's key (modelKey). */
  | { type: "submit"; model: string; request: EngineRequest & { id: string } }
  /** The gateway's client read `events` more events of request `id`: the worker may send that many more. */
  | { type: "credit"; id: string; events: number }
  | { type: "abort"; id: string }
  | { type: "call"; call: number; model: string; question: EngineQuestion };

/** Worker to gateway. */
export type FromWorkerFrame =
  | { type: "hello"; worker: WorkerDescription }
  | { type: "event"; event: SentEvent }
  | { type: "reply"; call: number; answer: EngineStats | number | number[] | Detokenized | SentEmbeddings }
  | { type: "reply"; call: number; error: SentError }
  /** Requests the worker holds now, from every gateway (sent when it changes, at most every LOAD_INTERVAL_MS). */
  | { type: "load"; inFlight: number }
  /** After the hello, per model: its tokenizer and chat template, so the gateway hashes prompts as the worker caches them. */
  | { type: "prompt-model"; model: string; source: PromptModelSource }
  /** After the hello, per model: every prefix-cache chain it holds; then "cache" frames keep the picture exact. */
  | { type: "cache-snapshot"; model: string; snapshot: PrefixCacheSnapshot }
  | { type: "cache"; model: string; update: PrefixCacheUpdate };

/**
 * An embedding answer as a frame carries it: each vector as its little-endian float32 bytes (msgpack has no float32
 * arrays; a Float32Array would arrive as bare bytes).
 */
export interface SentEmbeddings extends Omit<EmbeddingResult, "embeddings"> {
  embeddings: Uint8Array[];
}

/** `result` for a reply frame. */
export function sendableEmbeddings(result: EmbeddingResult): SentEmbeddings {
  const embeddings = result.embeddings.map((vector) => {
    const bytes = new Uint8Array(vector.length * 4);
    const view = new DataView(bytes.buffer);
    vector.forEach((value, i) => view.setFloat32(i * 4, value, true));
    return bytes;
  });
  return { ...result, embeddings };
}

/** A reply frame's embeddings as the engine gave them. @throws Error when a vector's bytes are not whole float32s. */
export function receivedEmbeddings(sent: SentEmbeddings): EmbeddingResult {
  const embeddings = sent.embeddings.map((bytes, i) => {
    if (!(bytes instanceof Uint8Array) || bytes.length % 4 !== 0) throw new Error(`a worker's embeddings[${i}] is not float32 bytes`);
    const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    return Float32Array.from({ length: bytes.length / 4 }, (_, j) => view.getFloat32(j * 4, true));
  });
  return { ...sent, embeddings };
}

/** The least time between two load frames on one connection. */
export const LOAD_INTERVAL_MS = 20;

const packr = new Packr({ useRecords: false });

/** A frame as sent. */
export function encodeFrame(frame: ToWorkerFrame | FromWorkerFrame): Uint8Array {
  return packr.pack(frame);
}

/**
 * A received frame, checked as far as dispatching needs (its type and the fields that route it); the engine checks
 * a request's own fields as it checks a local one.
 * @throws Error naming what is wrong with it.
 */
export function decodeFrame<T extends ToWorkerFrame | FromWorkerFrame>(data: ArrayBuffer | Uint8Array, types: ReadonlySet<string>): T {
  const bytes = data instanceof Uint8Array ? data : new Uint8Array(data);
  const frame: unknown = packr.unpack(bytes);
  if (typeof frame !== "object" || frame === null || Array.isArray(frame)) throw new Error("a cluster frame must be a msgpack map");
  const type = (frame as { type?: unknown }).type;
  if (typeof type !== "string" || !types.has(type)) throw new Error(`unknown cluster frame type ${JSON.stringify(type)?.slice(0, 40)}`);
  return frame as T;
}

/** The frame types a worker accepts. */
export const TO_WORKER_TYPES: ReadonlySet<string> = new Set(["submit", "credit", "abort", "call"]);
/** The frame types a gateway accepts. */
export const FROM_WORKER_TYPES: ReadonlySet<string> = new Set(["hello", "event", "reply", "load", "prompt-model", "cache-snapshot", "cache"]);
