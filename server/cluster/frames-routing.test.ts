// The cluster's frame codec (what a worker or gateway refuses) and the routing rule (least load relative to
// capacity, ties spread at random), without processes.
import { Packr } from "msgpackr";
import { describe, expect, it } from "vitest";
import { FROM_WORKER_TYPES, type FromWorkerFrame, TO_WORKER_TYPES, type ToWorkerFrame, decodeFrame, encodeFrame } from "./frames.js";
import { cacheAware, leastLoaded } from "./routing.js";

describe("cluster frames", () => {
  it("round-trip a submit with its undefined fields still undefined (the engine tells unset from null)", () => {
    const frame: ToWorkerFrame = { type: "submit", model: "m", request: { id: "r1", input: { messages: [{ role: "user", content: "hi" }] }, sampling: { temperature: undefined, topP: 0.5 } } as never };
    const decoded = decodeFrame<ToWorkerFrame>(encodeFrame(frame), TO_WORKER_TYPES) as Extract<ToWorkerFrame, { type: "submit" }>;
    expect(decoded).toEqual(frame);
    expect("temperature" in (decoded.request.sampling as object)).toBe(true);
    expect((decoded.request.sampling as { temperature?: number }).temperature).toBeUndefined();
  });

  it("round-trip logprobs requests and their events exactly (null first prompt entry, -Infinity, fractional logprobs, bytes)", () => {
    const submit: ToWorkerFrame = { type: "submit", model: "m", request: { id: "r2", input: { tokens: [1, 2] }, maxTokens: 0, minTokens: 0, logprobs: { top: 20 }, promptLogprobs: { top: 5 } } };
    expect(decodeFrame(encodeFrame(submit), TO_WORKER_TYPES)).toEqual(submit);
    const entry = { token: 7, logprob: -0.123456789012345, bytes: [0xe2, 0x82], top: [{ token: 7, logprob: -0.123456789012345, bytes: [0xe2, 0x82] }, { token: 9, logprob: Number.NEGATIVE_INFINITY, bytes: [] }] };
    const events: FromWorkerFrame[] = [
      { type: "event", event: { type: "prompt_logprobs", requestId: "r2", logprobs: [null, entry] } },
      { type: "event", event: { type: "text", requestId: "r2", text: "€", tokens: 1, logprobs: [entry] } },
      { type: "event", event: { type: "finish", requestId: "r2", reason: "length", tokens: [7], logprobs: [entry], usage: { promptTokens: 2, reusedPrefixTokens: 0, reusedSuffixTokens: 0, completionTokens: 1 }, timings: { timeToFirstToken: 0.1, total: 0.2, decodeTokensPerSecond: 0 }, seed: 1 } },
    ];
    for (const frame of events) expect(decodeFrame(encodeFrame(frame), FROM_WORKER_TYPES)).toEqual(frame);
  });

  it("refuse what is not a frame of the receiving side, naming the problem", () => {
    const packr = new Packr({ useRecords: false });
    expect(() => decodeFrame(packr.pack([1, 2]), TO_WORKER_TYPES)).toThrow(/msgpack map/);
    expect(() => decodeFrame(packr.pack("submit"), TO_WORKER_TYPES)).toThrow(/msgpack map/);
    expect(() => decodeFrame(packr.pack({ type: "hello" }), TO_WORKER_TYPES)).toThrow(/unknown cluster frame type "hello"/);
    expect(() => decodeFrame(packr.pack({ type: "submit" }), FROM_WORKER_TYPES)).toThrow(/unknown cluster frame type "submit"/);
    expect(() => decodeFrame(new Uint8Array([0xc1]), TO_WORKER_TYPES)).toThrow();
  });
});

describe("leastLoaded", () => {
  const worker = (name: string, load: number, capacity: number) => ({ name, load, capacity });

  it("picks the lowest load relative to capacity", () => {
    expect(leastLoaded([worker("a", 4, 8), worker("b", 3, 4), worker("c", 1, 1)])?.name).toBe("a");
    expect(leastLoaded([])).toBeUndefined();
  });

  it("spreads ties at random instead of sending every tie to the first worker", () => {
    const tied = [worker("a", 0, 8), worker("b", 0, 8), worker("c", 0, 8), worker("d", 1, 8)];
    const picked = [0, 0.34, 0.67, 0.99].map((r) => leastLoaded(tied, () => r)?.name);
    expect(picked).toEqual(["a", "b", "c", "c"]);
  });

  it("among equal loads, picks the candidate with the fewest recent requests before drawing at random", () => {
    const tied = [{ ...worker("a", 1, 8), recent: 5 }, { ...worker("b", 1, 8), recent: 2 }, { ...worker("c", 1, 8), recent: 2 }, { ...worker("d", 0, 8), recent: 9 }];
    expect(leastLoaded(tied, () => 0)?.name).toBe("d"); // load first
    expect([0, 0.99].map((r) => leastLoaded(tied.slice(0, 3), () => r)?.name)).toEqual(["b", "c"]);
  });
});

describe("cacheAware", () => {
  const worker = (name: string, load: number, cachedBlocks: number) => ({ name, load, capacity: 8, cachedBlocks });
  const fixed = (fixedMargin: number) => ({ blockSize: 16, promptTokens: 1000, meanOutputTokens: 32, fixedMargin });

  it("with a fixed margin, prefers the longest cached prefix while its holder is within it of the least loaded worker", () => {
    const workers = [worker("a", 0, 0), worker("b", 4, 10), worker("c", 2, 3)];
    expect(cacheAware(workers, fixed(4))?.name).toBe("b");
    expect(cacheAware(workers, fixed(3))?.name).toBe("a"); // b is 4 requests busier than a: over the margin
  });

  it("by default weighs the prompt tokens a holder saves against its extra load times the mean output length", () => {
    // A 1,000-token system prompt cached (62 blocks = 992 tokens saved), 32 output tokens per request: up to 31 more in flight.
    const long = { blockSize: 16, promptTokens: 1000, meanOutputTokens: 32 };
    expect(cacheAware([worker("a", 0, 0), worker("b", 31, 62)], long)?.name).toBe("b");
    expect(cacheAware([worker("a", 0, 0), worker("b", 32, 62)], long)?.name).toBe("a");
    // A one-block template prefix shared by every short prompt: worth less than one request in flight.
    const short = { blockSize: 16, promptTokens: 40, meanOutputTokens: 64 };
    expect(cacheAware([worker("a", 0, 0), worker("b", 1, 1)], short)?.name).toBe("a");
    expect(cacheAware([worker("a", 1, 0), worker("b", 1, 1)], short)?.name).toBe("b"); // equal loads: the cache decides
  });

  it("falls back to the least loaded worker when no worker holds any of the prompt", () => {
    expect(cacheAware([worker("a", 3, 0), worker("b", 1, 0)], fixed(4))?.name).toBe("b");
    expect(cacheAware([], fixed(4))).toBeUndefined();
  });

  it("counts a prefix that most recent prompts share as no match: the least loaded candidate takes the request", () => {
    const template = { ...fixed(4), commonBlocks: 1 };
    expect(cacheAware([worker("a", 0, 1), worker("b", 0, 0)], template, () => 0.99)?.name).toBe("b"); // a tie at random, not the holder
    expect(cacheAware([{ ...worker("a", 0, 1), recent: 3 }, { ...worker("b", 0, 1), recent: 1 }], template)?.name).toBe("b");
    expect(cacheAware([worker("a", 2, 2), worker("b", 0, 1)], template)?.name).toBe("a"); // a holds one block beyond: a match
  });

  it("still counts a shared prefix that is most of the prompt (one tenant's long system prompt, the only traffic so far)", () => {
    const soleTenant = { blockSize: 16, promptTokens: 130, meanOutputTokens: 32, commonBlocks: 7 }; // 7 of 8 blocks
    expect(cacheAware([worker("a", 0, 7), worker("b", 0, 0)], soleTenant, () => 0.99)?.name).toBe("a");
    expect(cacheAware([worker("a", 0, 4), worker("b", 0, 0)], { ...soleTenant, commonBlocks: 4 }, () => 0.99)?.name).toBe("b"); // 4 of 8: half, no match
  });

  it("among holders of equally long prefixes, takes the least loaded", () => {
    expect(cacheAware([worker("a", 3, 6), worker("b", 1, 6), worker("c", 0, 2)], fixed(4))?.name).toBe("b");
  });
});
