// chunkTokens: a chunk never cuts an image's tokens, and stops before an image still being encoded.
import { describe, expect, it } from "vitest";
import { type AtomicSpan, type SchedulableRequest, chunkTokens } from "./scheduler.js";

function request(spans: AtomicSpan[]): SchedulableRequest {
  return { id: "r", priority: 0, arrival: 1, tokens: [], computed: 0, atomicSpans: () => spans };
}

describe("chunkTokens", () => {
  const image = { start: 10, end: 30, ready: true };
  it("takes the whole budget away from images", () => {
    expect(chunkTokens(request([image]), 0, 8, 64)).toBe(8);
    expect(chunkTokens(request([image]), 0, 10, 64)).toBe(10);
    expect(chunkTokens(request([image]), 30, 16, 64)).toBe(16);
    expect(chunkTokens(request([]), 0, 16, 16)).toBe(16);
  });
  it("ends before an image it would cut, or takes it whole", () => {
    expect(chunkTokens(request([image]), 0, 16, 64)).toBe(10);
    expect(chunkTokens(request([image]), 0, 30, 64)).toBe(30);
    expect(chunkTokens(request([image]), 0, 40, 64)).toBe(40);
    // Starting at or inside the image (a cached prefix ending there), it runs to the image's end.
    expect(chunkTokens(request([image]), 10, 4, 64)).toBe(20);
    expect(chunkTokens(request([image]), 16, 4, 64)).toBe(14);
  });
  it("waits when the step cannot hold the rest of the image", () => {
    expect(chunkTokens(request([image]), 10, 4, 19)).toBe(0);
    expect(chunkTokens(request([image]), 10, 4, 20)).toBe(20);
  });
  it("stops before an image still encoding, whatever the budget", () => {
    const encoding = { ...image, ready: false };
    expect(chunkTokens(request([encoding]), 0, 64, 64)).toBe(10);
    expect(chunkTokens(request([encoding]), 10, 64, 64)).toBe(0);
    expect(chunkTokens(request([image, { start: 40, end: 50, ready: false }]), 0, 64, 64)).toBe(40);
  });
});
