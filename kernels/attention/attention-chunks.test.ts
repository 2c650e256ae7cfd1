// Batch invariance of attention_chunks: every chunk's output must be bit for bit what the per-chunk attention
// kernel gives for that chunk alone, whatever the other chunks in the dispatch and however the range is split;
// and an f16 cache must give bit for bit what an f32 cache holding the same (widened) values gives.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { WasmRuntime } from "../wasm/runtime.js";
import { f32ToF16 } from "../formats/f16.js";
import { randomF32 } from "../case.js";
import { f16CacheToF32 } from "./attention.ref.js";

let runtime: WasmRuntime;
beforeAll(async () => { runtime = await WasmRuntime.create({ threads: 2 }); });
afterAll(async () => { await runtime.dispose(); });

const heads = 8, kvHeads = 2, headDim = 72, blockSize = 16;
const tokenFloats = heads * headDim;
const scale = 1 / Math.sqrt(headDim);
/** [rows, start] of each chunk: decode rows deep in their sequences, and prefill chunks. */
const chunks: Array<[number, number]> = [[1, 130], [9, 0], [1, 3], [1, 77], [5, 40], [1, 0], [1, 255], [12, 16], [1, 31]];
const totalRows = chunks.reduce((sum, [rows]) => sum + rows, 0);
const firstRows = chunks.map((_, i) => chunks.slice(0, i).reduce((sum, [rows]) => sum + rows, 0));
const scratchStride = Math.max(...chunks.map(([rows, start]) => start + rows));
const blocksPerChunk = chunks.map(([rows, start]) => Math.ceil((start + rows) / blockSize));
const numBlocks = blocksPerChunk.reduce((a, b) => a + b, 0) + 5;

/** Distinct physical blocks per chunk, handed out in reverse order. */
function tables(): Int32Array[] {
  let next = numBlocks - 1;
  return blocksPerChunk.map((count) => Int32Array.from({ length: count }, () => next--));
}

interface Placed {
  q: number; kCache: number; vCache: number; tables: number[]; positions: number[]; descriptors: number;
}

function place(kCache: Float32Array | Uint16Array, vCache: Float32Array | Uint16Array): Placed {
  const q = runtime.upload(randomF32(totalRows * tokenFloats, 11, 2));
  const tablePointers = tables().map((t) => runtime.upload(t));
  const positionPointers = chunks.map(([rows, start]) => runtime.upload(Int32Array.from({ length: rows }, (_, t) => start + t)));
  const descriptors = runtime.upload(Int32Array.from(chunks.flatMap(([rows], i) => [firstRows[i], rows, tablePointers[i], positionPointers[i], 0, 0, 0, 0])));
  return { q, kCache: runtime.upload(kCache), vCache: runtime.upload(vCache), tables: tablePointers, positions: positionPointers, descriptors };
}

/** attention_chunks(_f16) over every chunk at once, split as `split` says; returns a copy of out. */
function batched(kernel: string, p: Placed, split: "parallel" | "grain" | "uneven"): Uint8Array {
  const out = runtime.alloc(totalRows * tokenFloats * 4);
  const scratch = runtime.alloc(chunks.length * heads * scratchStride * 4);
  const args = [p.descriptors, p.q, p.kCache, p.vCache, out, scratch, heads, kvHeads, headDim, blockSize, scale, scratchStride, 0, 0];
  const count = chunks.length * heads;
  if (split === "uneven") for (const [i0, i1] of [[0, 5], [5, 6], [6, 41], [41, count]]) runtime.call(kernel, ...args, i0, i1);
  else runtime.parallel(kernel, args, count, split === "grain" ? heads / kvHeads : 1);
  return runtime.u8(out, totalRows * tokenFloats * 4).slice();
}

/** Each chunk on its own: attention per chunk, or attention_chunks(_f16) with a one-chunk descriptor. */
function alone(kernel: "attention" | "attention_chunks_f16", p: Placed): Uint8Array {
  const out = runtime.alloc(totalRows * tokenFloats * 4);
  chunks.forEach(([rows], i) => {
    const scratch = runtime.alloc(heads * scratchStride * 4);
    const q = p.q + firstRows[i] * tokenFloats * 4;
    const o = out + firstRows[i] * tokenFloats * 4;
    if (kernel === "attention") {
      runtime.parallel(kernel, [q, p.kCache, p.vCache, p.tables[i], p.positions[i], o, scratch, rows, heads, kvHeads, headDim, blockSize, scale, scratchStride, 0, 0], heads);
    } else {
      const descriptor = runtime.upload(Int32Array.of(0, rows, p.tables[i], p.positions[i], 0, 0, 0, 0));
      runtime.parallel(kernel, [descriptor, q, p.kCache, p.vCache, o, scratch, heads, kvHeads, headDim, blockSize, scale, scratchStride, 0, 0], heads);
    }
  });
  return runtime.u8(out, totalRows * tokenFloats * 4).slice();
}

function firstDifference(a: Uint8Array, b: Uint8Array): number {
  return a.findIndex((byte, i) => byte !== b[i]);
}

describe("attention_chunks batch invariance", () => {
  const elements = numBlocks * blockSize * kvHeads * headDim;

  it("f32: every chunk equals attention on that chunk alone, bit for bit, for every split", () => {
    const mark = runtime.mark();
    try {
      const p = place(randomF32(elements, 1, 2), randomF32(elements, 2, 2));
      const reference = alone("attention", p);
      expect(new Float32Array(reference.buffer).every(Number.isFinite)).toBe(true);
      for (const split of ["parallel", "grain", "uneven"] as const) expect(firstDifference(batched("attention_chunks", p, split), reference), split).toBe(-1);
    } finally {
      runtime.release(mark);
    }
  });

  it("f16: batched equals one chunk at a time, and equals f32 attention over the widened cache, bit for bit", () => {
    const mark = runtime.mark();
    try {
      const k = Uint16Array.from(randomF32(elements, 3, 2), f32ToF16);
      const v = Uint16Array.from(randomF32(elements, 4, 2), f32ToF16);
      const p = place(k, v);
      const reference = alone("attention_chunks_f16", p);
      for (const split of ["parallel", "grain", "uneven"] as const) expect(firstDifference(batched("attention_chunks_f16", p, split), reference), split).toBe(-1);
      const widened = place(f16CacheToF32(k), f16CacheToF32(v)); // same q (same seed)
      expect(firstDifference(batched("attention_chunks", widened, "parallel"), reference)).toBe(-1);
    } finally {
      runtime.release(mark);
    }
  });
});
