// runChoices without a model: n engine requests of one fork group, their events merged (one start once all are
// admitted, tagged events, one last finish summing usage), and one failing choice failing the request.
import { describe, expect, it } from "vitest";
import type { EngineStream, ServingEngine } from "../../engine/engine.js";
import { EventChannel } from "../../engine/event-channel.js";
import { EngineError, type EngineEvent, type EngineRequest } from "../../engine/request.js";
import { MAX_CHOICES, choiceSeed, runChoices, sumChoiceUsage } from "./choices.js";
import type { InternalEvent, InternalRequest, InternalUsage } from "./internal.js";

const request = (choices: number, seed?: number): InternalRequest => ({
  format: "openai", model: "m", messages: [{ role: "user", content: "Hi" }], sampling: seed === undefined ? {} : { seed },
  stop: [], stream: true, includeUsage: false, thinking: { enabled: false }, autoCompaction: true, choices,
});

/** An engine whose requests' events the test pushes by request id. */
class PushedEngine {
  readonly submitted: EngineRequest[] = [];
  readonly aborted: string[] = [];
  readonly channels = new Map<string, EventChannel<EngineEvent>>();
  submit(engineRequest: EngineRequest): EngineStream {
    this.submitted.push(engineRequest);
    const channel = new EventChannel<EngineEvent>(() => this.abort(engineRequest.id!));
    this.channels.set(engineRequest.id!, channel);
    return { id: engineRequest.id!, [Symbol.asyncIterator]: () => channel[Symbol.asyncIterator]() };
  }
  abort(id: string): boolean {
    this.aborted.push(id);
    const channel = this.channels.get(id);
    channel?.push(finish(id, 0, "aborted"));
    channel?.close();
    return true;
  }
  admit(id: string, reused = 0): void {
    this.channels.get(id)!.push({ type: "start", requestId: id, promptTokens: 20 });
    this.channels.get(id)!.push({ type: "admitted", requestId: id, promptTokens: 20, reusedPrefixTokens: reused, reusedSuffixTokens: 0 });
  }
  text(id: string, text: string): void {
    this.channels.get(id)!.push({ type: "text", requestId: id, text, tokens: 1 });
  }
  end(id: string, completionTokens: number, reused = 0): void {
    this.channels.get(id)!.push(finish(id, completionTokens, "stop", reused));
    this.channels.get(id)!.close();
  }
}

function finish(id: string, completionTokens: number, reason: "stop" | "aborted", reused = 0): EngineEvent {
  return { type: "finish", requestId: id, reason, tokens: [], usage: { promptTokens: 20, reusedPrefixTokens: reused, reusedSuffixTokens: 0, completionTokens }, timings: { timeToFirstToken: 0, total: 0, decodeTokensPerSecond: 0 }, seed: 0 };
}

async function collect(events: AsyncIterable<InternalEvent>): Promise<InternalEvent[]> {
  const out: InternalEvent[] = [];
  for await (const event of events) out.push(event);
  return out;
}

describe("runChoices", () => {
  it("submits one fork group with seeds seed + i, starts once every choice is admitted, tags events and sums usage at the end", async () => {
    const engine = new PushedEngine();
    const running = runChoices(engine as unknown as ServingEngine, "chatcmpl-1", request(2, 5));
    const done = collect(running);
    await Promise.resolve();
    expect(engine.submitted.map((each) => [each.id, each.fork, each.sampling?.seed, each.affinityKey])).toEqual([
      ["chatcmpl-1-0", { group: "chatcmpl-1", size: 2 }, 5, undefined],
      ["chatcmpl-1-1", { group: "chatcmpl-1", size: 2 }, 6, undefined],
    ]);
    engine.admit("chatcmpl-1-0");
    engine.text("chatcmpl-1-0", "a");
    engine.admit("chatcmpl-1-1", 20);
    engine.text("chatcmpl-1-1", "b");
    engine.text("chatcmpl-1-0", "c");
    engine.end("chatcmpl-1-1", 1, 20);
    engine.end("chatcmpl-1-0", 2);
    const events = await done;
    expect(events.map((event) => [event.type, event.choice, event.type === "text" ? event.text : undefined])).toEqual([
      ["start", undefined, undefined],
      ["text", 0, "a"],
      ["text", 1, "b"],
      ["text", 0, "c"],
      ["finish", 1, undefined],
      ["finish", 0, undefined],
      ["finish", undefined, undefined],
    ]);
    expect(events.at(-1)).toMatchObject({ type: "finish", reason: "end_turn", usage: { promptTokens: 20, cachedTokens: 0, completionTokens: 3 } });
  });

  it("one choice failing aborts the others and ends the stream with its error, no last finish", async () => {
    const engine = new PushedEngine();
    const done = collect(runChoices(engine as unknown as ServingEngine, "c", request(3)));
    await Promise.resolve();
    for (const id of ["c-0", "c-1", "c-2"]) engine.admit(id);
    engine.text("c-0", "x");
    engine.channels.get("c-2")!.push({ type: "error", requestId: "c-2", error: new EngineError("internal", "boom") });
    const events = await done;
    expect(events.at(-1)).toMatchObject({ type: "error" });
    expect(events.filter((event) => event.type === "finish")).toEqual([]);
    expect(engine.aborted).toEqual(expect.arrayContaining(["c-0", "c-1"]));
  });

  it("ends only after every choice's stream ended, so that the usage settled after it counts each (aborts answered late, as from a thread)", async () => {
    /** Aborts are only recorded: their finishes come back when the test pushes them. */
    class LateAbortEngine extends PushedEngine {
      override abort(id: string): boolean {
        this.aborted.push(id);
        return true;
      }
    }
    const engine = new LateAbortEngine();
    const usages: InternalUsage[] = [];
    const running = runChoices(engine as unknown as ServingEngine, "late", request(3), { onUsage: (usage) => usages.push(usage) });
    const events = running[Symbol.asyncIterator]();
    await Promise.resolve();
    for (const id of ["late-0", "late-1", "late-2"]) {
      engine.admit(id);
      engine.text(id, "x");
    }
    expect((await events.next()).value).toMatchObject({ type: "start" });
    running.abort();
    let ended = false;
    const drained = (async () => {
      while (!(await events.next()).done) {
        // what settleAfterEnd does
      }
      ended = true;
    })();
    const abortedFinish = (id: string, tokens: number) => {
      engine.channels.get(id)!.push(finish(id, tokens, "aborted"));
      engine.channels.get(id)!.close();
    };
    abortedFinish("late-0", 1);
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(ended).toBe(false);
    abortedFinish("late-1", 2);
    abortedFinish("late-2", 3);
    await drained;
    expect(usages.at(-1)).toMatchObject({ promptTokens: 20, completionTokens: 6 });
  });

  it("one choice is runRequest as it is: no fork, no tags", async () => {
    const engine = new PushedEngine();
    const done = collect(runChoices(engine as unknown as ServingEngine, "one", request(1, 5)));
    await Promise.resolve();
    expect(engine.submitted.map((each) => [each.id, each.fork, each.sampling?.seed])).toEqual([["one", undefined, 5]]);
    engine.admit("one");
    engine.end("one", 1);
    expect((await done).every((event) => event.choice === undefined)).toBe(true);
  });
});

describe("choice seeds and usage", () => {
  it("seed + i, wrapping past the largest safe integer", () => {
    expect(choiceSeed(7, 2)).toBe(9);
    expect(choiceSeed(Number.MAX_SAFE_INTEGER, 1)).toBe(Number.MIN_SAFE_INTEGER);
    expect(MAX_CHOICES).toBe(16);
  });

  it("counts the prompt once, every choice's completion, the fewest cached tokens, reasoning summed", () => {
    expect(sumChoiceUsage([
      { promptTokens: 20, cachedTokens: 4, completionTokens: 3, reasoningTokens: 1 },
      { promptTokens: 20, cachedTokens: 20, completionTokens: 5, reasoningTokens: 2 },
    ])).toEqual({ promptTokens: 20, cachedTokens: 4, completionTokens: 8, reasoningTokens: 3 });
  });
});
