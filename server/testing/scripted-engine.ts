// A scripted stand-in for the serving engine in HTTP tests: submit() replays text deltas as engine events, so wire
// behaviour (tool calls, pings) can be tested without a model producing it.
import type { EngineEvent, EngineFinishReason, EngineRequest } from "../../engine/request.js";

/** What the scripted engine writes next: text deltas and how generation ends. */
export interface Script {
  deltas: string[];
  reason?: EngineFinishReason;
  stopSequence?: string;
  /** Milliseconds of silence before the finish event (for keep-alive tests). */
  pauseBeforeFinishMs?: number;
}

/** The engine's events for a script (ids and timings are filler). */
export function engineEvents(script: Script): EngineEvent[] {
  const requestId = "r";
  const usage = { promptTokens: 30, reusedPrefixTokens: 10, reusedSuffixTokens: 0, completionTokens: script.deltas.length };
  return [
    { type: "start", requestId, promptTokens: 30 },
    { type: "admitted", requestId, promptTokens: 30, reusedPrefixTokens: 10, reusedSuffixTokens: 0 },
    ...script.deltas.map((text): EngineEvent => ({ type: "text", requestId, text })),
    { type: "finish", requestId, reason: script.reason ?? "stop", stopSequence: script.stopSequence, tokens: [], usage, timings: { timeToFirstToken: 0, total: 0, decodeTokensPerSecond: 0 }, seed: 0 },
  ];
}

export async function* replay(items: EngineEvent[], pauseBeforeFinishMs = 0): AsyncGenerator<EngineEvent> {
  for (const item of items) {
    if (item.type === "finish" && pauseBeforeFinishMs > 0) await new Promise((resolve) => setTimeout(resolve, pauseBeforeFinishMs));
    yield item;
  }
}

/** Just enough of an Engine for the HTTP server: submit plays the current script; the requests are kept. */
export class ScriptedEngine {
  script: Script = { deltas: [] };
  readonly requests: EngineRequest[] = [];

  submit(request: EngineRequest) {
    this.requests.push(request);
    const events = engineEvents(this.script);
    return { id: request.id ?? "r", [Symbol.asyncIterator]: () => replay(events, this.script.pauseBeforeFinishMs) };
  }

  abort(): boolean {
    return false;
  }

  get queueDepth(): number {
    return 0;
  }
}

