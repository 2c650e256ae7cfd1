// Conformance cases for paged attention (one chunk; many chunks in one dispatch, f32 and f16 caches), kv_store,
// kv_store_f16 and kv_copy: decode (one row deep in the sequence), prefill chunks (causal rows), grouped-query
// heads, odd and tiny head dims, block tables in scrambled order, every f32 -> f16 rounding edge.
import { f16ToF32, f32ToF16 } from "../formats/f16.js";
import { type KernelCase, random, randomF32 } from "../case.js";
import { type AttentionShape, type ChunkRef, attentionChunksRef, attentionRef, f16CacheToF32, kvCopyRef, kvStoreF16Ref, kvStoreRef } from "./attention.ref.js";

interface Scenario extends Omit<AttentionShape, "sinks"> {
  /** Position of the first row; rows take consecutive positions. */
  start: number;
  /** Attention sinks, one random logit per head (one of them large enough to take most of the weight). */
  withSinks?: boolean;
}

/** Per-head sink logits: mostly near the scores' range, head 1 far above it. */
function sinkLogits(heads: number, seed: number): Float32Array {
  const sinks = randomF32(heads, seed, 3);
  if (heads > 1) sinks[1] = 40;
  return sinks;
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
  return `rows=${s.rows} start=${s.start} heads=${s.heads}/${s.kvHeads} headDim=${s.headDim} blockSize=${s.blockSize}${s.window ? ` window=${s.window}` : ""}${s.withSinks ? " sinks" : ""}`;
}

/**
 * n halves of floats uniform in [-scale, scale), with +-0 and subnormal halves sprinkled in (no infinities: the
 * attention kernels read halves with the fast conversion, exact for finite values only).
 */
function randomCacheF16(n: number, seed: number, scale: number): Uint16Array {
  const next = random(seed);
  const values = randomF32(n, seed + 1, scale);
  const extra = [0x0000, 0x8000, 0x0001, 0x8001, 0x03ff, 0x83ff, 0x0200];
  return Uint16Array.from(values, (value) => (next() < 0.01 ? extra[Math.floor(next() * extra.length)] : f32ToF16(value)));
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
      const sinks = s.withSinks ? sinkLogits(s.heads, s.rows + 9) : undefined;
      return {
        kernel: "attention",
        buffers: { q, kCache, vCache, table, positions, out: { bytes: q.byteLength }, scratch: { bytes: s.heads * scratchStride * 4 }, ...(sinks ? { sinks } : {}) },
        args: ["q", "kCache", "vCache", "table", "positions", "out", "scratch", s.rows, s.heads, s.kvHeads, s.headDim, s.blockSize, scale, scratchStride, s.window ?? 0, sinks ? "sinks" : 0],
        count: s.heads,
        expected: { out: attentionRef(q, kCache, vCache, table, positions, scale, { ...s, sinks }) },
      };
    },
  };
}

/** A batch for attention_chunks: chunks of [rows, start] (in q row order unless `reversed`) over one block pool. */
interface Batch {
  heads: number;
  kvHeads: number;
  headDim: number;
  blockSize: number;
  chunks: Array<[rows: number, start: number]>;
  /** Chunk i's rows sit after chunk i+1's in q/out (descriptors need not follow row order). */
  reversed?: boolean;
  /** The second chunk's table starts with the first chunk's blocks (a shared prefix, as prefix caching has). */
  sharedPrefix?: boolean;
  /** Split grain (default 1; heads / kvHeads is what the runner uses). */
  grain?: number;
  /** Sliding window (0 or absent: none). */
  window?: number;
  /** Attention sinks (see Scenario). */
  withSinks?: boolean;
  /** Rows [offset, offset + length) of chunk 0 are an image's: each sees the keys up to the image's end. */
  image?: [offset: number, length: number];
}

function describeBatch(b: Batch): string {
  const chunks = b.chunks.map(([rows, start]) => `${rows}@${start}`).join(",");
  return `chunks=${chunks} heads=${b.heads}/${b.kvHeads} headDim=${b.headDim} blockSize=${b.blockSize}${b.window ? ` window=${b.window}` : ""}${b.withSinks ? " sinks" : ""}${b.reversed ? " reversed" : ""}${b.sharedPrefix ? " sharedPrefix" : ""}${b.image ? ` image=${b.image.join("+")}` : ""} grain=${b.grain ?? 1}`;
}

function attentionChunksCase(b: Batch, f16: boolean): KernelCase {
  const kernel = f16 ? "attention_chunks_f16" : "attention_chunks";
  return {
    name: `${kernel} ${describeBatch(b)}`,
    // The reference reads the same (widened) halves, so f16 is held to the f32 kernel's tolerance.
    tolerance: 1e-11,
    build() {
      const blocksOf = ([rows, start]: [number, number]) => Math.ceil((start + rows) / b.blockSize);
      const totalBlocks = b.chunks.reduce((sum, chunk) => sum + blocksOf(chunk), 0);
      const numBlocks = (totalBlocks + 3) % 7 === 0 ? totalBlocks + 4 : totalBlocks + 3;
      // Physical blocks handed out in a scrambled order (b -> (7b + 2) mod numBlocks is a permutation).
      let nextBlock = 0;
      const tables = b.chunks.map((chunk) => Int32Array.from({ length: blocksOf(chunk) }, () => (nextBlock++ * 7 + 2) % numBlocks));
      if (b.sharedPrefix && tables.length > 1) {
        const shared = Math.min(tables[0].length, tables[1].length) - 1;
        tables[1].set(tables[0].subarray(0, Math.max(shared, 0)));
      }
      const rowCounts = b.chunks.map(([rows]) => rows);
      const totalRows = rowCounts.reduce((sum, rows) => sum + rows, 0);
      // First q/out row of each chunk, in order or reversed.
      const order = b.chunks.map((_, i) => i);
      if (b.reversed) order.reverse();
      const firstRows = new Array<number>(b.chunks.length);
      let row = 0;
      for (const i of order) {
        firstRows[i] = row;
        row += rowCounts[i];
      }
      const chunkRefs: ChunkRef[] = b.chunks.map(([rows, start], i) => ({
        firstRow: firstRows[i], rows, blockTable: tables[i], positions: Int32Array.from({ length: rows }, (_, t) => start + t),
      }));
      const image = b.image;
      if (image) {
        const [rows, start] = b.chunks[0];
        chunkRefs[0].keyEnds = Int32Array.from({ length: rows }, (_, t) => (t >= image[0] && t < image[0] + image[1] ? start + image[0] + image[1] : start + t + 1));
      }
      // Every chunk's table and positions in two flat buffers; descriptors point into them once placed.
      const tableOffsets = tables.map((_, i) => tables.slice(0, i).reduce((sum, t) => sum + t.length, 0));
      const positionOffsets = chunkRefs.map((_, i) => rowCounts.slice(0, i).reduce((sum, rows) => sum + rows, 0));
      const tableData = new Int32Array(tables.reduce((sum, t) => sum + t.length, 0));
      tables.forEach((t, i) => tableData.set(t, tableOffsets[i]));
      const positionData = new Int32Array(totalRows);
      chunkRefs.forEach((c, i) => positionData.set(c.positions, positionOffsets[i]));

      const poolElements = numBlocks * b.blockSize * b.kvHeads * b.headDim;
      const seed = b.headDim + b.chunks.length;
      const kCache = f16 ? randomCacheF16(poolElements, seed, 2) : randomF32(poolElements, seed, 2);
      const vCache = f16 ? randomCacheF16(poolElements, seed + 7, 2) : randomF32(poolElements, seed + 7, 2);
      const q = randomF32(totalRows * b.heads * b.headDim, totalRows + 3, 2);
      const scratchStride = Math.max(...b.chunks.map(([rows, start]) => start + rows)) + 3;
      const scale = 1 / Math.sqrt(b.headDim);
      const sinks = b.withSinks ? sinkLogits(b.heads, totalRows + 11) : undefined;
      const shape = { heads: b.heads, kvHeads: b.kvHeads, headDim: b.headDim, blockSize: b.blockSize, window: b.window, sinks };
      const floats = (cache: Float32Array | Uint16Array) => (cache instanceof Uint16Array ? f16CacheToF32(cache) : cache);
      return {
        kernel,
        buffers: {
          descriptors: { bytes: b.chunks.length * 32 }, q, kCache, vCache, tables: tableData, positions: positionData,
          ...(chunkRefs[0].keyEnds ? { keyEnds: chunkRefs[0].keyEnds } : {}),
          out: { bytes: q.byteLength }, scratch: { bytes: b.chunks.length * b.heads * scratchStride * 4 }, ...(sinks ? { sinks } : {}),
        },
        link: (pointers) => ({
          descriptors: Int32Array.from(chunkRefs.flatMap((c, i) => [
            c.firstRow, c.rows, pointers.tables + tableOffsets[i] * 4, pointers.positions + positionOffsets[i] * 4, c.keyEnds ? pointers.keyEnds : 0, 0, 0, 0,
          ])),
        }),
        args: ["descriptors", "q", "kCache", "vCache", "out", "scratch", b.heads, b.kvHeads, b.headDim, b.blockSize, scale, scratchStride, b.window ?? 0, sinks ? "sinks" : 0],
        count: b.chunks.length * b.heads,
        grain: b.grain,
        expected: { out: attentionChunksRef(q, floats(kCache), floats(vCache), chunkRefs, scale, shape, totalRows) },
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

/**
 * Floats at every f32 -> f16 rounding edge: each finite half, the midpoints between neighbouring halves (ties) and
 * the floats just either side of them, both signs (65520 = the midpoint above the largest half overflows), plus
 * f32 specials (infinities, NaNs with payloads, f32 subnormals, the largest float) and random bit patterns.
 */
function f16EdgeValues(): Float32Array {
  const bits: number[] = [];
  const float = new Float32Array(1);
  const asBits = new Uint32Array(float.buffer);
  for (let h = 0; h < 0x7c00; h++) {
    float[0] = (f16ToF32(h) + (h === 0x7bff ? 65536 : f16ToF32(h + 1))) / 2; // exact: 12 significant bits
    const tie = asBits[0];
    float[0] = f16ToF32(h);
    for (const b of [asBits[0], tie - 1, tie, tie + 1]) bits.push(b, (b | 0x80000000) >>> 0);
  }
  bits.push(0x7f800000, 0xff800000, 0x7fc00000, 0xffc00000, 0x7f800001, 0xff812345, 0x7fbfffff, 0x00000001, 0x807fffff, 0x7f7fffff, 0xff7fffff, 0x33000000, 0x33000001, 0xb3000001, 0x32ffffff, 0x477ff000, 0x477fefff, 0x47800000);
  const next = random(99);
  for (let i = 0; i < 100_000; i++) bits.push(Math.floor(next() * 2 ** 32)); // arbitrary bit patterns
  return new Float32Array(Uint32Array.from(bits).buffer);
}

function kvStoreF16Case(s: Scenario, edges = false): KernelCase {
  return {
    name: `kv_store_f16 ${describe(s)}${edges ? " every rounding edge" : ""}`,
    tolerance: 0,
    build() {
      const { table, numBlocks } = blockTable(s);
      const kvDim = s.kvHeads * s.headDim;
      const kCache = randomCacheF16(numBlocks * s.blockSize * kvDim, 1, 2);
      const vCache = randomCacheF16(numBlocks * s.blockSize * kvDim, 2, 2);
      const k = randomF32(s.rows * kvDim, 3, edges ? 70000 : 2);
      const v = randomF32(s.rows * kvDim, 4, 1e-4); // subnormal halves
      if (edges) {
        const values = f16EdgeValues();
        if (values.length > 2 * k.length) throw new RangeError(`kv_store_f16 edges: ${values.length} values need more rows`);
        k.set(values.subarray(0, Math.min(values.length, k.length)));
        if (values.length > k.length) v.set(values.subarray(k.length));
      }
      const positions = Int32Array.from({ length: s.rows }, (_, t) => s.start + t);
      const kExpected = Uint16Array.from(kCache);
      const vExpected = Uint16Array.from(vCache);
      kvStoreF16Ref(k, v, kExpected, vExpected, table, positions, s);
      return {
        kernel: "kv_store_f16",
        buffers: { k, v, kCache, vCache, table, positions },
        args: ["k", "v", "kCache", "vCache", "table", "positions", s.rows, kvDim, s.blockSize],
        expected: { kCache: kExpected, vCache: vExpected },
      };
    },
  };
}

/** A kv_copy of `count` rows from srcStart to dstStart; `sameTable`: within one sequence, else to another one's. */
function kvCopyCase(count: number, srcStart: number, dstStart: number, sameTable: boolean, rowBytes: number, blockSize: number): KernelCase {
  return {
    name: `kv_copy count=${count} ${srcStart}->${dstStart} ${sameTable ? "same table" : "other table"} rowBytes=${rowBytes} blockSize=${blockSize}`,
    tolerance: 0,
    build() {
      const srcBlocks = Math.ceil((srcStart + count) / blockSize);
      const dstBlocks = Math.ceil((dstStart + count) / blockSize);
      const blocks = sameTable ? Math.max(srcBlocks, dstBlocks) : srcBlocks + dstBlocks;
      const numBlocks = (blocks + 2) % 5 === 0 ? blocks + 3 : blocks + 2;
      const scrambled = (b: number) => (b * 5 + 1) % numBlocks; // a permutation: numBlocks is coprime with 5
      const srcTable = Int32Array.from({ length: srcBlocks }, (_, b) => scrambled(b));
      const dstTable = sameTable ? Int32Array.from({ length: dstBlocks }, (_, b) => scrambled(b)) : Int32Array.from({ length: dstBlocks }, (_, b) => scrambled(srcBlocks + b));
      const next = random(count + srcStart + dstStart);
      const kCache = Uint8Array.from({ length: numBlocks * blockSize * rowBytes }, () => Math.floor(next() * 256));
      const vCache = Uint8Array.from({ length: numBlocks * blockSize * rowBytes }, () => Math.floor(next() * 256));
      const kExpected = Uint8Array.from(kCache);
      const vExpected = Uint8Array.from(vCache);
      kvCopyRef(kExpected, vExpected, srcTable, srcStart, dstTable, dstStart, count, rowBytes, blockSize);
      return {
        kernel: "kv_copy",
        buffers: { kCache, vCache, srcTable, dstTable },
        args: ["kCache", "vCache", "srcTable", srcStart, "dstTable", dstStart, rowBytes, blockSize],
        count,
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
  // Sliding windows: starting mid-block, at a block edge, one position, wider than the sequence, prefill rows.
  { rows: 1, start: 37, heads: 4, kvHeads: 2, headDim: 13, blockSize: 16, window: 7 },
  { rows: 1, start: 47, heads: 4, kvHeads: 2, headDim: 16, blockSize: 16, window: 16 },
  { rows: 3, start: 20, heads: 2, kvHeads: 1, headDim: 8, blockSize: 4, window: 1 },
  { rows: 5, start: 2, heads: 6, kvHeads: 2, headDim: 20, blockSize: 8, window: 512 },
  { rows: 17, start: 30, heads: 8, kvHeads: 4, headDim: 64, blockSize: 16, window: 9 },
  // Attention sinks (gpt-oss): alone, with a window, at position 0 (the sink against one score).
  { rows: 1, start: 0, heads: 4, kvHeads: 1, headDim: 64, blockSize: 16, withSinks: true },
  { rows: 6, start: 40, heads: 8, kvHeads: 2, headDim: 64, blockSize: 16, withSinks: true },
  { rows: 3, start: 150, heads: 4, kvHeads: 2, headDim: 64, blockSize: 16, window: 128, withSinks: true },
];

const batches: Batch[] = [
  { heads: 1, kvHeads: 1, headDim: 8, blockSize: 4, chunks: [[1, 0]] },
  { heads: 4, kvHeads: 2, headDim: 8, blockSize: 4, chunks: [[1, 0], [3, 5], [1, 17]] },
  { heads: 6, kvHeads: 6, headDim: 13, blockSize: 16, chunks: [[2, 30], [1, 3], [5, 0]], reversed: true },
  { heads: 14, kvHeads: 2, headDim: 20, blockSize: 8, chunks: [[1, 40], [6, 9], [1, 0], [1, 63]], grain: 7 },
  { heads: 8, kvHeads: 2, headDim: 64, blockSize: 16, chunks: [[1, 70], [4, 40], [1, 33], [1, 5]], sharedPrefix: true },
  {
    heads: 16, kvHeads: 8, headDim: 128, blockSize: 16, grain: 2,
    chunks: [[1, 300], [1, 17], [7, 40], [1, 0], [1, 129], [1, 64], [1, 2], [1, 250], [1, 99]],
  },
  { heads: 8, kvHeads: 2, headDim: 64, blockSize: 16, chunks: [[1, 70], [4, 40], [1, 3], [9, 0]], sharedPrefix: true, grain: 4, window: 10 },
  { heads: 8, kvHeads: 2, headDim: 64, blockSize: 16, chunks: [[1, 70], [4, 40], [1, 0], [9, 130]], grain: 4, window: 128, withSinks: true },
  // An image's rows inside a chunk see each other (bidirectional), alone and under a window shorter than the image.
  { heads: 4, kvHeads: 2, headDim: 16, blockSize: 8, chunks: [[24, 5], [1, 40]], image: [3, 16] },
  { heads: 4, kvHeads: 2, headDim: 16, blockSize: 8, chunks: [[24, 5], [2, 9]], image: [2, 20], window: 8 },
];

export const cases: KernelCase[] = [
  ...scenarios.map(attentionCase),
  ...batches.flatMap((b) => [attentionChunksCase(b, false), attentionChunksCase(b, true)]),
  ...scenarios.filter((s) => !s.window && !s.withSinks).map(kvStoreCase),
  ...scenarios.filter((s) => !s.window && !s.withSinks).map((s) => kvStoreF16Case(s)),
  kvStoreF16Case({ rows: 500, start: 3, heads: 8, kvHeads: 2, headDim: 256, blockSize: 16 }, true),
  kvCopyCase(1, 9, 2, true, 32, 4),
  kvCopyCase(15, 40, 20, true, 2 * 64 * 4, 16),
  kvCopyCase(15, 20, 40, true, 2 * 64 * 2, 16),
  kvCopyCase(33, 0, 70, true, 2 * 13 * 2, 16),
  kvCopyCase(40, 17, 3, false, 8 * 128 * 2, 16),
  kvCopyCase(7, 0, 0, false, 4 * 4, 4),
];
