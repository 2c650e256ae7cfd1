// The cluster's frame codec (what a worker or gateway refuses) and the routing rule (least load relative to
// capacity, ties spread at random), without processes.
import { Packr } from "msgpackr";
import { describe, expect, it } from "vitest";
import { FROM_WORKER_TYPES, TO_WORKER_TYPES, type ToWorkerFrame, decodeFrame, encodeFrame } from "./frames.js";
import { cacheAware, leastLoaded } from "./routing.js";

describe("cluster frames", () => {
  it("round-trip a submit with its undefined fields still undefined (the engine tells unset from null)", () => {
    const frame: ToWorkerFrame = { type: "submit", model: "m", request: { id: "r1", input: { messages: [{ role: "user", content: "hi" }] }, sampling: { temperature: undefined, topP: 0.5 } } as never };
    const decoded = decodeFrame<ToWorkerFrame>(encodeFrame(frame), TO_WORKER_TYPES) as Extract<ToWorkerFrame, { type: "submit" }>;
    expect(decoded).toEqual(frame);
    expect("temperature" in (decoded.request.sampling as object)).toBe(true);
    expect((decoded.request.sampling as { temperature?: number }).temperature).toBeUndefined();
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
});

describe("cacheAware", () => {
  const worker = (name: string, load: number, cachedBlocks: number) => ({ name, load, capacity: 8, cachedBlocks });

  it("prefers the longest cached prefix while its holder is within the load margin of the least loaded worker", () => {
    const workers = [worker("a", 0, 0), worker("b", 4, 10), worker("c", 2, 3)];
    expect(cacheAware(workers, 4)?.name).toBe("b");
    expect(cacheAware(workers, 3)?.name).toBe("a"); // b is 4 requests busier than a: over the margin
  });

  it("lets a holder be twice its capacity busier than the least loaded worker by default", () => {
    expect(cacheAware([worker("a", 0, 0), worker("b", 16, 5)], undefined)?.name).toBe("b"); // capacity 8: margin 16
    expect(cacheAware([worker("a", 0, 0), worker("b", 17, 5)], undefined)?.name).toBe("a");
  });

  it("falls back to the least loaded worker when no worker holds any of the prompt", () => {
    expect(cacheAware([worker("a", 3, 0), worker("b", 1, 0)], 4)?.name).toBe("b");
    expect(cacheAware([], 4)).toBeUndefined();
  });

  it("among holders of equally long prefixes, takes the least loaded", () => {
    expect(cacheAware([worker("a", 3, 6), worker("b", 1, 6), worker("c", 0, 2)], 4)?.name).toBe("b");
  });
});
