import { execFile } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { WasmKernelError, WasmMemoryError, WasmModuleMissingError } from "./errors.js";
import { KernelProfile, setKernelProfile } from "./kernel-profile.js";
import { RESERVED_LOW_BYTES, WasmRuntime, shareStart } from "./runtime.js";

let runtime: WasmRuntime;
beforeAll(async () => {
  runtime = await WasmRuntime.create({ threads: 2, initialBytes: 1 << 20, maximumBytes: 256 << 20 });
});
afterAll(async () => {
  await runtime?.dispose();
});

describe("shareStart", () => {
  it("covers [0, count) with contiguous grain-aligned shares", () => {
    for (const [count, grain, parts] of [[10, 1, 3], [10, 4, 2], [3, 1, 4], [151936, 4, 2], [7, 8, 2]]) {
      const starts = Array.from({ length: parts + 1 }, (_, p) => shareStart(count, grain, parts, p));
      expect(starts[0]).toBe(0);
      expect(starts[parts]).toBe(count);
      for (let p = 0; p < parts; p++) {
        expect(starts[p + 1]).toBeGreaterThanOrEqual(starts[p]);
        if (p + 1 < parts && starts[p + 1] < count) expect(starts[p + 1] % grain).toBe(0);
      }
    }
    expect([0, 1, 2].map((p) => shareStart(10, 1, 3, p))).toEqual([0, 3, 6]);
  });
});

describe("WasmRuntime", () => {
  it("loads the kernel module on every thread", () => {
    expect(runtime.threads).toBe(2);
    expect(runtime.kernelNames).toEqual(expect.arrayContaining(["matmul_q8_0", "quantize_q8_0", "attention", "rmsnorm"]));
  });

  it("allocates aligned memory above the reserved bytes and frees scratch with mark/release", () => {
    const mark = runtime.mark();
    const a = runtime.alloc(10);
    const b = runtime.alloc(3, 4096);
    expect(a).toBeGreaterThanOrEqual(RESERVED_LOW_BYTES);
    expect(a % 64).toBe(0);
    expect(b % 4096).toBe(0);
    expect(b).toBeGreaterThanOrEqual(a + 10);
    runtime.release(mark);
    expect(runtime.alloc(10)).toBe(a);
    runtime.release(mark);
    expect(() => runtime.alloc(8, 3)).toThrow(RangeError);
    expect(() => runtime.release(mark + 1)).toThrow(RangeError);
  });

  it("grows the memory on demand and keeps earlier views usable", () => {
    const mark = runtime.mark();
    const first = runtime.alloc(16);
    const early = runtime.f32(first, 4);
    early.set([1, 2, 3, 4]);
    const before = runtime.memory.buffer.byteLength;
    const big = runtime.alloc(before + (8 << 20));
    expect(runtime.memory.buffer.byteLength).toBeGreaterThan(before);
    runtime.u8(big + before, 4).set([9, 9, 9, 9]);
    expect(Array.from(runtime.f32(first, 4))).toEqual([1, 2, 3, 4]);
    early[0] = 5; // an old view still aliases the same (shared) memory
    expect(runtime.f32(first, 1)[0]).toBe(5);
    runtime.release(mark);
  });

  it("refuses allocations past the maximum", () => {
    expect(() => runtime.alloc(300 << 20)).toThrow(WasmMemoryError);
  });

  it("runs a kernel split across threads with the same result as one call", () => {
    const mark = runtime.mark();
    const n = 10007;
    const a = runtime.alloc(n * 4), b = runtime.alloc(n * 4), out = runtime.alloc(n * 4);
    runtime.f32(a, n).set(Float32Array.from({ length: n }, (_, i) => i));
    runtime.f32(b, n).set(Float32Array.from({ length: n }, (_, i) => 2 * i));
    for (const grain of [1, 4, 64, 20000]) {
      runtime.f32(out, n).fill(NaN);
      runtime.parallel("add", [a, b, out], n, grain);
      expect(runtime.f32(out, n).every((v, i) => v === 3 * i)).toBe(true);
    }
    runtime.f32(out, n).fill(NaN);
    runtime.call("add", a, b, out, 0, n);
    expect(runtime.f32(out, n).every((v, i) => v === 3 * i)).toBe(true);
    runtime.release(mark);
  });

  it("times each dispatch by kernel into the active profile, counting the shares the calling thread ran, and nothing without one", () => {
    const mark = runtime.mark();
    const n = 4096;
    const a = runtime.alloc(n * 4), out = runtime.alloc(n * 4);
    const profile = new KernelProfile();
    runtime.parallel("add", [a, a, out], n); // before: not recorded
    setKernelProfile(profile);
    try {
      runtime.parallel("add", [a, a, out], n);
      runtime.parallel("add", [a, a, out], n, n); // one share: run on the calling thread
      runtime.call("scale", a, 2, out, 0, n);
    } finally {
      setKernelProfile(undefined);
    }
    runtime.call("scale", a, 2, out, 0, n); // after: not recorded
    const add = profile.kernels.get("add")!;
    expect(add).toMatchObject({ calls: 2, shares: 4 + 1 });
    expect(add.mainShares).toBeGreaterThanOrEqual(1);
    expect(add.mainShares).toBeLessThanOrEqual(5);
    expect(profile.kernels.get("scale")).toMatchObject({ calls: 1, shares: 1, mainShares: 1 });
    expect(profile.totalMilliseconds()).toBeGreaterThan(0);
    expect([...profile.kernels.keys()].sort()).toEqual(["add", "scale"]);
    runtime.release(mark);
  });

  it("passes f32 arguments through (scale)", () => {
    const mark = runtime.mark();
    const a = runtime.upload(Float32Array.of(1, 2, 3, 4, 5));
    const out = runtime.alloc(20);
    runtime.parallel("scale", [a, 0.5, out], 5);
    expect(Array.from(runtime.f32(out, 5))).toEqual([0.5, 1, 1.5, 2, 2.5]);
    runtime.release(mark);
  });

  it("turns a trap on any thread into a WasmKernelError naming the thread, and keeps working", async () => {
    const mark = runtime.mark();
    const n = 4096;
    const out = runtime.alloc(n * 4);
    const valid = runtime.alloc(n * 4);
    const outside = 2 ** 32 - 64; // every element read runs off the end of memory
    expect(() => runtime.call("add", outside, valid, out, 0, n)).toThrow(/main thread: RuntimeError/);
    expect(() => runtime.parallel("add", [outside, valid, out], n)).toThrow(WasmKernelError);
    // Which thread claims which share is dynamic: with many shares the worker soon traps on one of them.
    const many = await WasmRuntime.create({ threads: 2, sharesPerThread: 64, spinMicroseconds: 10_000, maximumBytes: 64 << 20 });
    const manyOut = many.alloc(n * 4);
    let workerFailed = false;
    // NOTE: time-bounded, not count-bounded: on a busy machine the worker may go unscheduled for a while.
    for (const deadline = performance.now() + 30_000; !workerFailed && performance.now() < deadline; ) {
      try {
        many.parallel("add", [outside, manyOut, manyOut], n);
      } catch (error) {
        workerFailed = /worker 1: RuntimeError/.test(String(error));
      }
    }
    expect(workerFailed).toBe(true);
    many.parallel("add", [manyOut, manyOut, manyOut], n);
    await many.dispose();
    runtime.parallel("add", [valid, valid, out], n);
    runtime.release(mark);
  });

  it("names unknown kernels", () => {
    expect(() => runtime.parallel("no_such_kernel", [], 10)).toThrow(/no kernel named "no_such_kernel"/);
  });

  it("reports a missing module with the command that builds it", async () => {
    await expect(WasmRuntime.create({ modulePath: "/nonexistent/kernels.wasm" })).rejects.toThrow(WasmModuleMissingError);
    await expect(WasmRuntime.create({ modulePath: "/nonexistent/kernels.wasm" })).rejects.toThrow(/npm run build:wasm/);
  });

  it("works with one thread and with more threads than cores", async () => {
    for (const threads of [1, 5]) {
      const other = await WasmRuntime.create({ threads, maximumBytes: 64 << 20 });
      const n = 1001;
      const a = other.upload(Float32Array.from({ length: n }, (_, i) => i));
      const out = other.alloc(n * 4);
      for (let repeat = 0; repeat < 50; repeat++) other.parallel("add", [a, a, out], n);
      expect(other.f32(out, n).every((v, i) => v === 2 * i)).toBe(true);
      await other.dispose();
      expect(() => other.parallel("add", [a, a, out], n)).toThrow(/after dispose/);
    }
  });

  it("runs runtimes that share their threads each in its own memory, until the last is disposed", async () => {
    const [first, second] = await WasmRuntime.createSharingThreads(2, { threads: 2, sharesPerThread: 64, maximumBytes: 64 << 20 });
    expect(first.memory).not.toBe(second.memory);
    const n = 20011;
    // The same offsets in both memories hold different data: a worker that ran in the wrong memory would show.
    const place = (rt: WasmRuntime, scale: number) => {
      const a = rt.upload(Float32Array.from({ length: n }, (_, i) => scale * i));
      return { a, out: rt.alloc(n * 4) };
    };
    const one = place(first, 1);
    const two = place(second, 10);
    expect(two.a).toBe(one.a);
    for (let repeat = 0; repeat < 20; repeat++) {
      first.parallel("add", [one.a, one.a, one.out], n);
      second.parallel("add", [two.a, two.a, two.out], n);
    }
    expect(first.f32(one.out, n).every((v, i) => v === 2 * i)).toBe(true);
    expect(second.f32(two.out, n).every((v, i) => v === 20 * i)).toBe(true);
    await first.dispose();
    expect(() => first.parallel("add", [one.a, one.a, one.out], n)).toThrow(/after dispose/);
    second.f32(two.out, n).fill(0);
    second.parallel("add", [two.a, two.a, two.out], n); // the shared workers still serve the other
    expect(second.f32(two.out, n).every((v, i) => v === 20 * i)).toBe(true);
    await second.dispose();
  });

  it("does not keep the process alive when never disposed", async () => {
    const dir = mkdtempSync(join(tmpdir(), "loom-runtime-"));
    const script = join(dir, "leak.ts");
    writeFileSync(script, `import { WasmRuntime } from ${JSON.stringify(join(import.meta.dirname, "runtime.ts"))};\n` +
      `const rt = await WasmRuntime.create({ threads: 2 });\nrt.parallel("add", [rt.alloc(64), rt.alloc(64), rt.alloc(64)], 16);\nconsole.log("done");\n`);
    const viteNode = join(import.meta.dirname, "../../node_modules/.bin/vite-node");
    try {
      const { stdout } = await promisify(execFile)(viteNode, [script], { timeout: 60_000, killSignal: "SIGKILL" });
      expect(stdout).toContain("done");
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
