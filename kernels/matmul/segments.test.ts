// matmul_segments runs several matrix multiplications in one dispatch: each segment's output must be, bit for bit,
// what its kernel computes when dispatched alone (plus its bias, added in f32), for every kernel a segment can name (which also proves the kernel
// numbering of segments.ts agrees with the switch in matmul_segments.as.ts), with segments of different kernels,
// shapes and row counts side by side and thread shares cutting across segment boundaries.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { WasmRuntime } from "../wasm/runtime.js";
import { randomBf16, randomF16, randomF32, randomKQuant, randomLegacyQuant, randomMxfp4, randomQ4_0, randomQ8_0 } from "../case.js";
import { widenedQ6_K } from "../formats/q6_k-bytes.js";
import { quantizeQ8_0 } from "../formats/q8_0.js";
import { quantizeQ8_1 } from "../formats/q8_1.js";
import { quantizeQ8_K } from "../formats/q8_k.js";
import { type MatmulSegment, SEGMENT_DESCRIPTOR_BYTES, SEGMENT_KERNELS, encodeSegments } from "./segments.js";

let runtime: WasmRuntime;
beforeAll(async () => { runtime = await WasmRuntime.create({ threads: 3 }); });
afterAll(async () => { await runtime.dispose(); });

const asBytes = (a: ArrayBufferView) => new Uint8Array(a.buffer, a.byteOffset, a.byteLength);

/** Random weights [n, k] of the kernel's type and `rows` input rows in its activation format. */
function operands(kernel: string, rows: number, k: number, n: number, seed: number): { w: Uint8Array; x: Uint8Array } {
  const type = kernel.slice("matmul_".length);
  const values = randomF32(rows * k, seed, 2);
  const blocks = (n * k) / 32;
  const superBlocks = (n * k) / 256;
  switch (type) {
    case "f32": return { w: asBytes(randomF32(n * k, seed + 1, 0.1)), x: asBytes(values) };
    case "f16": return { w: asBytes(randomF16(n * k, seed + 1, 0.1)), x: asBytes(values) };
    case "bf16": return { w: asBytes(randomBf16(n * k, seed + 1, 0.1)), x: asBytes(values) };
    case "q8_0": return { w: randomQ8_0(blocks, seed + 1), x: quantizeQ8_0(values) };
    case "q4_0": return { w: randomQ4_0(blocks, seed + 1), x: quantizeQ8_0(values) };
    case "q5_0": return { w: randomLegacyQuant("q5_0", blocks, seed + 1), x: quantizeQ8_0(values) };
    case "q4_1": case "q5_1": return { w: randomLegacyQuant(type, blocks, seed + 1), x: quantizeQ8_1(values) };
    case "q4_k": case "q5_k": case "q6_k": return { w: randomKQuant(type, superBlocks, seed + 1), x: quantizeQ8_K(values) };
    case "q6_k_bytes": return { w: widenedQ6_K(randomKQuant("q6_k", superBlocks, seed + 1)), x: quantizeQ8_K(values) };
    case "mxfp4": return { w: randomMxfp4(blocks, seed + 1), x: quantizeQ8_0(values) };
    default: throw new Error(`no operands for ${kernel}`);
  }
}

describe("matmul_segments", () => {
  it("gives every segment, of every kernel, what its kernel gives alone (plus its bias), bit for bit", () => {
    const mark = runtime.mark();
    try {
      // Odd row counts and widths, two block counts: shares of the 3 threads start and end inside segments.
      const segments: MatmulSegment[] = SEGMENT_KERNELS.flatMap((kernel, index) => [[1, 512, 37], [5, 256, 70]].map(([rows, k, n], j) => {
        const { w, x } = operands(kernel, rows!, k!, n!, 10 * index + j);
        // Every other segment has a bias.
        const bias = j === 1 ? runtime.upload(randomF32(n!, 100 + index)) : undefined;
        return { kernel, x: runtime.upload(x), w: runtime.upload(w), y: runtime.alloc(rows! * n! * 4), rows: rows!, k: k!, n: n!, bias };
      }));
      const descriptors = runtime.alloc(segments.length * SEGMENT_DESCRIPTOR_BYTES);
      const total = encodeSegments(segments, runtime.i32(descriptors, (segments.length * SEGMENT_DESCRIPTOR_BYTES) / 4));
      expect(total).toBe(segments.reduce((sum, s) => sum + s.n, 0));
      runtime.parallel("matmul_segments", [descriptors, segments.length], total);
      for (const segment of segments) {
        const alone = runtime.alloc(segment.rows * segment.n * 4);
        runtime.parallel(segment.kernel, [segment.x, segment.w, alone, segment.rows, segment.k, segment.n], segment.n);
        if (segment.bias !== undefined) {
          const y = runtime.f32(alone, segment.rows * segment.n);
          const bias = runtime.f32(segment.bias, segment.n);
          for (let i = 0; i < y.length; i++) y[i] = Math.fround(y[i]! + bias[i % segment.n]!);
        }
        const outputs = runtime.f32(segment.y, segment.rows * segment.n);
        expect(outputs.every(Number.isFinite), segment.kernel).toBe(true);
        expect(Buffer.from(runtime.u8(segment.y, segment.rows * segment.n * 4)).equals(Buffer.from(runtime.u8(alone, segment.rows * segment.n * 4))), `${segment.kernel} rows=${segment.rows}`).toBe(true);
      }
    } finally {
      runtime.release(mark);
    }
  });

  it("refuses a kernel it cannot run, naming it", () => {
    expect(() => encodeSegments([{ kernel: "matmul_q8_0x4", x: 0, w: 0, y: 0, rows: 1, k: 32, n: 4 }], new Int32Array(9))).toThrow("matmul_segments cannot run matmul_q8_0x4");
  });
});
