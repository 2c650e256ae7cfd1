// Runs a legacy completions request on the engine: one engine request per choice (prompt i, choice j has index
// i * n + j), the n choices of a prompt in one fork group (the engine computes the prompt once), seeds seed + j; their
// events merged into one stream tagged with the choice's index, as they are generated.
import type { ServingEngine } from "../../../engine/engine.js";
import { EventChannel } from "../../../engine/event-channel.js";
import type { EngineError, EngineEvent, EngineRequest, EngineUsage, TokenLogprob } from "../../../engine/request.js";
import type { CompletionRequest } from "../../adapters/completions/parse.js";
import { choiceSeed } from "../../protocol/choices.js";
import type { InternalUsage } from "../../protocol/internal.js";

/** What one choice reports, tagged with its index. */
export type ChoiceEvent =
  | { type: "admitted"; index: number }
  | { type: "prompt_logprobs"; index: number; logprobs: (TokenLogprob | null)[] }
  | { type: "text"; index: number; text: string; logprobs?: TokenLogprob[] }
  | { type: "finish"; index: number; reason: "stop" | "length" }
  | { type: "error"; index: number; error: EngineError };

/** A running completion: its choices' events, the usage so far, and a way to stop every choice. */
export interface RunningCompletion extends AsyncIterable<ChoiceEvent> {
  /** What the choices used so far (the engine's counts at each finish, aborted included; a lower bound on errors). */
  usage(): InternalUsage;
  /** Resolves once every choice's engine stream ended (its finish or error read): the usage is then final. */
  ended(): Promise<void>;
  abort(): void;
}

/** Whether the prompt's log-probabilities are reported (echo with logprobs, or scoring with max_tokens 0). */
export function scoresPrompt(request: CompletionRequest): boolean {
  return request.echo && (request.logprobs !== undefined || request.maxTokens === 0);
}

/** The engine request of choice `choice` of prompt `prompt` (tokenized: `tokens`). */
export function choiceRequest(id: string, request: CompletionRequest, prompt: number, choice: number, tokens: number[]): EngineRequest {
  const { n, sampling, logprobs } = request;
  const engineRequest: EngineRequest = {
    id: `${id}-${prompt * n + choice}`,
    input: { tokens },
    maxTokens: request.maxTokens,
    sampling: { ...sampling, ...(sampling.seed !== undefined ? { seed: choiceSeed(sampling.seed, choice) } : {}) },
    stop: request.stop,
  };
  if (logprobs !== undefined && request.maxTokens > 0) engineRequest.logprobs = { top: logprobs };
  // Echo with logprobs reports the prompt's; echo with max_tokens 0 and no logprobs still runs the prompt (billed as
  // OpenAI bills it), reporting the fewest entries.
  // Only the first choice scores the prompt: it leads the fork group, the others fork the prompt it computed and are
  // given its log-probabilities (runCompletion), so that n scored choices cost one prefill.
  if (scoresPrompt(request) && choice === 0) engineRequest.promptLogprobs = { top: logprobs ?? 0 };
  if (request.minTokens !== undefined) engineRequest.minTokens = request.minTokens;
  if (request.ignoreEndOfGeneration) engineRequest.ignoreEndOfGeneration = true;
  if (request.cacheKey !== undefined) engineRequest.affinityKey = request.cacheKey;
  if (n > 1) engineRequest.fork = { group: `${id}-p${prompt}`, size: n };
  return engineRequest;
}

/** Per choice: its prompt's index and the engine's counts (a lower bound until the finish). */
interface ChoiceUsage {
  prompt: number;
  admitted: boolean;
  usage: EngineUsage;
  /** Text events so far (each at least one token): the lower bound of a choice that failed. */
  pieces: number;
  finished: boolean;
}

/**
 * The usage of a completion as OpenAI bills `n`: each prompt once (the most prompt tokens any of its choices
 * reported, and the fewest cached: the group computed it once), the completion tokens of every choice.
 */
function sumUsage(choices: readonly ChoiceUsage[]): InternalUsage {
  const byPrompt = new Map<number, ChoiceUsage[]>();
  for (const choice of choices) byPrompt.set(choice.prompt, [...(byPrompt.get(choice.prompt) ?? []), choice]);
  let promptTokens = 0;
  let cachedTokens = 0;
  let completionTokens = 0;
  for (const group of byPrompt.values()) {
    const admitted = group.filter((choice) => choice.admitted);
    if (admitted.length > 0) {
      promptTokens += Math.max(...admitted.map((choice) => choice.usage.promptTokens));
      cachedTokens += Math.min(...admitted.map((choice) => choice.usage.reusedPrefixTokens + choice.usage.reusedSuffixTokens));
    }
    for (const choice of group) completionTokens += choice.finished ? choice.usage.completionTokens : choice.pieces;
  }
  return { promptTokens, cachedTokens, completionTokens };
}

/**
 * Submits every choice of `request` (its prompts tokenized: `prompts`) and merges their events. The stream ends once
 * every choice finished, or at the first error (the others are then aborted); an aborted choice's stream ends without
 * a finish. Leaving the iteration early aborts every choice.
 */
export function runCompletion(engine: ServingEngine, id: string, request: CompletionRequest, prompts: number[][]): RunningCompletion {
  const choices: ChoiceUsage[] = [];
  const ids: string[] = [];
  const streams: AsyncIterable<EngineEvent>[] = [];
  prompts.forEach((tokens, prompt) => {
    for (let choice = 0; choice < request.n; choice++) {
      const engineRequest = choiceRequest(id, request, prompt, choice, tokens);
      choices.push({ prompt, admitted: false, pieces: 0, finished: false, usage: { promptTokens: tokens.length, reusedPrefixTokens: 0, reusedSuffixTokens: 0, completionTokens: 0 } });
      ids.push(engineRequest.id!);
      streams.push(engine.submit(engineRequest));
    }
  });
  const abort = () => {
    for (const choiceId of ids) engine.abort(choiceId);
  };
  // Each stream is read to its end whatever the consumer does, so that the usage counts every choice's finish.
  const arrivals = new EventChannel<{ index: number; event: EngineEvent }>(abort);
  const pumps = streams.map(async (stream, index) => {
    const choice = choices[index]!;
    for await (const event of stream) {
      if (event.type === "admitted") {
        choice.admitted = true;
        choice.usage = { ...choice.usage, promptTokens: event.promptTokens, reusedPrefixTokens: event.reusedPrefixTokens, reusedSuffixTokens: event.reusedSuffixTokens };
      } else if (event.type === "text") choice.pieces += 1;
      else if (event.type === "finish") Object.assign(choice, { usage: event.usage, finished: true, admitted: true });
      arrivals.push({ index, event });
    }
  });
  const ended = Promise.allSettled(pumps).then(() => arrivals.close());
  const n = request.n;
  /** Per prompt whose choice 0 scores it for all: its log-probabilities once they came, else the others' events held. */
  const scored = new Map<number, (TokenLogprob | null)[]>();
  const held = new Map<number, ChoiceEvent[]>();
  /** The events to send for one engine event (the prompt's log-probabilities go to each choice of the prompt). */
  const release = (index: number, event: ChoiceEvent): ChoiceEvent[] => {
    const prompt = Math.floor(index / n);
    if (n === 1 || !scoresPrompt(request)) return [event];
    if (event.type === "prompt_logprobs") {
      scored.set(prompt, event.logprobs);
      const others = held.get(prompt) ?? [];
      held.delete(prompt);
      const copies = Array.from({ length: n - 1 }, (_, choice): ChoiceEvent => ({ type: "prompt_logprobs", index: prompt * n + choice + 1, logprobs: event.logprobs }));
      return [event, ...copies, ...others];
    }
    if (index % n === 0 || scored.has(prompt)) return [event];
    held.set(prompt, [...(held.get(prompt) ?? []), event]);
    return [];
  };
  const merged = async function* (): AsyncGenerator<ChoiceEvent> {
    let finished = 0;
    let completed = false;
    try {
      for await (const { index, event } of arrivals) {
        let choiceEvent: ChoiceEvent;
        switch (event.type) {
          case "admitted":
            choiceEvent = { type: "admitted", index };
            break;
          case "prompt_logprobs":
            choiceEvent = { type: "prompt_logprobs", index, logprobs: event.logprobs };
            break;
          case "text":
            choiceEvent = { type: "text", index, text: event.text, ...(event.logprobs ? { logprobs: event.logprobs } : {}) };
            break;
          case "finish":
            // An aborted choice ends the completion: nothing more is sent.
            if (event.reason === "aborted") return;
            choiceEvent = { type: "finish", index, reason: event.reason };
            break;
          case "error":
            abort();
            yield { type: "error", index, error: event.error };
            return;
          default:
            continue;
        }
        for (const sent of release(index, choiceEvent)) {
          yield sent;
          if (sent.type === "finish" && ++finished === streams.length) completed = true;
        }
        if (completed) return;
      }
    } finally {
      // Left early (the client went, an error, an abort): the other choices stop too.
      if (!completed) abort();
    }
  };
  return { usage: () => sumUsage(choices), ended: () => ended, abort, [Symbol.asyncIterator]: () => merged() };
}
