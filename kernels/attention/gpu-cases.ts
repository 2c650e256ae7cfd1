// WebGPU cases for paged attention and the KV append: batches of chunks from several sequences in one dispatch
// (decode rows deep in a sequence, prefill chunks of causal rows, a shared prefix), grouped-query heads, tiny and
// model head dims, block tables in scrambled order, and sequences longer than one key tile; each with an f32 and an
// IEEE-half cache (KV_TYPE 1: two values per word, rounded to nearest even as the CPU backend's f16 cache).
import { f32ToF16 } from "../formats/f16.js";
import { randomF16, randomF32 } from "../case.js";
import type { GpuKernelCase } from "../gpu-case.js";
import { grid } from "../webgpu/shaders.js";
import { ropeRotations } from "../webgpu/layouts.js";
import { ropeShiftRef } from "../rope_shift/rope_shift.ref.js";
import { ropeShiftF16Ref } from "../rope_shift/rope_shift.ref.js";
import { type ChunkRef, attentionChunksRef, f16CacheToF32, kvCopyRef, kvStoreF16Ref, kvStoreRef } from "./attention.ref.js";

type KvType = "f32" | "f16";
const KV_TYPE: Record<KvType, number> = { f32: 0, f16: 1 };

interface Batch {
  heads: number;
  kvHeads: number;
  headDim: number;
  blockSize: number;
  /** [rows, start] per sequence chunk. */
  chunks: Array<[rows: number, start: number]>;
  /** The second chunk's table starts with the first chunk's blocks. */
  sharedPrefix?: boolean;
  /** Sliding window (0 or absent: none). */
  window?: number;
  /** Per-head sink logits (gpt-oss), stored after the K cache's slots. */
  withSinks?: boolean;
  /** Rows [offset, offset + length) of chunk 0 are an image's: each sees the keys up to the image's end. */
  image?: [offset: number, length: number];
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
  const image = b.image;
  if (image) {
    const [rows, start] = b.chunks[0];
    chunks[0].keyEnds = Int32Array.from({ length: rows }, (_, t) => (t >= image[0] && t < image[0] + image[1] ? start + image[0] + image[1] : start + t + 1));
  }
  // Key ends ride after the positions (the runner's layout): a causal row's end is its position + 1.
  const keyEnds = chunks.flatMap((chunk) => [...(chunk.keyEnds ?? chunk.positions.map((p) => p + 1))]);
  const withEnds = image ? Int32Array.from([...positions, ...keyEnds]) : Int32Array.from(positions);
  return { numBlocks, flat, rowTables: Uint32Array.from(rowTables), positions: withEnds, keyEndsOffset: image ? positions.length : 0, chunks, rows: positions.length };
}

function describe(b: Batch): string {
  return `chunks=${b.chunks.map(([rows, start]) => `${rows}@${start}`).join(",")} heads=${b.heads}/${b.kvHeads} headDim=${b.headDim} blockSize=${b.blockSize}${b.sharedPrefix ? " sharedPrefix" : ""}${b.window ? ` window=${b.window}` : ""}${b.withSinks ? " sinks" : ""}${b.image ? ` image=${b.image.join("+")}` : ""}`;
}

/** With `splits` > 1: split-K over keys, `splitKeys` per split, then attention_combine.wgsl. */
function attentionCase(b: Batch, kv: KvType = "f32", splits = 1, splitKeys = 0): GpuKernelCase {
  return {
    name: `attention ${kv} ${describe(b)}${splits > 1 ? ` split-K ${splits} x ${splitKeys} keys` : ""}`,
    tolerance: 1e-11, // f32 online softmax against the reference's f64 two-pass softmax
    build() {
      const l = layout(b);
      const poolFloats = l.numBlocks * b.blockSize * b.kvHeads * b.headDim;
      const seed = b.headDim + b.chunks.length;
      // Halves of the same values as the f32 case (randomF16's specials include 65504, whose scores no f32 softmax
      // gets to 1e-11 of an f64 one).
      const keys = kv === "f32" ? randomF32(poolFloats, seed, 2) : Uint16Array.from(randomF32(poolFloats, seed, 2), f32ToF16);
      // Sinks from -3 to 5: some below every score, some above (rows whose keys then get little weight).
      const sinks = b.withSinks ? Float32Array.from({ length: b.heads }, (_, h) => -3 + (8 * h) / Math.max(1, b.heads - 1)) : undefined;
      const sinksOffset = keys.byteLength / 4; // in words: poolFloats * headDim is even for the f16 cases
      const kCache = sinks ? new Uint8Array(keys.byteLength + sinks.byteLength) : keys;
      if (sinks) {
        (kCache as Uint8Array).set(new Uint8Array(keys.buffer, keys.byteOffset, keys.byteLength));
        (kCache as Uint8Array).set(new Uint8Array(sinks.buffer), keys.byteLength);
      }
      const vCache = kv === "f32" ? randomF32(poolFloats, seed + 7, 2) : Uint16Array.from(randomF32(poolFloats, seed + 7, 2), f32ToF16);
      const widen = (cache: Float32Array | Uint16Array) => (cache instanceof Uint16Array ? f16CacheToF32(cache) : cache);
      const q = randomF32(l.rows * b.heads * b.headDim, l.rows + 3, 2);
      const scale = 1 / Math.sqrt(b.headDim);
      return {
        shader: { op: "attention", constants: { KV_TYPE: KV_TYPE[kv] } },
        bindings: [
          { name: "q", contents: q }, { name: "kCache", contents: kCache }, { name: "vCache", contents: vCache },
          { name: "rowTables", contents: l.rowTables }, { name: "blockTables", contents: l.flat }, { name: "positions", contents: l.positions },
          { name: "out", contents: { bytes: q.byteLength } },
          { name: "partials", contents: { bytes: Math.max(4, l.rows * b.heads * splits * (b.headDim + 2) * 4) } },
        ],
        params: [["u32", b.heads], ["u32", b.kvHeads], ["u32", b.headDim], ["u32", b.blockSize], ["f32", scale], ["u32", splits], ["u32", splitKeys], ["u32", b.window ?? 0],
          ["u32", sinks ? 1 : 0], ["u32", sinks ? sinksOffset : 0], ["u32", l.keyEndsOffset]],
        workgroups: [b.heads * splits, l.rows],
        then: splits > 1 ? [{
          shader: { op: "attention", file: "attention_combine" }, bindings: ["partials", "out"],
          params: [["u32", b.heads], ["u32", b.headDim], ["u32", splits]], workgroups: [b.heads, l.rows],
        }] : undefined,
        expected: { out: attentionChunksRef(q, widen(keys), widen(vCache), l.chunks, scale, { ...b, sinks }, l.rows) },
      };
    },
  };
}

/** Values the f16 rounding must get right: the largest half, overflow, ties, subnormals, signed zero. */
const F16_EDGES = [65504, 65519, 65520, -1e6, 2 ** -25, 1.5 * 2 ** -25, 3 * 2 ** -26, -3e-5, 1e-8, 0, -0, 1 + 2 ** -11, 1 + 3 * 2 ** -11];

function kvStoreCase(b: Batch, kv: KvType = "f32"): GpuKernelCase {
  return {
    name: `kv_store ${kv} ${describe(b)}`,
    tolerance: 0,
    build() {
      const l = layout(b);
      const kvDim = b.kvHeads * b.headDim;
      const poolFloats = l.numBlocks * b.blockSize * kvDim;
      const k = randomF32(l.rows * kvDim, 5, 2);
      const v = randomF32(l.rows * kvDim, 6, 2);
      if (kv === "f16") F16_EDGES.forEach((value, i) => { k[(i * 5) % k.length] = value; v[(i * 3) % v.length] = -value; });
      const kCache = kv === "f32" ? randomF32(poolFloats, 7, 2) : randomF16(poolFloats, 7, 2);
      const vCache = kv === "f32" ? randomF32(poolFloats, 8, 2) : randomF16(poolFloats, 8, 2);
      const kExpected = kCache.slice();
      const vExpected = vCache.slice();
      for (const chunk of l.chunks) {
        const rows = k.subarray(chunk.firstRow * kvDim, (chunk.firstRow + chunk.rows) * kvDim);
        const values = v.subarray(chunk.firstRow * kvDim, (chunk.firstRow + chunk.rows) * kvDim);
        const shape = { ...b, rows: chunk.rows };
        if (kExpected instanceof Float32Array && vExpected instanceof Float32Array) kvStoreRef(rows, values, kExpected, vExpected, chunk.blockTable, chunk.positions, shape);
        else kvStoreF16Ref(rows, values, kExpected as Uint16Array, vExpected as Uint16Array, chunk.blockTable, chunk.positions, shape);
      }
      return {
        shader: { op: "attention", file: "kv_store", constants: { KV_TYPE: KV_TYPE[kv] } },
        bindings: [
          { name: "k", contents: k }, { name: "v", contents: v }, { name: "kCache", contents: kCache }, { name: "vCache", contents: vCache },
          { name: "rowTables", contents: l.rowTables }, { name: "blockTables", contents: l.flat }, { name: "positions", contents: l.positions },
        ],
        params: [["u32", l.rows], ["u32", kvDim], ["u32", b.blockSize]],
        workgroups: grid((l.rows * kvDim) / (kv === "f16" ? 2 : 1), 256),
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

function kvCopyCase(c: Relocation, kv: KvType = "f32"): GpuKernelCase {
  const delta = c.targetStart - c.sourceStart;
  return {
    name: `kv_copy ${kv} kvHeads=${c.kvHeads} headDim=${c.headDim} rotaryDim=${c.rotaryDim} blockSize=${c.blockSize} ${c.count}@${c.sourceStart} -> @${c.targetStart}${c.withFactors ? " freqFactors" : ""}`,
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
      const values = numBlocks * c.blockSize * kvDim;
      const kCache = kv === "f32" ? randomF32(values, 11, 2) : randomF16(values, 11, 2);
      const vCache = kv === "f32" ? randomF32(values, 12, 2) : randomF16(values, 12, 2);
      let kExpected: Float32Array | Uint16Array = kCache.slice();
      const vExpected = vCache.slice();
      kvCopyRef(new Uint8Array(kExpected.buffer), new Uint8Array(vExpected.buffer), sourceTable, c.sourceStart, targetTable, c.targetStart, c.count, kvDim * kExpected.BYTES_PER_ELEMENT, c.blockSize);
      const factors = c.withFactors ? Float32Array.from({ length: c.rotaryDim / 2 }, (_, i) => 1 + (i % 3) * 2.5) : undefined;
      const thetaScale = Math.fround(Math.pow(10000, -2 / c.rotaryDim));
      if (delta !== 0) {
        const shift = [targetTable, c.targetStart, c.count, c.kvHeads, c.headDim, c.rotaryDim, c.blockSize, delta, factors, thetaScale] as const;
        kExpected = kExpected instanceof Float32Array ? ropeShiftRef(kExpected, ...shift) : ropeShiftF16Ref(kExpected, ...shift);
      }
      return {
        shader: { op: "attention", file: "kv_copy", constants: { KV_TYPE: KV_TYPE[kv] } },
        bindings: [
          { name: "kCache", contents: kCache }, { name: "vCache", contents: vCache }, { name: "sourceTable", contents: sourceTable },
          { name: "targetTable", contents: targetTable }, { name: "rotations", contents: ropeRotations(Math.abs(delta) + 1, c.rotaryDim, thetaScale, factors) },
        ],
        params: [
          ["u32", c.count], ["u32", c.kvHeads], ["u32", c.headDim], ["u32", c.rotaryDim], ["u32", c.blockSize],
          ["u32", c.sourceStart], ["u32", c.targetStart], ["i32", delta],
        ],
        workgroups: grid((c.count * kvDim) / (kv === "f16" ? 2 : 1), 256),
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

export const cases: GpuKernelCase[] = [
  // Split-K decode attention (splits x keys cover the longest row, as the runner sizes them): decode rows deep in
  // their sequences, splits wholly past shorter rows' last key, a row shorter than one split.
  attentionCase({ heads: 16, kvHeads: 8, headDim: 128, blockSize: 16, chunks: [[1, 300], [1, 70], [1, 1000]] }, "f32", 4, 256),
  attentionCase({ heads: 9, kvHeads: 3, headDim: 64, blockSize: 16, chunks: [[1, 200], [3, 61]], sharedPrefix: true }, "f16", 3, 128),
  attentionCase({ heads: 4, kvHeads: 2, headDim: 13, blockSize: 4, chunks: [[1, 37]] }, "f32", 2, 64),
  // Sliding windows: prefill rows and decode rows, one window wider than a sequence, and split-K over a window.
  attentionCase({ heads: 8, kvHeads: 4, headDim: 32, blockSize: 16, chunks: [[17, 30], [1, 3], [1, 200]], window: 9 }),
  attentionCase({ heads: 4, kvHeads: 2, headDim: 64, blockSize: 16, chunks: [[1, 300], [2, 5]], window: 100 }, "f16", 2, 64),
  // Attention sinks (gpt-oss): prefill and decode rows, with a window, and split-K (split 0 takes the sink).
  attentionCase({ heads: 8, kvHeads: 4, headDim: 32, blockSize: 16, chunks: [[17, 30], [1, 3], [1, 200]], window: 9, withSinks: true }),
  attentionCase({ heads: 4, kvHeads: 2, headDim: 13, blockSize: 4, chunks: [[6, 0], [1, 37]], withSinks: true }, "f16"),
  attentionCase({ heads: 16, kvHeads: 8, headDim: 64, blockSize: 16, chunks: [[1, 300], [1, 70]], withSinks: true }, "f32", 4, 128),
  attentionCase({ heads: 4, kvHeads: 2, headDim: 64, blockSize: 16, chunks: [[1, 300], [2, 5]], window: 100, withSinks: true }, "f16", 2, 64),
  // An image's rows see each other (bidirectional), alone and under a window shorter than the image.
  attentionCase({ heads: 4, kvHeads: 2, headDim: 16, blockSize: 8, chunks: [[24, 5], [1, 40]], image: [3, 16] }),
  attentionCase({ heads: 4, kvHeads: 2, headDim: 16, blockSize: 8, chunks: [[24, 5], [2, 9]], image: [2, 20], window: 8 }, "f16"),
  ...(["f32", "f16"] as const).flatMap((kv) => [
  ...batches.map((b) => attentionCase(b, kv)), ...batches.map((b) => kvStoreCase(b, kv)), ...relocations.map((c) => kvCopyCase(c, kv)),
]),
];
