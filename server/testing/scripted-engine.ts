// A scripted stand-in for the serving engine in HTTP tests: submit() replays text deltas as engine events, so wire
// behaviour (tool calls, pings) can be tested without a model producing it.
import type { EngineStream, ServingEngine } from "../../engine/engine.js";
import type { ModelInfo } from "../../engine/host/messages.js";
import type { PreparedPrompt } from "../../engine/prompt.js";
import { EngineError, type EngineEvent, type EngineFinishReason, type EngineRequest, type EngineStats } from "../../engine/request.js";
import type { DetokenizeRequest, Detokenized, TokenizeRequest } from "../../engine/tokenize.js";

/** The model a scripted engine pretends to serve. */
export const SCRIPTED_MODEL: ModelInfo = { path: "scripted", architecture: "scripted", contextSize: 512, vocabSize: 0, loadSeconds: 0, backend: "wasm", device: "none (scripted)", chatTemplate: "model" };

/** Prompt tokens of every scripted request. */
export const SCRIPTED_PROMPT_TOKENS = 30;

/** What the scripted engine writes next: text deltas and how generation ends. */
export interface Script {
  deltas: string[];
  reason?: EngineFinishReason;
  stopSequence?: string;
  /** Milliseconds of silence before the finish event (for keep-alive tests). */
  pauseBeforeFinishMs?: number;
  /** Ends with this engine error instead of a finish (after the deltas). */
  failWith?: EngineError;
}

/** The engine's events for a script (ids and timings are filler). */
export function engineEvents(script: Script): EngineEvent[] {
  const requestId = "r";
  const usage = { promptTokens: SCRIPTED_PROMPT_TOKENS, reusedPrefixTokens: 10, reusedSuffixTokens: 0, completionTokens: script.deltas.length };
  return [
    { type: "start", requestId, promptTokens: SCRIPTED_PROMPT_TOKENS },
    { type: "admitted", requestId, promptTokens: SCRIPTED_PROMPT_TOKENS, reusedPrefixTokens: 10, reusedSuffixTokens: 0 },
    ...script.deltas.map((text): EngineEvent => ({ type: "text", requestId, text })),
    script.failWith
      ? { type: "error", requestId, error: script.failWith }
      : { type: "finish", requestId, reason: script.reason ?? "stop", stopSequence: script.stopSequence, tokens: [], usage, timings: { timeToFirstToken: 0, total: 0, decodeTokensPerSecond: 0 }, seed: 0 },
  ];
}

/**
 * The events of a script, in order; the pause before the finish (if any) ends early when `aborted()` turns true, and
 * an aborted request then finishes with reason "aborted", as the engine's do.
 */
export async function* replay(items: EngineEvent[], pauseBeforeFinishMs = 0, aborted: () => boolean = () => false): AsyncGenerator<EngineEvent> {
  for (const item of items) {
    if (item.type === "finish" && pauseBeforeFinishMs > 0) {
      const until = Date.now() + pauseBeforeFinishMs;
      while (Date.now() < until && !aborted()) await new Promise((resolve) => setTimeout(resolve, Math.min(10, until - Date.now())));
    }
    if (aborted()) {
      if (item.type === "finish") yield { ...item, reason: "aborted" };
      else continue;
      return;
    }
    yield item;
  }
}

/**
 * A serving engine that plays scripts: the queued ones to the next requests, in order, then the current one to every
 * request; the requests are kept.
 */
export class ScriptedEngine implements ServingEngine {
  script: Script = { deltas: [] };
  /** Scripts for the next requests, first in first played (agent runs: one per model turn). */
  readonly queue: Script[] = [];
  readonly requests: EngineRequest[] = [];
  /** The prepared prompt handed to each submit (undefined where none was), in the order of `requests`. */
  readonly handed: Array<PreparedPrompt | undefined> = [];
  readonly #aborted = new Set<string>();
  #ids = 0;

  submit(request: EngineRequest, prepared?: PreparedPrompt): EngineStream {
    this.requests.push(request);
    this.handed.push(prepared);
    const script = this.queue.shift() ?? this.script;
    const id = request.id ?? `r${++this.#ids}`;
    const events = engineEvents(script);
    return { id, [Symbol.asyncIterator]: () => replay(events, script.pauseBeforeFinishMs, () => this.#aborted.has(id)) };
  }

  abort(id: string): boolean {
    this.#aborted.add(id);
    return true;
  }

  /** The scripted prompt's size (its events report 30 prompt tokens). */
  countTokens(request: EngineRequest): number {
    this.requests.push(request);
    return SCRIPTED_PROMPT_TOKENS;
  }

  /**
   * A byte-level stand-in for a vocabulary: each UTF-8 byte of the text is one token (its value); a conversation is
   * its messages' contents, one per line.
   */
  tokenize(request: TokenizeRequest): number[] {
    const text = "text" in request ? request.text : request.messages.map((message) => (typeof message.content === "string" ? message.content : "")).join("\n");
    return [...new TextEncoder().encode(text)];
  }

  /** The inverse of {@link tokenize}: token ids as bytes. */
  detokenize(request: DetokenizeRequest): Detokenized {
    const bad = request.tokens.findIndex((token) => !Number.isInteger(token) || token < 0 || token > 255);
    if (bad >= 0) throw new EngineError("invalid_request", `tokens[${bad}] is ${JSON.stringify(request.tokens[bad])}; token ids are integers in 0..255`, `tokens[${bad}]`);
    const text = new TextDecoder().decode(Uint8Array.from(request.tokens));
    return request.pieces ? { text, pieces: request.tokens.map((token) => [token]) } : { text };
  }

  get queueDepth(): number {
    return 0;
  }

  stats(): EngineStats {
    const none = { finished: this.requests.length, aborted: 0, failed: 0, preemptions: 0 };
    return {
      running: 0, waiting: 0,
      kvBlocks: { total: 0, used: 0, cached: 0, free: 0, blockSize: 16 },
      cache: { lookups: 0, prefixHits: 0, sectionHits: 0, prefixHitRate: 0, sectionHitRate: 0, prefixTokenRate: 0, sectionTokenRate: 0 },
      requests: none,
      tokens: { prompt: 0, computedPrompt: 0, generated: 0, forkedPrompt: 0 },
    };
  }
}

