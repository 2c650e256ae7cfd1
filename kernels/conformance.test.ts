// The kernel conformance harness (in the spirit of llama.cpp's test-backend-ops): discovers every
// kernels/<op>/cases.ts, runs each case's WebAssembly kernel through WasmRuntime - split across two threads, as
// three uneven calls, across three threads, and in the relaxed-SIMD build across two threads - and compares every
// written buffer with the plain-TypeScript
// reference by NMSE under the case's tolerance (0 = byte-identical). Guard bytes around every buffer catch
// out-of-bounds writes; outputs start as NaN so that unwritten elements fail.
// KERNELS_REPORT=1 npx vitest run kernels  prints every measured NMSE;
// KERNELS_PERF=1 npx vitest run kernels    also times every case (median of repeated two-thread runs).
import { existsSync, readdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { WasmRuntime } from "./wasm/runtime.js";
import { relaxedSimdSupported } from "./wasm/relaxed-simd.js";
import { failIfMissing } from "./testing/environment.js";
import type { CaseSetup, HostArray, KernelCase } from "./case.js";
import { nmse } from "./nmse.js";

const kernelsDir = dirname(fileURLToPath(import.meta.url));
const GUARD_BYTES = 64;
const GUARD_VALUE = 0xa5;

const ops = readdirSync(kernelsDir, { withFileTypes: true })
  .filter((entry) => entry.isDirectory() && existsSync(join(kernelsDir, entry.name, "cases.ts")))
  .map((entry) => entry.name)
  .sort();
const casesByOp = new Map<string, KernelCase[]>();
for (const op of ops) {
  const module = (await import(pathToFileURL(join(kernelsDir, op, "cases.ts")).href)) as { cases: KernelCase[] };
  casesByOp.set(op, module.cases);
}

/** How a case's range is split among threads and calls, and which build of the kernels runs it. */
type SplitMode = "parallel-2" | "uneven-calls" | "parallel-3" | "relaxed-parallel-2";

interface Placed {
  pointers: Record<string, number>;
  sizes: Record<string, number>;
}

function place(runtime: WasmRuntime, setup: CaseSetup): Placed {
  const pointers: Record<string, number> = {};
  const sizes: Record<string, number> = {};
  for (const [name, buffer] of Object.entries(setup.buffers)) {
    const bytes = "bytes" in buffer && typeof buffer.bytes === "number" ? buffer.bytes : (buffer as HostArray).byteLength;
    const pointer = runtime.alloc(bytes + 2 * GUARD_BYTES) + GUARD_BYTES;
    runtime.u8(pointer - GUARD_BYTES, GUARD_BYTES).fill(GUARD_VALUE);
    runtime.u8(pointer + bytes, GUARD_BYTES).fill(GUARD_VALUE);
    if (ArrayBuffer.isView(buffer)) runtime.write(pointer, buffer);
    else runtime.u8(pointer, bytes).fill(0xff); // NaN in every f32 lane
    pointers[name] = pointer;
    sizes[name] = bytes;
  }
  for (const [name, contents] of Object.entries(setup.link?.(pointers) ?? {})) {
    if (!(name in pointers) || contents.byteLength > sizes[name]) throw new RangeError(`link: ${name} is not a buffer of ${contents.byteLength} bytes or more`);
    runtime.write(pointers[name], contents);
  }
  return { pointers, sizes };
}

function run(runtime: WasmRuntime, setup: CaseSetup, placed: Placed, mode: SplitMode): void {
  const args = setup.args.map((arg) => (typeof arg === "string" ? placed.pointers[arg] : arg));
  if (setup.count === undefined) {
    runtime.call(setup.kernel, ...args);
    return;
  }
  const count = setup.count;
  const grain = setup.grain ?? 1;
  if (mode === "uneven-calls") {
    // Three contiguous calls of unequal, grain-aligned sizes (some possibly empty).
    const a = Math.min(count, Math.floor((count * 0.13) / grain) * grain);
    const b = Math.min(count, Math.max(a, Math.ceil((count * 0.71) / grain) * grain));
    for (const [start, end] of [[0, a], [a, b], [b, count]]) if (start < end) runtime.call(setup.kernel, ...args, start, end);
    return;
  }
  runtime.parallel(setup.kernel, args, count, grain);
}

function check(runtime: WasmRuntime, setup: CaseSetup, placed: Placed, tolerance: number, mode: SplitMode): void {
  for (const name of Object.keys(setup.buffers)) {
    const pointer = placed.pointers[name];
    const guards = [runtime.u8(pointer - GUARD_BYTES, GUARD_BYTES), runtime.u8(pointer + placed.sizes[name], GUARD_BYTES)];
    for (const guard of guards) expect(guard.every((byte) => byte === GUARD_VALUE), `${mode}: write outside buffer ${name}`).toBe(true);
  }
  for (const [name, expected] of Object.entries(setup.expected)) {
    const pointer = placed.pointers[name];
    if (tolerance === 0) {
      const actual = runtime.u8(pointer, expected.byteLength);
      const reference = new Uint8Array(expected.buffer, expected.byteOffset, expected.byteLength);
      const first = actual.findIndex((byte, i) => byte !== reference[i]);
      expect(first, `${mode}: ${name} differs from the reference first at byte ${first}`).toBe(-1);
    } else {
      const Constructor = expected.constructor as new (buffer: ArrayBufferLike, offset: number, length: number) => HostArray;
      const actual = new Constructor(runtime.memory.buffer, pointer, expected.length);
      const error = nmse(actual, expected);
      if (process.env.KERNELS_REPORT) console.log(`${setup.kernel} ${mode} ${name}: NMSE ${error.toExponential(2)} (tolerance ${tolerance})`);
      expect(Number.isNaN(error) ? Infinity : error, `${mode}: ${name} NMSE`).toBeLessThanOrEqual(tolerance);
    }
  }
}

/** Median microseconds of repeated runs of a placed case (perf mode; in-place kernels rerun on their own output). */
function timeCase(runtime: WasmRuntime, setup: CaseSetup, placed: Placed): number {
  const times: number[] = [];
  const deadline = performance.now() + 200;
  while (times.length < 5 || (performance.now() < deadline && times.length < 1000)) {
    const start = performance.now();
    run(runtime, setup, placed, "parallel-2");
    times.push((performance.now() - start) * 1000);
  }
  return times.sort((a, b) => a - b)[times.length >> 1];
}

// The relaxed-SIMD build runs every case too where V8 accepts it (Node 20 with the flag the runtime sets, Node 22+);
// under CI it must.
const relaxedReason = relaxedSimdSupported() ? undefined : "this V8 cannot run WebAssembly relaxed SIMD";
let two: WasmRuntime;
let three: WasmRuntime;
let relaxed: WasmRuntime | undefined;
beforeAll(async () => {
  failIfMissing(relaxedReason);
  two = await WasmRuntime.create({ threads: 2, simd: "plain" });
  three = await WasmRuntime.create({ threads: 3, simd: "plain" });
  if (!relaxedReason) relaxed = await WasmRuntime.create({ threads: 2, simd: "relaxed" });
});
afterAll(async () => {
  await two?.dispose();
  await three?.dispose();
  await relaxed?.dispose();
});

it("finds kernels with conformance cases", () => {
  expect(ops).toContain("matmul");
  expect([...casesByOp.values()].every((cases) => cases.length > 0)).toBe(true);
});

for (const [op, cases] of casesByOp) {
  describe(op, () => {
    for (const kernelCase of cases) {
      it(kernelCase.name, () => {
        const setup = kernelCase.build();
        const modes: SplitMode[] = setup.count === undefined ? ["parallel-2"] : ["parallel-2", "uneven-calls", "parallel-3"];
        if (relaxed) modes.push("relaxed-parallel-2");
        for (const mode of modes) {
          const runtime = mode === "parallel-3" ? three : mode === "relaxed-parallel-2" ? relaxed! : two;
          const mark = runtime.mark();
          try {
            const placed = place(runtime, setup);
            run(runtime, setup, placed, mode);
            check(runtime, setup, placed, kernelCase.tolerance, mode);
            if (process.env.KERNELS_PERF && (mode === "parallel-2" || mode === "relaxed-parallel-2")) {
              console.log(`${kernelCase.name}${mode === "relaxed-parallel-2" ? " (relaxed SIMD)" : ""}: ${timeCase(runtime, setup, placed).toFixed(1)} us`);
            }
          } finally {
            runtime.release(mark);
          }
        }
      });
    }
  });
}
