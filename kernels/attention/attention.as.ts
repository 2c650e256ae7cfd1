// Causal attention over a paged KV cache, and the store of new K/V rows into their cache slots.
// Cache layout (one layer): [numBlocks, blockSize, kvHeads, headDim] f32 for K and for V; a sequence's block
// table maps its logical block b (positions b*blockSize ..) to a physical block.
import { horizontal_sum, transpose_sum_f32 } from "../assembly/convert.as";
import { softmax_row } from "../assembly/math.as";

/** Value slots weighed per pass: enough to amortise loading and storing the accumulators, few enough to stay in L1. */
const VALUE_SLOTS: i32 = 8;

/** q · k over n floats. */
// @ts-ignore: decorator
@inline function dot(a: usize, b: usize, n: i32): f32 {
  let s0 = f32x4.splat(0), s1 = f32x4.splat(0);
  let i = 0;
  for (; i + 8 <= n; i += 8) {
    const o = <usize>i << 2;
    s0 = f32x4.add(s0, f32x4.mul(v128.load(a + o), v128.load(b + o)));
    s1 = f32x4.add(s1, f32x4.mul(v128.load(a + o, 16), v128.load(b + o, 16)));
  }
  if (i + 4 <= n) {
    const o = <usize>i << 2;
    s0 = f32x4.add(s0, f32x4.mul(v128.load(a + o), v128.load(b + o)));
    i += 4;
  }
  let s = horizontal_sum(f32x4.add(s0, s1));
  for (; i < n; i++) s += load<f32>(a + (<usize>i << 2)) * load<f32>(b + (<usize>i << 2));
  return s;
}

/** [q · k0, q · k1, q · k2, q · k3] over n floats: four keys per pass, so one transpose replaces four horizontal sums. */
// @ts-ignore: decorator
@inline function dot4(q: usize, k0: usize, k1: usize, k2: usize, k3: usize, n: i32): v128 {
  let a0 = f32x4.splat(0), a1 = f32x4.splat(0), a2 = f32x4.splat(0), a3 = f32x4.splat(0);
  let i = 0;
  for (; i + 4 <= n; i += 4) {
    const o = <usize>i << 2;
    const qv = v128.load(q + o);
    a0 = f32x4.add(a0, f32x4.mul(qv, v128.load(k0 + o)));
    a1 = f32x4.add(a1, f32x4.mul(qv, v128.load(k1 + o)));
    a2 = f32x4.add(a2, f32x4.mul(qv, v128.load(k2 + o)));
    a3 = f32x4.add(a3, f32x4.mul(qv, v128.load(k3 + o)));
  }
  let sums = transpose_sum_f32(a0, a1, a2, a3);
  for (; i < n; i++) {
    const o = <usize>i << 2;
    const qs = load<f32>(q + o);
    sums = f32x4.add(sums, f32x4.mul(f32x4.splat(qs), f32x4.replace_lane(f32x4.replace_lane(f32x4.replace_lane(f32x4.splat(load<f32>(k0 + o)), 1, load<f32>(k1 + o)), 2, load<f32>(k2 + o)), 3, load<f32>(k3 + o))));
  }
  return sums;
}

/** scores[s] = (q · k_s) * scale for the `count` key rows k_s = keys + s * slotBytes of one block. */
// @ts-ignore: decorator
@inline function score_block(q: usize, keys: usize, scores: usize, count: i32, slotBytes: usize, headDim: i32, scale: f32): void {
  let s = 0;
  for (; s + 4 <= count; s += 4) {
    const k = keys + <usize>s * slotBytes;
    v128.store(scores + (<usize>s << 2), f32x4.mul(dot4(q, k, k + slotBytes, k + 2 * slotBytes, k + 3 * slotBytes, headDim), f32x4.splat(scale)));
  }
  for (; s < count; s++) store<f32>(scores + (<usize>s << 2), dot(q, keys + <usize>s * slotBytes, headDim) * scale);
}

/**
 * outA += sum_s scoresA[s] * v_s and outB likewise over the `count` value rows v_s = values + s * slotBytes of one
 * block (two heads of one kv head at once; outB = 0 for one head), sixteen dimensions at a time in registers.
 */
// @ts-ignore: decorator
@inline function weigh_block(values: usize, scoresA: usize, scoresB: usize, outA: usize, outB: usize, count: i32, slotBytes: usize, headDim: i32): void {
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
      const v = values + <usize>s * slotBytes + o;
      const v0 = v128.load(v), v1 = v128.load(v, 16), v2 = v128.load(v, 32), v3 = v128.load(v, 48);
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
      const v = load<f32>(values + <usize>s * slotBytes + o);
      a += load<f32>(scoresA + (<usize>s << 2)) * v;
      if (pair) b += load<f32>(scoresB + (<usize>s << 2)) * v;
    }
    store<f32>(outA + o, a);
    if (pair) store<f32>(outB + o, b);
  }
}

/**
 * out[t][h] = softmax(q[t][h] · K[0..positions[t]] * scale) · V[0..positions[t]] for heads h in [h0, h1), every
 * token row t (causal: token t sees KV positions 0..positions[t], already stored). Grouped-query: head h reads kv
 * head h / (heads / kvHeads). q, out: [rows, heads, headDim] f32; blockTable: i32 per logical block; positions:
 * [rows] i32; head h uses scores at scratch + h * scratchStride * 4 (scratchStride >= max position + 1).
 * NOTE: the cache is swept a few consecutive slots at a time (four for keys, VALUE_SLOTS for values), every kv
 * head of this call within them before moving on: each slot is read front to back while it is hot, which keeps
 * the hardware prefetchers ahead (kv head by kv head over whole blocks ran 1.5-2x slower from L3). K and V rows
 * are read once per pair of heads sharing them.
 */
export function attention(
  q: usize, kCache: usize, vCache: usize, blockTable: usize, positions: usize, out: usize, scratch: usize,
  rows: i32, heads: i32, kvHeads: i32, headDim: i32, blockSize: i32, scale: f32, scratchStride: i32, h0: i32, h1: i32,
): void {
  const group = heads / kvHeads;
  const headBytes = <usize>headDim << 2;
  const tokenBytes = <usize>heads * headBytes;
  const slotBytes = <usize>kvHeads * headBytes; // one position's K (or V) for all kv heads
  const blockBytes = <usize>blockSize * slotBytes;
  const scoresBytes = <usize>scratchStride << 2;
  const firstKv = h0 / group;
  for (let t = 0; t < rows; t++) {
    const qt = q + <usize>t * tokenBytes;
    const ot = out + <usize>t * tokenBytes;
    const count = load<i32>(positions + (<usize>t << 2)) + 1;
    // Four positions (four consecutive slots) at a time, every kv head of this call within them.
    for (let start = 0; start < count; start += blockSize) {
      const block = kCache + <usize>load<i32>(blockTable + (<usize>(start / blockSize) << 2)) * blockBytes;
      const end = min(count - start, blockSize);
      for (let s = 0; s < end; s += 4) {
        const n = min(4, end - s);
        const slots = block + <usize>s * slotBytes;
        const offset = <usize>(start + s) << 2;
        for (let kvHead = firstKv; kvHead * group < h1; kvHead++) {
          const last = min(h1, (kvHead + 1) * group);
          for (let h = max(h0, kvHead * group); h < last; h++) {
            score_block(qt + <usize>h * headBytes, slots + <usize>kvHead * headBytes, scratch + <usize>h * scoresBytes + offset, n, slotBytes, headDim, scale);
          }
        }
      }
    }
    for (let h = h0; h < h1; h++) {
      softmax_row(scratch + <usize>h * scoresBytes, count);
      memory.fill(ot + <usize>h * headBytes, 0, headBytes);
    }
    // Values likewise, VALUE_SLOTS consecutive slots at a time.
    for (let start = 0; start < count; start += blockSize) {
      const block = vCache + <usize>load<i32>(blockTable + (<usize>(start / blockSize) << 2)) * blockBytes;
      const end = min(count - start, blockSize);
      for (let s = 0; s < end; s += VALUE_SLOTS) {
        const n = min(VALUE_SLOTS, end - s);
        const slots = block + <usize>s * slotBytes;
        const offset = <usize>(start + s) << 2;
        for (let kvHead = firstKv; kvHead * group < h1; kvHead++) {
          const last = min(h1, (kvHead + 1) * group);
          for (let h = max(h0, kvHead * group); h < last; h += 2) {
            const paired = h + 1 < last;
            weigh_block(
              slots + <usize>kvHead * headBytes, scratch + <usize>h * scoresBytes + offset, paired ? scratch + <usize>(h + 1) * scoresBytes + offset : 0,
              ot + <usize>h * headBytes, paired ? ot + <usize>(h + 1) * headBytes : 0, n, slotBytes, headDim,
            );
          }
        }
      }
    }
  }
}

/**
 * Writes rows of K and V (k, v: [rows, kvDim] f32) into their cache slots: token t goes to position positions[t],
 * i.e. physical block blockTable[positions[t] / blockSize], slot positions[t] % blockSize. Not split (cheap).
 */
export function kv_store(k: usize, v: usize, kCache: usize, vCache: usize, blockTable: usize, positions: usize, rows: i32, kvDim: i32, blockSize: i32): void {
  const rowBytes = <usize>kvDim << 2;
  for (let t = 0; t < rows; t++) {
    const position = load<i32>(positions + (<usize>t << 2));
    const block = load<i32>(blockTable + (<usize>(position / blockSize) << 2));
    const slot = <usize>block * <usize>blockSize + <usize>(position % blockSize);
    memory.copy(kCache + slot * rowBytes, k + <usize>t * rowBytes, rowBytes);
    memory.copy(vCache + slot * rowBytes, v + <usize>t * rowBytes, rowBytes);
  }
}
