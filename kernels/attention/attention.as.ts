// Causal attention over a paged KV cache of f32 or IEEE-half elements, for one chunk of a sequence or for many
// chunks (sequences) in one dispatch; the store of new K/V rows into their cache slots, and copies between slots.
// Cache layout (one layer): [numBlocks, blockSize, kvHeads, headDim] f32 or f16 for K and for V; a sequence's block
// table maps its logical block b (positions b*blockSize ..) to a physical block.
import { f16_to_f32, f16x4_to_f32x4, f32_to_f16, horizontal_sum, store_f16x8, transpose_sum_f32 } from "../assembly/convert.as";
import { softmax_row } from "../assembly/math.as";

/** Cache element types (compile-time constants: each export inlines one specialisation of the shared body). */
const KIND_F32: i32 = 0;
const KIND_F16: i32 = 1;

/** Value slots weighed per pass: enough to amortise loading and storing the accumulators, few enough to stay in L1. */
const VALUE_SLOTS: i32 = 8;

// @ts-ignore: decorator
@inline function element_bytes(kind: i32): usize {
  return kind == KIND_F32 ? 4 : 2;
}

/**
 * Four consecutive cache elements at p as f32x4. NOTE: halves use the fast conversion, exact for finite values
 * (an infinite half reads as 65536; a subnormal half costs an x86 microcode assist, rare in K/V).
 */
// @ts-ignore: decorator
@inline function load4(p: usize, kind: i32): v128 {
  return kind == KIND_F32 ? v128.load(p) : f16x4_to_f32x4(p);
}

/** One cache element at p as f32. */
// @ts-ignore: decorator
@inline function load1(p: usize, kind: i32): f32 {
  return kind == KIND_F32 ? load<f32>(p) : f16_to_f32(load<u16>(p));
}

/** q · k over n elements (q: f32, k: cache elements). */
// @ts-ignore: decorator
@inline function dot(a: usize, b: usize, n: i32, kind: i32): f32 {
  const eb = element_bytes(kind);
  let s0 = f32x4.splat(0), s1 = f32x4.splat(0);
  let i = 0;
  for (; i + 8 <= n; i += 8) {
    const o = <usize>i << 2;
    const ob = <usize>i * eb;
    s0 = f32x4.add(s0, f32x4.mul(v128.load(a + o), load4(b + ob, kind)));
    s1 = f32x4.add(s1, f32x4.mul(v128.load(a + o, 16), load4(b + ob + 4 * eb, kind)));
  }
  if (i + 4 <= n) {
    s0 = f32x4.add(s0, f32x4.mul(v128.load(a + (<usize>i << 2)), load4(b + <usize>i * eb, kind)));
    i += 4;
  }
  let s = horizontal_sum(f32x4.add(s0, s1));
  for (; i < n; i++) s += load<f32>(a + (<usize>i << 2)) * load1(b + <usize>i * eb, kind);
  return s;
}

/** Four key elements at k0..k3 + o as the lanes of one f32x4 (scalar tails). */
// @ts-ignore: decorator
@inline function gather4(k0: usize, k1: usize, k2: usize, k3: usize, o: usize, kind: i32): v128 {
  return f32x4.replace_lane(f32x4.replace_lane(f32x4.replace_lane(f32x4.splat(load1(k0 + o, kind)), 1, load1(k1 + o, kind)), 2, load1(k2 + o, kind)), 3, load1(k3 + o, kind));
}

/**
 * scoresA[0..4] = [qA · k0, qA · k1, qA · k2, qA · k3] * scale over n elements, and scoresB likewise for qB when
 * qB != 0 (two heads of one kv head: each key vector is loaded and converted once for both): four keys per pass,
 * so one transpose replaces four horizontal sums. Each head's sums are the same whether paired or not.
 */
// @ts-ignore: decorator
@inline function score4(qA: usize, qB: usize, k0: usize, slotBytes: usize, scoresA: usize, scoresB: usize, n: i32, scale: f32, kind: i32): void {
  const eb = element_bytes(kind);
  const pair = qB != 0;
  const k1 = k0 + slotBytes, k2 = k0 + 2 * slotBytes, k3 = k0 + 3 * slotBytes;
  let a0 = f32x4.splat(0), a1 = f32x4.splat(0), a2 = f32x4.splat(0), a3 = f32x4.splat(0);
  let b0 = f32x4.splat(0), b1 = f32x4.splat(0), b2 = f32x4.splat(0), b3 = f32x4.splat(0);
  let i = 0;
  for (; i + 4 <= n; i += 4) {
    const o = <usize>i * eb;
    const qa = v128.load(qA + (<usize>i << 2));
    const v0 = load4(k0 + o, kind), v1 = load4(k1 + o, kind), v2 = load4(k2 + o, kind), v3 = load4(k3 + o, kind);
    a0 = f32x4.add(a0, f32x4.mul(qa, v0));
    a1 = f32x4.add(a1, f32x4.mul(qa, v1));
    a2 = f32x4.add(a2, f32x4.mul(qa, v2));
    a3 = f32x4.add(a3, f32x4.mul(qa, v3));
    if (pair) {
      const qb = v128.load(qB + (<usize>i << 2));
      b0 = f32x4.add(b0, f32x4.mul(qb, v0));
      b1 = f32x4.add(b1, f32x4.mul(qb, v1));
      b2 = f32x4.add(b2, f32x4.mul(qb, v2));
      b3 = f32x4.add(b3, f32x4.mul(qb, v3));
    }
  }
  let sumsA = transpose_sum_f32(a0, a1, a2, a3);
  let sumsB = pair ? transpose_sum_f32(b0, b1, b2, b3) : sumsA;
  for (; i < n; i++) {
    const keys = gather4(k0, k1, k2, k3, <usize>i * eb, kind);
    sumsA = f32x4.add(sumsA, f32x4.mul(f32x4.splat(load<f32>(qA + (<usize>i << 2))), keys));
    if (pair) sumsB = f32x4.add(sumsB, f32x4.mul(f32x4.splat(load<f32>(qB + (<usize>i << 2))), keys));
  }
  v128.store(scoresA, f32x4.mul(sumsA, f32x4.splat(scale)));
  if (pair) v128.store(scoresB, f32x4.mul(sumsB, f32x4.splat(scale)));
}

/**
 * scoresA[s] = (qA · k_s) * scale for the `count` key rows k_s = keys + s * slotBytes of one block, and scoresB
 * likewise for qB unless qB = 0 (two heads of one kv head at once).
 */
// @ts-ignore: decorator
@inline function score_block(qA: usize, qB: usize, keys: usize, scoresA: usize, scoresB: usize, count: i32, slotBytes: usize, headDim: i32, scale: f32, kind: i32): void {
  let s = 0;
  for (; s + 4 <= count; s += 4) {
    const offset = <usize>s << 2;
    score4(qA, qB, keys + <usize>s * slotBytes, slotBytes, scoresA + offset, qB != 0 ? scoresB + offset : 0, headDim, scale, kind);
  }
  for (; s < count; s++) {
    const k = keys + <usize>s * slotBytes;
    store<f32>(scoresA + (<usize>s << 2), dot(qA, k, headDim, kind) * scale);
    if (qB != 0) store<f32>(scoresB + (<usize>s << 2), dot(qB, k, headDim, kind) * scale);
  }
}

/**
 * outA += sum_s scoresA[s] * v_s and outB likewise over the `count` value rows v_s = values + s * slotBytes of one
 * block (two heads of one kv head at once; outB = 0 for one head), sixteen dimensions at a time in registers.
 */
// @ts-ignore: decorator
@inline function weigh_block(values: usize, scoresA: usize, scoresB: usize, outA: usize, outB: usize, count: i32, slotBytes: usize, headDim: i32, kind: i32): void {
  const eb = element_bytes(kind);
  const pair = outB != 0;
  let d = 0;
  for (; d + 16 <= headDim; d += 16) {
    const o = <usize>d << 2;
    let a0 = v128.load(outA + o), a1 = v128.load(outA + o, 16), a2 = v128.load(outA + o, 32), a3 = v128.load(outA + o, 48);
    let b0 = f32x4.splat(0), b1 = f32x4.splat(0), b2 = f32x4.splat(0), b3 = f32x4.splat(0);
    if (pair) {
      b0 = v128.load(outB + o); b1 = v128.load(outB + o, 16); b2 = v128.load(outB + o, 32); b3 = v128.load(outB + o, 48);
    }
    for (let s = 0; s < count; s++) {
      const v = values + <usize>s * slotBytes + <usize>d * eb;
      const v0 = load4(v, kind), v1 = load4(v + 4 * eb, kind), v2 = load4(v + 8 * eb, kind), v3 = load4(v + 12 * eb, kind);
      const pa = f32x4.splat(load<f32>(scoresA + (<usize>s << 2)));
      a0 = f32x4.add(a0, f32x4.mul(pa, v0));
      a1 = f32x4.add(a1, f32x4.mul(pa, v1));
      a2 = f32x4.add(a2, f32x4.mul(pa, v2));
      a3 = f32x4.add(a3, f32x4.mul(pa, v3));
      if (pair) {
        const pb = f32x4.splat(load<f32>(scoresB + (<usize>s << 2)));
        b0 = f32x4.add(b0, f32x4.mul(pb, v0));
        b1 = f32x4.add(b1, f32x4.mul(pb, v1));
        b2 = f32x4.add(b2, f32x4.mul(pb, v2));
        b3 = f32x4.add(b3, f32x4.mul(pb, v3));
      }
    }
    v128.store(outA + o, a0);
    v128.store(outA + o, a1, 16);
    v128.store(outA + o, a2, 32);
    v128.store(outA + o, a3, 48);
    if (pair) {
      v128.store(outB + o, b0);
      v128.store(outB + o, b1, 16);
      v128.store(outB + o, b2, 32);
      v128.store(outB + o, b3, 48);
    }
  }
  for (; d < headDim; d++) {
    const o = <usize>d << 2;
    let a = load<f32>(outA + o);
    let b: f32 = pair ? load<f32>(outB + o) : 0;
    for (let s = 0; s < count; s++) {
      const v = load1(values + <usize>s * slotBytes + <usize>d * eb, kind);
      a += load<f32>(scoresA + (<usize>s << 2)) * v;
      if (pair) b += load<f32>(scoresB + (<usize>s << 2)) * v;
    }
    store<f32>(outA + o, a);
    if (pair) store<f32>(outB + o, b);
  }
}

/**
 * The shared body of every attention export: one chunk of rows of one sequence, heads [h0, h1), cache elements of
 * `kind`. See attention for the arguments.
 * NOTE: the cache is swept a few consecutive slots at a time (four for keys, VALUE_SLOTS for values), every kv
 * head of this call within them before moving on: each slot is read front to back while it is hot, which keeps
 * the hardware prefetchers ahead (kv head by kv head over whole blocks ran 1.5-2x slower from L3). K and V rows
 * are read (and, for f16, converted) once per pair of heads sharing them. Pairing only shares loads: each head's
 * sums run in the same order paired or alone, so outputs do not depend on the split [h0, h1).
 */
// @ts-ignore: decorator
@inline function attend(
  q: usize, kCache: usize, vCache: usize, blockTable: usize, positions: usize, keyEnds: usize, out: usize, scratch: usize,
  rows: i32, heads: i32, kvHeads: i32, headDim: i32, blockSize: i32, scale: f32, scratchStride: i32, window: i32, sinks: usize, h0: i32, h1: i32, kind: i32,
): void {
  const group = heads / kvHeads;
  const headBytes = <usize>headDim << 2; // one head of q / out (f32)
  const tokenBytes = <usize>heads * headBytes;
  const cacheHeadBytes = <usize>headDim * element_bytes(kind); // one head of one slot of the cache
  const slotBytes = <usize>kvHeads * cacheHeadBytes; // one position's K (or V) for all kv heads
  const blockBytes = <usize>blockSize * slotBytes;
  const scoresBytes = <usize>scratchStride << 2;
  const firstKv = h0 / group;
  for (let t = 0; t < rows; t++) {
    const qt = q + <usize>t * tokenBytes;
    const ot = out + <usize>t * tokenBytes;
    const position = load<i32>(positions + (<usize>t << 2));
    // Causal: keys up to the row's own position; an image's rows see their whole image (keyEnds).
    const count = keyEnds != 0 ? load<i32>(keyEnds + (<usize>t << 2)) : position + 1;
    // A sliding window sees the last `window` positions up to the row's own (and whatever follows it that the row
    // sees), as llama.cpp's standard SWA mask.
    const first = window > 0 ? max(0, position + 1 - window) : 0;
    const firstBlockStart = first - first % blockSize;
    // Four positions (four consecutive slots) at a time, every kv head of this call within them.
    for (let start = firstBlockStart; start < count; start += blockSize) {
      const block = kCache + <usize>load<i32>(blockTable + (<usize>(start / blockSize) << 2)) * blockBytes;
      const end = min(count - start, blockSize);
      for (let s = max(0, first - start); s < end; s += 4) {
        const n = min(4, end - s);
        const slots = block + <usize>s * slotBytes;
        const offset = <usize>(start + s) << 2;
        for (let kvHead = firstKv; kvHead * group < h1; kvHead++) {
          const last = min(h1, (kvHead + 1) * group);
          for (let h = max(h0, kvHead * group); h < last; h += 2) {
            const paired = h + 1 < last;
            score_block(
              qt + <usize>h * headBytes, paired ? qt + <usize>(h + 1) * headBytes : 0, slots + <usize>kvHead * cacheHeadBytes,
              scratch + <usize>h * scoresBytes + offset, paired ? scratch + <usize>(h + 1) * scoresBytes + offset : 0, n, slotBytes, headDim, scale, kind,
            );
          }
        }
      }
    }
    for (let h = h0; h < h1; h++) {
      softmax_row(scratch + <usize>h * scoresBytes + (<usize>first << 2), count - first, sinks != 0 ? load<f32>(sinks + (<usize>h << 2)) : -Infinity);
      memory.fill(ot + <usize>h * headBytes, 0, headBytes);
    }
    // Values likewise, VALUE_SLOTS consecutive slots at a time.
    for (let start = firstBlockStart; start < count; start += blockSize) {
      const block = vCache + <usize>load<i32>(blockTable + (<usize>(start / blockSize) << 2)) * blockBytes;
      const end = min(count - start, blockSize);
      for (let s = max(0, first - start); s < end; s += VALUE_SLOTS) {
        const n = min(VALUE_SLOTS, end - s);
        const slots = block + <usize>s * slotBytes;
        const offset = <usize>(start + s) << 2;
        for (let kvHead = firstKv; kvHead * group < h1; kvHead++) {
          const last = min(h1, (kvHead + 1) * group);
          for (let h = max(h0, kvHead * group); h < last; h += 2) {
            const paired = h + 1 < last;
            weigh_block(
              slots + <usize>kvHead * cacheHeadBytes, scratch + <usize>h * scoresBytes + offset, paired ? scratch + <usize>(h + 1) * scoresBytes + offset : 0,
              ot + <usize>h * headBytes, paired ? ot + <usize>(h + 1) * headBytes : 0, n, slotBytes, headDim, kind,
            );
          }
        }
      }
    }
  }
}

/**
 * out[t][h] = softmax(q[t][h] · K[0..positions[t]] * scale) · V[0..positions[t]] for heads h in [h0, h1), every
 * token row t of one chunk of one sequence (causal: token t sees KV positions 0..positions[t], already stored; with
 * window > 0, only the last `window` of them, positions[t] - window + 1 .. positions[t]; 0: all).
 * Grouped-query: head h reads kv head h / (heads / kvHeads). q, out: [rows, heads, headDim] f32; kCache, vCache:
 * [numBlocks, blockSize, kvHeads, headDim] f32; blockTable: i32 per logical block; positions: [rows] i32; head h
 * uses scores at scratch + h * scratchStride * 4 (scratchStride >= max position + 1). sinks: 0, or [heads] f32 logits
 * (gpt-oss's attention sinks) that each head's softmax counts beside its scores and then drops.
 * Equals attention_chunks with one chunk, bit for bit.
 */
export function attention(
  q: usize, kCache: usize, vCache: usize, blockTable: usize, positions: usize, out: usize, scratch: usize,
  rows: i32, heads: i32, kvHeads: i32, headDim: i32, blockSize: i32, scale: f32, scratchStride: i32, window: i32, sinks: usize, h0: i32, h1: i32,
): void {
  attend(q, kCache, vCache, blockTable, positions, 0, out, scratch, rows, heads, kvHeads, headDim, blockSize, scale, scratchStride, window, sinks, h0, h1, KIND_F32);
}

// @ts-ignore: decorator
@inline function attend_chunks(
  descriptors: usize, q: usize, kCache: usize, vCache: usize, out: usize, scratch: usize,
  heads: i32, kvHeads: i32, headDim: i32, blockSize: i32, scale: f32, scratchStride: i32, window: i32, sinks: usize, i0: i32, i1: i32, kind: i32,
): void {
  const tokenBytes = <usize>heads * (<usize>headDim << 2);
  const chunkScratchBytes = <usize>heads * (<usize>scratchStride << 2);
  // Each chunk this share touches, with the contiguous run of its heads the share holds: one body call per chunk,
  // so heads sharing a kv head still share its K/V reads.
  for (let c = i0 / heads; c * heads < i1; c++) {
    const descriptor = descriptors + (<usize>c << 5);
    const firstRow = load<i32>(descriptor);
    const rows = load<i32>(descriptor, 4);
    const blockTable = <usize>load<u32>(descriptor, 8);
    const positions = <usize>load<u32>(descriptor, 12);
    const keyEnds = <usize>load<u32>(descriptor, 16);
    const h0 = max(i0 - c * heads, 0);
    const h1 = min(i1 - c * heads, heads);
    const rowOffset = <usize>firstRow * tokenBytes;
    attend(
      q + rowOffset, kCache, vCache, blockTable, positions, keyEnds, out + rowOffset, scratch + <usize>c * chunkScratchBytes,
      rows, heads, kvHeads, headDim, blockSize, scale, scratchStride, window, sinks, h0, h1, kind,
    );
  }
}

/**
 * attention for many chunks (each a run of consecutive token rows of one sequence) in one dispatch, split over
 * [i0, i1) of the chunks * heads (chunk, head) pairs, i = chunkIndex * heads + head.
 * descriptors: [chunks, 8] i32, per chunk [firstRow, rows, blockTablePointer, positionsPointer, keyEndsPointer, 0, 0,
 * 0]: the chunk's rows are q/out rows firstRow .. firstRow + rows - 1; blockTablePointer: byte pointer to its i32
 * block table; positionsPointer: byte pointer to its [rows] i32 positions; keyEndsPointer: 0 (causal), or a byte
 * pointer to [rows] i32 exclusive ends of the keys each row sees (positions[t] + 1 for a causal row; an image's rows
 * see up to the image's end: bidirectional within it). A sliding window still starts at positions[t] - window + 1. q, out: [totalRows, heads, headDim] f32; kCache,
 * vCache: [numBlocks, blockSize, kvHeads, headDim] f32. scratch: [chunks * heads, scratchStride] f32, the scores of
 * (chunk c, head h) at row c * heads + h (scratchStride >= max position + 1), so parallel shares never collide.
 * window, sinks: as in attention (0: every earlier position; 0: no sinks).
 * Every (chunk, head) output is bit for bit what attention computes for that chunk alone, whatever the split and
 * the other chunks. Dispatch with count = chunks * heads and grain heads / kvHeads, so that no share splits the
 * heads of one kv head (which would read its K/V twice).
 */
export function attention_chunks(
  descriptors: usize, q: usize, kCache: usize, vCache: usize, out: usize, scratch: usize,
  heads: i32, kvHeads: i32, headDim: i32, blockSize: i32, scale: f32, scratchStride: i32, window: i32, sinks: usize, i0: i32, i1: i32,
): void {
  attend_chunks(descriptors, q, kCache, vCache, out, scratch, heads, kvHeads, headDim, blockSize, scale, scratchStride, window, sinks, i0, i1, KIND_F32);
}

/**
 * As attention_chunks over an IEEE-half cache (kCache, vCache: [numBlocks, blockSize, kvHeads, headDim] f16, as
 * kv_store_f16 writes it): halves are widened to f32 exactly (finite values) and everything else is as in f32.
 */
export function attention_chunks_f16(
  descriptors: usize, q: usize, kCache: usize, vCache: usize, out: usize, scratch: usize,
  heads: i32, kvHeads: i32, headDim: i32, blockSize: i32, scale: f32, scratchStride: i32, window: i32, sinks: usize, i0: i32, i1: i32,
): void {
  attend_chunks(descriptors, q, kCache, vCache, out, scratch, heads, kvHeads, headDim, blockSize, scale, scratchStride, window, sinks, i0, i1, KIND_F16);
}

/** Physical slot (block * blockSize + offset) of sequence position `position` through blockTable. */
// @ts-ignore: decorator
@inline function slot_of(blockTable: usize, position: i32, blockSize: i32): usize {
  const block = load<i32>(blockTable + (<usize>(position / blockSize) << 2));
  return <usize>block * <usize>blockSize + <usize>(position % blockSize);
}

/**
 * Writes rows of K and V (k, v: [rows, kvDim] f32) into their cache slots: token t goes to position positions[t],
 * i.e. physical block blockTable[positions[t] / blockSize], slot positions[t] % blockSize. Not split (cheap).
 */
export function kv_store(k: usize, v: usize, kCache: usize, vCache: usize, blockTable: usize, positions: usize, rows: i32, kvDim: i32, blockSize: i32): void {
  const rowBytes = <usize>kvDim << 2;
  for (let t = 0; t < rows; t++) {
    const slot = slot_of(blockTable, load<i32>(positions + (<usize>t << 2)), blockSize);
    memory.copy(kCache + slot * rowBytes, k + <usize>t * rowBytes, rowBytes);
    memory.copy(vCache + slot * rowBytes, v + <usize>t * rowBytes, rowBytes);
  }
}

/** n floats at src stored as n IEEE halves at dst, rounded to nearest even. */
// @ts-ignore: decorator
@inline function store_row_f16(dst: usize, src: usize, n: i32): void {
  let i = 0;
  for (; i + 8 <= n; i += 8) store_f16x8(dst + (<usize>i << 1), v128.load(src + (<usize>i << 2)), v128.load(src + (<usize>i << 2), 16));
  for (; i < n; i++) store<u16>(dst + (<usize>i << 1), <u16>f32_to_f16(load<f32>(src + (<usize>i << 2))));
}

/**
 * As kv_store into IEEE-half caches (kCache, vCache: [numBlocks, blockSize, kvDim] f16): each f32 of k, v:
 * [rows, kvDim] is rounded to the nearest half, ties to even (subnormal halves, overflow to infinity and NaN as
 * f32_to_f16 / GGML_FP32_TO_FP16 give them). Not split (cheap).
 */
export function kv_store_f16(k: usize, v: usize, kCache: usize, vCache: usize, blockTable: usize, positions: usize, rows: i32, kvDim: i32, blockSize: i32): void {
  const rowBytes = <usize>kvDim << 2;
  const cacheRowBytes = <usize>kvDim << 1;
  for (let t = 0; t < rows; t++) {
    const slot = slot_of(blockTable, load<i32>(positions + (<usize>t << 2)), blockSize);
    store_row_f16(kCache + slot * cacheRowBytes, k + <usize>t * rowBytes, kvDim);
    store_row_f16(vCache + slot * cacheRowBytes, v + <usize>t * rowBytes, kvDim);
  }
}

/**
 * Copies the K and V rows of sequence positions srcStart + r (through srcTable) to positions dstStart + r (through
 * dstTable) for r in [r0, r1), in both caches: [numBlocks, blockSize, rowBytes] bytes of any element type
 * (rowBytes = kvHeads * headDim * element bytes). srcTable, dstTable: i32 block tables (may be the same table,
 * to move a span within a sequence). NOTE: the caller guarantees that no source row is also a destination row of
 * the same call (source and destination blocks never overlap), so rows may be copied in any order and split freely.
 */
export function kv_copy(kCache: usize, vCache: usize, srcTable: usize, srcStart: i32, dstTable: usize, dstStart: i32, rowBytes: i32, blockSize: i32, r0: i32, r1: i32): void {
  const bytes = <usize>rowBytes;
  for (let r = r0; r < r1; r++) {
    const src = slot_of(srcTable, srcStart + r, blockSize) * bytes;
    const dst = slot_of(dstTable, dstStart + r, blockSize) * bytes;
    memory.copy(kCache + dst, kCache + src, bytes);
    memory.copy(vCache + dst, vCache + src, bytes);
  }
}
