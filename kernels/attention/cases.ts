// Conformance cases for paged attention and kv_store: decode (one row deep in the sequence), prefill chunks
// (causal rows), grouped-query heads, odd and tiny head dims, block tables in scrambled order.
import { type KernelCase, randomF32 } from "../case.js";
import { type AttentionShape, attentionRef, kvStoreRef } from "./attention.ref.js";

interface Scenario extends AttentionShape {
  /** Position of the first row; rows take consecutive positions. */
  start: number;
}

/** A scrambled block table covering every position the scenario touches, and the pool size it needs. */
function blockTable(s: Scenario): { table: Int32Array; numBlocks: number } {
  const blocks = Math.ceil((s.start + s.rows) / s.blockSize);
  // Spare blocks, and a count coprime with 7 so that b -> (7b + 2) mod numBlocks never repeats a block.
  const numBlocks = (blocks + 3) % 7 === 0 ? blocks + 4 : blocks + 3;
  const table = Int32Array.from({ length: blocks }, (_, b) => (b * 7 + 2) % numBlocks);
  return { table, numBlocks };
}

function describe(s: Scenario): string {
  return `rows=${s.rows} start=${s.start} heads=${s.heads}/${s.kvHeads} headDim=${s.headDim} blockSize=${s.blockSize}`;
}

function attentionCase(s: Scenario): KernelCase {
  return {
    name: `attention ${describe(s)}`,
    tolerance: 1e-11,
    build() {
      const { table, numBlocks } = blockTable(s);
      const poolFloats = numBlocks * s.blockSize * s.kvHeads * s.headDim;
      const kCache = randomF32(poolFloats, s.headDim + 1, 2);
      const vCache = randomF32(poolFloats, s.headDim + 2, 2);
      const q = randomF32(s.rows * s.heads * s.headDim, s.rows + 3, 2);
      const positions = Int32Array.from({ length: s.rows }, (_, t) => s.start + t);
      const scratchStride = s.start + s.rows + 5;
      const scale = 1 / Math.sqrt(s.headDim);
      return {
        kernel: "attention",
        buffers: { q, kCache, vCache, table, positions, out: { bytes: q.byteLength }, scratch: { bytes: s.heads * scratchStride * 4 } },
        args: ["q", "kCache", "vCache", "table", "positions", "out", "scratch", s.rows, s.heads, s.kvHeads, s.headDim, s.blockSize, scale, scratchStride],
        count: s.heads,
        expected: { out: attentionRef(q, kCache, vCache, table, positions, scale, s) },
      };
    },
  };
}

function kvStoreCase(s: Scenario): KernelCase {
  return {
    name: `kv_store ${describe(s)}`,
    tolerance: 0,
    build() {
      const { table, numBlocks } = blockTable(s);
      const kvDim = s.kvHeads * s.headDim;
      const kCache = randomF32(numBlocks * s.blockSize * kvDim, 1);
      const vCache = randomF32(numBlocks * s.blockSize * kvDim, 2);
      const k = randomF32(s.rows * kvDim, 3);
      const v = randomF32(s.rows * kvDim, 4);
      const positions = Int32Array.from({ length: s.rows }, (_, t) => s.start + t);
      const kExpected = Float32Array.from(kCache);
      const vExpected = Float32Array.from(vCache);
      kvStoreRef(k, v, kExpected, vExpected, table, positions, s);
      return {
        kernel: "kv_store",
        buffers: { k, v, kCache, vCache, table, positions },
        args: ["k", "v", "kCache", "vCache", "table", "positions", s.rows, kvDim, s.blockSize],
        expected: { kCache: kExpected, vCache: vExpected },
      };
    },
  };
}

const scenarios: Scenario[] = [
  { rows: 1, start: 0, heads: 1, kvHeads: 1, headDim: 8, blockSize: 4 },
  { rows: 3, start: 0, heads: 8, kvHeads: 4, headDim: 8, blockSize: 16 },
  { rows: 1, start: 37, heads: 4, kvHeads: 2, headDim: 13, blockSize: 16 },
  { rows: 5, start: 20, heads: 6, kvHeads: 2, headDim: 20, blockSize: 8 },
  { rows: 1, start: 300, heads: 16, kvHeads: 8, headDim: 128, blockSize: 16 },
  { rows: 17, start: 0, heads: 16, kvHeads: 8, headDim: 64, blockSize: 16 },
  { rows: 4, start: 100, heads: 14, kvHeads: 2, headDim: 64, blockSize: 32 },
];

export const cases: KernelCase[] = [...scenarios.map(attentionCase), ...scenarios.map(kvStoreCase)];
