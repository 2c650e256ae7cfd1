// The messages between a WorkerEngine (server thread) and its engine worker (engine/host/engine-worker.ts). Plain
// data only: structured cloning drops an Error subclass's fields, so engine errors travel as their parts.
import { chatFormatOf } from "../chat/default-template.js";
import { GEMMA4_THINK_TAGS, isGemma4Template } from "../chat/gemma4.js";
import { isHarmonyTemplate } from "../chat/harmony.js";
import { mistralCallLayout, mistralThinkTags } from "../chat/mistral.js";
import type { PoolingType } from "../embed/pooling.js";
import type { EmbeddingRequest, EmbeddingResult } from "../embed/request.js";
import type { EngineOptions } from "../engine.js";
import type { VisionEncoder } from "../vision/encoder.js";
import type { BackendName, LoadedModel, LoadOptions } from "../load.js";
import type { PreparedPrompt, PromptSettings } from "../prompt.js";
import type { DetokenizeRequest, Detokenized, TokenizeRequest } from "../tokenize.js";
import { EngineError, type EngineErrorKind, type EngineEvent, type EngineRequest, type EngineStats, type PrefixCacheSnapshot, type PrefixCacheUpdate } from "../request.js";

/** What a server needs to know about a loaded model without holding it. */
export interface ModelInfo {
  /** The file or directory it was loaded from. */
  path: string;
  /** Hugging Face architecture family (`llama`, `qwen3`, ...). */
  architecture: string;
  /** Longest sequence served, prompt plus output. */
  contextSize: number;
  vocabSize: number;
  /** Seconds spent reading weights. */
  loadSeconds: number;
  /** Where it runs: the backend, and the device in words. */
  backend: BackendName;
  device: string;
  /** Whose chat template renders conversations: the model's own, or the default (ChatML) for a model without one. */
  chatTemplate: "model" | "default";
  /**
   * How the model writes reasoning and tool calls, as its chat template teaches it: "harmony" for OpenAI's harmony
   * channels (gpt-oss: engine/chat/harmony.ts); "mistral" for calls after `[TOOL_CALLS]` as one JSON list (v3 / Nemo),
   * "mistral-args" for `[TOOL_CALLS]NAME[ARGS]{...}` per call (tekken v11+: engine/chat/mistral.ts); "gemma4" for
   * Gemma 4's `<|tool_call>call:NAME{...}<tool_call|>` and thought channel (engine/chat/gemma4.ts); absent or "tags",
   * think and tool-call tags.
   */
  syntax?: "tags" | "harmony" | "mistral" | "mistral-args" | "gemma4";
  /**
   * Reasoning tags other than `<think>` that the template writes and the vocabulary holds (Magistral's `[THINK]`,
   * Gemma 4's thought channel).
   */
  thinkTags?: { open: string; close: string };
  /**
   * Whether the model can reason: harmony channels (gpt-oss), think tags other than `<think>` (above), or `<think>` and
   * `</think>` as tokens of its vocabulary (Qwen3, DeepSeek-R1). Servers refuse a reasoning effort for a model that
   * cannot (absent: not known, as from an older worker).
   */
  reasons?: boolean;
  /** Present when the model takes images: its vision encoder (`--mmproj`) and what one image costs. */
  vision?: VisionInfo;
  /**
   * Present when the model produces embeddings (POST /v1/embeddings): the pooling its GGUF declares, and the vectors'
   * width.
   */
  embeddings?: { pooling: PoolingType; dimensions: number };
}

/** What a server needs to know about a model's vision encoder. */
export interface VisionInfo {
  /** The mmproj file the encoder was loaded from. */
  path: string;
  /** Prompt tokens one image takes, its begin and end markers included (Gemma 3: 256 + 2). */
  tokensPerImage: number;
  /** Side of the square every image is resized (and padded) to, in pixels (Gemma 3: 896). */
  imageSize: number;
}

/** The {@link ModelInfo} of a model loaded in this thread. */
export function describeModel(model: LoadedModel): ModelInfo {
  return {
    path: model.path,
    architecture: model.config.architecture,
    contextSize: model.contextSize,
    vocabSize: model.config.vocab_size,
    loadSeconds: model.loadSeconds,
    backend: model.backend,
    device: model.device,
    chatTemplate: chatFormatOf(model.chatTemplate).isDefault ? "default" : "model",
    ...(model.pooling ? { embeddings: { pooling: model.pooling, dimensions: model.config.hidden_size } } : {}),
    ...syntaxOf(model),
    reasons: reasonsOf(model),
    ...(model.vision ? { vision: visionOf(model.vision) } : {}),
  };
}

/** What a server needs to know of a loaded vision encoder. */
function visionOf(encoder: VisionEncoder): VisionInfo {
  const markers = 2; // Gemma 3's <start_of_image> and <end_of_image>, one token each
  return { path: encoder.path, tokensPerImage: encoder.config.tokensPerImage + markers, imageSize: encoder.config.imageSize };
}

/** Whether the model can reason (see ModelInfo.reasons). */
function reasonsOf(model: LoadedModel): boolean {
  const { syntax, thinkTags } = syntaxOf(model);
  if (syntax === "harmony" || thinkTags !== undefined) return true;
  return model.tokenizer.tokenId("<think>") !== undefined && model.tokenizer.tokenId("</think>") !== undefined;
}

/** How the model writes reasoning and calls, from its chat template and vocabulary (see ModelInfo.syntax). */
function syntaxOf(model: LoadedModel): Pick<ModelInfo, "syntax" | "thinkTags"> {
  const hasToken = (text: string) => model.tokenizer.tokenId(text) !== undefined;
  if (isHarmonyTemplate(model.chatTemplate, hasToken)) return { syntax: "harmony" };
  if (isGemma4Template(model.chatTemplate, hasToken)) return { syntax: "gemma4", thinkTags: { ...GEMMA4_THINK_TAGS } };
  const layout = mistralCallLayout(model.chatTemplate, hasToken);
  if (layout === undefined) return {};
  const thinkTags = mistralThinkTags(model.chatTemplate, hasToken);
  return { syntax: layout === "json" ? "mistral" : "mistral-args", ...(thinkTags ? { thinkTags } : {}) };
}

/** What the worker is started with (its workerData). */
export interface EngineWorkerData {
  path: string;
  load: Omit<LoadOptions, "onProgress">;
  engine: EngineOptions;
  /** Test only: the thread honours `exit-for-testing` (see WorkerEngineOptions.testHooks). */
  testHooks?: boolean;
}

/** An error as sent across threads. */
export interface SentError {
  name: string;
  message: string;
  /** Set for engine errors. */
  kind?: EngineErrorKind;
  field?: string;
}

/** An engine event with its error (if any) in sendable form. */
export type SentEvent = Exclude<EngineEvent, { type: "error" }> | { type: "error"; requestId: string; error: SentError };

/** Server thread to worker. */
export type ToWorker =
  /**
   * `prepared`: the prompt, prepared on the prompt thread (the request's input then holds its tokens). `aborted`: the
   * client left while it was prepared: the engine ends it as aborted before any step (an abort message sent after the
   * submit could arrive after a step had already run it).
   */
  | { type: "submit"; request: EngineRequest & { id: string }; prepared?: PreparedPrompt; aborted?: true }
  | { type: "abort"; id: string }
  /** A question with an answer: the engine's stats, or the prompt tokens a request would run with. */
  | { type: "call"; call: number; question: EngineQuestion }
  /** Close the engine, dispose of the model (and its GPU device) and end the thread. */
  | { type: "stop" }
  /**
   * Test only: end the thread at once with `code`, as a crash would, without closing anything. Ignored unless the
   * thread was started with `testHooks` (only WorkerEngine.exitThreadForTesting sends it).
   */
  | { type: "exit-for-testing"; code: number };

/** Worker to server thread. */
export type FromWorker =
  | { type: "progress"; loadedBytes: number; totalBytes: number }
  /** `prompt`: what preparing a prompt needs of this engine, for the prompt thread. */
  | { type: "ready"; model: ModelInfo; prompt: PromptSettings }
  | { type: "load-failed"; error: SentError }
  | { type: "event"; event: SentEvent }
  /** The prefix cache changed in the last step (sent only while the server thread listens: always, for now). */
  | { type: "cache"; update: PrefixCacheUpdate }
  | { type: "reply"; call: number; answer: EngineStats | number | PrefixCacheSnapshot | number[] | Detokenized | EmbeddingResult }
  | { type: "reply"; call: number; error: SentError };

/** What a WorkerEngine may ask its engine (each has one answer). */
export type EngineQuestion =
  | { method: "stats" }
  | { method: "countTokens"; request: EngineRequest }
  | { method: "prefixCache" }
  | { method: "tokenize"; request: TokenizeRequest }
  | { method: "detokenize"; request: DetokenizeRequest }
  | { method: "embed"; request: EmbeddingRequest };

/** An error in sendable form. */
export function sendableError(error: unknown): SentError {
  if (error instanceof EngineError) return { name: error.name, message: error.message, kind: error.kind, field: error.field };
  if (error instanceof Error) return { name: error.name, message: error.message };
  return { name: "Error", message: String(error) };
}

/** Rebuilds an error on the receiving thread: an EngineError when it was one, else an Error with the same name. */
export function receivedError(sent: SentError): Error {
  if (sent.kind !== undefined) return new EngineError(sent.kind, sent.message, sent.field);
  const error = new Error(sent.message);
  error.name = sent.name;
  return error;
}

/** An engine event in sendable form. */
export function sendableEvent(event: EngineEvent): SentEvent {
  return event.type === "error" ? { ...event, error: sendableError(event.error) } : event;
}

/** An engine event as received. */
export function receivedEvent(event: SentEvent): EngineEvent {
  return event.type === "error" ? { ...event, error: receivedError(event.error) as EngineError } : event;
}
