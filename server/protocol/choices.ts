// Several choices of one request (OpenAI `n`): n engine requests with the same input, one fork group (the engine
// computes the prompt once and forks its KV into each), their own ids and seeds, each read by its own output pipeline
// (reasoning, tool calls, logprobs), their events merged into one stream tagged with the choice's index.
import type { ServingEngine } from "../../engine/engine.js";
import type { EngineRequest } from "../../engine/request.js";
import { EventChannel } from "../../engine/event-channel.js";
import { type InternalEvent, type InternalRequest, type InternalUsage, ProtocolError } from "./internal.js";
import { type RunOptions, type RunningRequest, engineRequestOf, internalEvents, runRequest } from "./run.js";

/** The most choices one request may ask for (OpenAI `n`): each is a sequence in the engine's batch. */
export const MAX_CHOICES = 16;

/** The engine request id of choice `index` of the request `id`. */
export function choiceId(id: string, index: number): string {
  return `${id}-${index}`;
}

/**
 * The seed of choice `index` when the request has `seed`: seed + index, so that the choices differ and the request
 * repeats; past the largest safe integer it wraps to the smallest.
 */
export function choiceSeed(seed: number, index: number): number {
  const next = seed + index;
  return next <= Number.MAX_SAFE_INTEGER ? next : Number.MIN_SAFE_INTEGER + (next - Number.MAX_SAFE_INTEGER - 1);
}

/**
 * The usage of several choices of one prompt, as OpenAI bills `n`: the prompt once (its tokens, and the fewest any
 * choice took from the cache: the group computed it once), the completion tokens (and reasoning tokens) of all.
 */
export function sumChoiceUsage(usages: readonly InternalUsage[]): InternalUsage {
  const counted = usages.filter((usage) => usage.promptTokens > 0 || usage.completionTokens > 0);
  const sum: InternalUsage = {
    promptTokens: Math.max(0, ...usages.map((usage) => usage.promptTokens)),
    cachedTokens: counted.length === 0 ? 0 : Math.min(...counted.map((usage) => usage.cachedTokens)),
    completionTokens: usages.reduce((total, usage) => total + usage.completionTokens, 0),
  };
  if (usages.some((usage) => usage.reasoningTokens !== undefined)) sum.reasoningTokens = usages.reduce((total, usage) => total + (usage.reasoningTokens ?? 0), 0);
  return sum;
}

/**
 * Runs `request` as `request.choices` choices (one: runRequest as it is) and streams their InternalEvents: one
 * `start` once every choice is admitted (usage summed), then each choice's events tagged with `choice` as they come
 * (a choice's `finish` included), then a last untagged `finish` with the usage of all (sumChoiceUsage), whose reason
 * is choice 0's.
 *
 * NOTE: one choice failing fails the request: the others are aborted and the stream ends with that choice's error
 * (before the `start`: the request's error; after it: the stream's), as one request fails.
 * `options.onUsage` sees the summed usage each time a choice reports its own.
 */
export function runChoices(engine: ServingEngine, id: string, request: InternalRequest, options: RunOptions = {}): RunningRequest {
  const size = request.choices ?? 1;
  if (size <= 1) return runRequest(engine, id, request, options);
  const usages: InternalUsage[] = Array.from({ length: size }, () => ({ promptTokens: 0, cachedTokens: 0, completionTokens: 0 }));
  const streams = usages.map((_, index) => {
    const engineRequest: EngineRequest = { ...engineRequestOf(choiceId(id, index), request, options), fork: { group: id, size } };
    const seed = request.sampling.seed;
    if (seed !== undefined) engineRequest.sampling = { ...engineRequest.sampling, seed: choiceSeed(seed, index) };
    const stream = engine.submit(engineRequest, options.prepared);
    return internalEvents(stream, request, {
      ...options,
      onUsage: (usage) => {
        usages[index] = usage;
        options.onUsage?.(sumChoiceUsage(usages));
      },
    });
  });
  const abort = () => {
    for (let index = 0; index < size; index++) engine.abort(choiceId(id, index));
  };
  return { id, abort, [Symbol.asyncIterator]: () => mergeChoices(streams, abort)[Symbol.asyncIterator]() };
}

/** One choice's next event, or its end. */
type Arrival = { index: number; event: InternalEvent } | { index: number; done: true };

/**
 * Merges the choices' event streams (see runChoices for the order). However it ends, it ends only once every choice's
 * stream has ended: each reports its usage at its own end, and whoever settles the request after the merged stream
 * is done must see them all.
 */
async function* mergeChoices(streams: AsyncGenerator<InternalEvent>[], abort: () => void): AsyncGenerator<InternalEvent> {
  const arrivals = new EventChannel<Arrival>(abort);
  const pump = async (stream: AsyncGenerator<InternalEvent>, index: number) => {
    try {
      for await (const event of stream) arrivals.push({ index, event });
    } catch (error) {
      arrivals.push({ index, event: { type: "error", error: error instanceof ProtocolError ? error : new ProtocolError("internal", (error as Error).message) } });
    }
    arrivals.push({ index, done: true });
  };
  streams.forEach((stream, index) => void pump(stream, index));
  // One iterator, read by hand: leaving a for-await loop would close the channel before the other choices end.
  const queue = arrivals[Symbol.asyncIterator]();
  let ended = 0;
  /** Reads the arrivals until every choice's stream has ended (after an abort: at the engine's next step). */
  const drain = async () => {
    while (ended < streams.length) {
      const next = await queue.next();
      if (next.done) return;
      if ("done" in next.value) ended++;
    }
  };

  const starts: (InternalUsage | undefined)[] = streams.map(() => undefined);
  const finishes: (Extract<InternalEvent, { type: "finish" }> | undefined)[] = streams.map(() => undefined);
  /** Events of choices that came before every choice started: sent after the one `start`. */
  const early: InternalEvent[] = [];
  let started = false;
  let completed = false;
  try {
    while (ended < streams.length) {
      const next = await queue.next();
      if (next.done) return;
      const arrival = next.value;
      if ("done" in arrival) {
        ended++;
        // A choice that ends without a finish or an error was aborted: nothing more is sent.
        if (!finishes[arrival.index]) {
          abort();
          await drain();
          return;
        }
        continue;
      }
      const { index, event } = arrival;
      if (event.type === "error") {
        abort();
        yield { type: "error", error: event.error };
        await drain();
        return;
      }
      if (event.type === "start") {
        starts[index] = event.usage;
        if (starts.every((usage) => usage !== undefined)) {
          started = true;
          yield { type: "start", usage: sumChoiceUsage(starts as InternalUsage[]) };
          yield* early.splice(0);
        }
        continue;
      }
      if (event.type === "finish") finishes[index] = event;
      const tagged = { ...event, choice: index } as InternalEvent;
      if (started) yield tagged;
      else early.push(tagged);
    }
    const all = finishes as Extract<InternalEvent, { type: "finish" }>[];
    completed = true;
    yield { type: "finish", reason: all[0]!.reason, usage: sumChoiceUsage(all.map((finish) => finish.usage)) };
  } finally {
    // Left early (the client went, an error): the other choices stop too, and end before this does.
    if (!completed) {
      abort();
      await drain();
    }
  }
}
