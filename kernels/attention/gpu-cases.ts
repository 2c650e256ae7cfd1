// WebGPU cases for paged attention and the KV append: batches of chunks from several sequences in one dispatch
// (decode rows deep in a sequence, prefill chunks of causal rows, a shared prefix), grouped-query heads, tiny and
// model head dims, block tables in scrambled order, and sequences longer than one key tile.
import { randomF32 } from "../case.js";
import type { GpuKernelCase } from "../gpu-case.js";
import { grid } from "../../engine/backends/webgpu/shaders.js";
import { ropeRotations } from "../../engine/backends/webgpu/layouts.js";
import { ropeShiftRef } from "../rope_shift/rope_shift.ref.js";
import { type ChunkRef, attentionChunksRef, kvCopyRef, kvStoreRef } from "./attention.ref.js";

interface Batch {
  heads: number;
  kvHeads: number;
  headDim: number;
  blockSize: number;
  /** [rows, start] per sequence chunk. */
  chunks: Array<[rows: number, start: number]>;
  /** The second chunk's table starts with the first chunk's blocks. */
  sharedPrefix?: boolean;
}

/** Scrambled block tables over one pool, flattened, with each row's table offset and position. */
function layout(b: Batch) {
  const blocksOf = ([rows, start]: [number, number]) => Math.ceil((start + rows) / b.blockSize);
  const totalBlocks = b.chunks.reduce((sum, chunk) => sum + blocksOf(chunk), 0);
  const numBlocks = (totalBlocks + 3) % 7 === 0 ? totalBlocks + 4 : totalBlocks + 3;
  let next = 0;
  const tables = b.chunks.map((chunk) => Int32Array.from({ length: blocksOf(chunk) }, () => (next++ * 7 + 2) % numBlocks));
  if (b.sharedPrefix && tables.length > 1) tables[1].set(tables[0].subarray(0, Math.max(0, Math.min(tables[0].length, tables[1].length) - 1)));
  const flat = new Int32Array(tables.reduce((sum, table) => sum + table.length, 0));
  const rowTables: number[] = [];
  const positions: number[] = [];
  const chunks: ChunkRef[] = [];
  let offset = 0;
  b.chunks.forEach(([rows, start], i) => {
    flat.set(tables[i], offset);
    chunks.push({ firstRow: positions.length, rows, blockTable: tables[i], positions: Int32Array.from({ length: rows }, (_, t) => start + t) });
    for (let t = 0; t < rows; t++) {
      rowTables.push(offset);
      positions.push(start + t);
    }
    offset += tables[i].length;
  });
  return { numBlocks, flat, rowTables: Uint32Array.from(rowTables), positions: Int32Array.from(positions), chunks, rows: positions.length };
}

function describe(b: Batch): string {
  return `chunks=${b.chunks.map(([rows, start]) => `${rows}@${start}`).join(",")} heads=${b.heads}/${b.kvHeads} headDim=${b.headDim} blockSize=${b.blockSize}${b.sharedPrefix ? " sharedPrefix" : ""}`;
}

function attentionCase(b: Batch): GpuKernelCase {
  return {
    name: `attention ${describe(b)}`,
    tolerance: 1e-11, // f32 online softmax against the reference's f64 two-pass softmax
    build() {
      const l = layout(b);
      const poolFloats = l.numBlocks * b.blockSize * b.kvHeads * b.headDim;
      const seed = b.headDim + b.chunks.length;
      const kCache = randomF32(poolFloats, seed, 2);
      const vCache = randomF32(poolFloats, seed + 7, 2);
      const q = randomF32(l.rows * b.heads * b.headDim, l.rows + 3, 2);
      const scale = 1 / Math.sqrt(b.headDim);
      return {
        shader: { op: "attention" },
        bindings: [
          { name: "q", contents: q }, { name: "kCache", contents: kCache }, { name: "vCache", contents: vCache },
          { name: "rowTables", contents: l.rowTables }, { name: "blockTables", contents: l.flat }, { name: "positions", contents: l.positions },
          { name: "out", contents: { bytes: q.byteLength } },
        ],
        params: [["u32", b.heads], ["u32", b.kvHeads], ["u32", b.headDim], ["u32", b.blockSize], ["f32", scale]],
        workgroups: [b.heads, l.rows],
        expected: { out: attentionChunksRef(q, kCache, vCache, l.chunks, scale, b, l.rows) },
      };
    },
  };
}

function kvStoreCase(b: Batch): GpuKernelCase {
  return {
    name: `kv_store ${describe(b)}`,
    tolerance: 0,
    build() {
      const l = layout(b);
      const kvDim = b.kvHeads * b.headDim;
      const poolFloats = l.numBlocks * b.blockSize * kvDim;
      const k = randomF32(l.rows * kvDim, 5, 2);
      const v = randomF32(l.rows * kvDim, 6, 2);
      const kCache = randomF32(poolFloats, 7, 2);
      const vCache = randomF32(poolFloats, 8, 2);
      const kExpected = Float32Array.from(kCache);
      const vExpected = Float32Array.from(vCache);
      for (const chunk of l.chunks) {
        const rows = k.subarray(chunk.firstRow * kvDim, (chunk.firstRow + chunk.rows) * kvDim);
        const values = v.subarray(chunk.firstRow * kvDim, (chunk.firstRow + chunk.rows) * kvDim);
        kvStoreRef(rows, values, kExpected, vExpected, chunk.blockTable, chunk.positions, { ...b, rows: chunk.rows });
      }
      return {
        shader: { op: "attention", file: "kv_store" },
        bindings: [
          { name: "k", contents: k }, { name: "v", contents: v }, { name: "kCache", contents: kCache }, { name: "vCache", contents: vCache },
          { name: "rowTables", contents: l.rowTables }, { name: "blockTables", contents: l.flat }, { name: "positions", contents: l.positions },
        ],
        params: [["u32", l.rows], ["u32", kvDim], ["u32", b.blockSize]],
        workgroups: grid(l.rows * kvDim, 256),
        expected: { kCache: kExpected, vCache: vExpected },
      };
    },
  };
}

const batches: Batch[] = [
  { heads: 1, kvHeads: 1, headDim: 8, blockSize: 4, chunks: [[1, 0]] },
  { heads: 8, kvHeads: 4, headDim: 8, blockSize: 16, chunks: [[5, 0]] },
  { heads: 4, kvHeads: 2, headDim: 13, blockSize: 4, chunks: [[1, 37], [6, 0], [1, 9]] },
  { heads: 9, kvHeads: 3, headDim: 64, blockSize: 16, chunks: [[1, 200], [1, 64], [3, 61]], sharedPrefix: true },
  { heads: 16, kvHeads: 8, headDim: 128, blockSize: 16, chunks: [[1, 300], [16, 40]] },
  { heads: 32, kvHeads: 8, headDim: 64, blockSize: 16, chunks: [[33, 0], [1, 1000]] },
];

interface Relocation {
  kvHeads: number;
  headDim: number;
  rotaryDim: number;
  blockSize: number;
  sourceStart: number;
  targetStart: number;
  count: number;
  withFactors?: boolean;
}

function kvCopyCase(c: Relocation): GpuKernelCase {
  const delta = c.targetStart - c.sourceStart;
  return {
    name: `kv_copy kvHeads=${c.kvHeads} headDim=${c.headDim} rotaryDim=${c.rotaryDim} blockSize=${c.blockSize} ${c.count}@${c.sourceStart} -> @${c.targetStart}${c.withFactors ? " freqFactors" : ""}`,
    tolerance: 1e-13, // the reference's own rotations; only a fused multiply-add may round differently
    build() {
      const blocksOf = (start: number) => Math.ceil((start + c.count) / c.blockSize);
      const sourceBlocks = blocksOf(c.sourceStart);
      const targetBlocks = blocksOf(c.targetStart);
      const numBlocks = sourceBlocks + targetBlocks + 2;
      // Disjoint tables in scrambled order: sources on even blocks, targets on odd ones.
      const sourceTable = Int32Array.from({ length: sourceBlocks }, (_, b) => (2 * (sourceBlocks - 1 - b)) % numBlocks);
      const targetTable = Int32Array.from({ length: targetBlocks }, (_, b) => (2 * b + 1) % numBlocks);
      const kvDim = c.kvHeads * c.headDim;
      const kCache = randomF32(numBlocks * c.blockSize * kvDim, 11, 2);
      const vCache = randomF32(numBlocks * c.blockSize * kvDim, 12, 2);
      const kExpected = Float32Array.from(kCache);
      const vExpected = Float32Array.from(vCache);
      kvCopyRef(new Uint8Array(kExpected.buffer), new Uint8Array(vExpected.buffer), sourceTable, c.sourceStart, targetTable, c.targetStart, c.count, kvDim * 4, c.blockSize);
      const factors = c.withFactors ? Float32Array.from({ length: c.rotaryDim / 2 }, (_, i) => 1 + (i % 3) * 2.5) : undefined;
      const thetaScale = Math.fround(Math.pow(10000, -2 / c.rotaryDim));
      if (delta !== 0) ropeShiftRef(kExpected, targetTable, c.targetStart, c.count, c.kvHeads, c.headDim, c.rotaryDim, c.blockSize, delta, factors, thetaScale);
      return {
        shader: { op: "attention", file: "kv_copy" },
        bindings: [
          { name: "kCache", contents: kCache }, { name: "vCache", contents: vCache }, { name: "sourceTable", contents: sourceTable },
          { name: "targetTable", contents: targetTable }, { name: "rotations", contents: ropeRotations(Math.abs(delta) + 1, c.rotaryDim, thetaScale, factors) },
        ],
        params: [
          ["u32", c.count], ["u32", c.kvHeads], ["u32", c.headDim], ["u32", c.rotaryDim], ["u32", c.blockSize],
          ["u32", c.sourceStart], ["u32", c.targetStart], ["i32", delta],
        ],
        workgroups: grid(c.count * kvDim, 256),
        expected: { kCache: kExpected, vCache: vExpected },
      };
    },
  };
}

const relocations: Relocation[] = [
  { kvHeads: 1, headDim: 8, rotaryDim: 8, blockSize: 4, sourceStart: 5, targetStart: 5, count: 6 },
  { kvHeads: 2, headDim: 16, rotaryDim: 12, blockSize: 4, sourceStart: 20, targetStart: 7, count: 9 },
  { kvHeads: 8, headDim: 64, rotaryDim: 64, blockSize: 16, sourceStart: 300, targetStart: 37, count: 70, withFactors: true },
  { kvHeads: 4, headDim: 128, rotaryDim: 128, blockSize: 16, sourceStart: 16, targetStart: 48, count: 33 },
];

export const cases: GpuKernelCase[] = [...batches.map(attentionCase), ...batches.map(kvStoreCase), ...relocations.map(kvCopyCase)];
