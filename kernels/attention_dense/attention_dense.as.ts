// Bidirectional multi-head attention over a dense batch of tokens (a vision transformer's encoder: every token sees
// every token, no mask, no cache), with an online softmax and no scratch memory: out = softmax(q k^T * scale) v.
// Layout of q, k, v, out: [tokens, heads, headDim] f32 (token t, head h at (t * heads + h) * headDim).
//
// Work split: item w of [0, heads * blocks), blocks = ceil(tokens / blockRows), is head w / blocks and query rows
// [b * blockRows, min((b + 1) * blockRows, tokens)) with b = w % blocks; an item writes only its own rows of its
// head, so any split of the items is safe, and results do not depend on it. Inside an item, four query rows at a
// time sweep every key and value of the head once, eight keys per step:
// - scores: two query rows against four keys per pass over headDim (eight f32x4 partial sums, lanes d mod 4),
//   gathered and transposed into eight vectors s_j = (q_0 . k_j, .., q_3 . k_j) * scale, one lane per query row;
// - online softmax per lane, as ggml's tiled CPU flash attention does it per key tile: m' = max(m, max_j s_j),
//   p_j = e^(s_j - m'), l = l e^(m - m') + sum_j p_j, and the accumulator rescaled by e^(m - m') only when m grew;
// - values: acc_d = acc_d + sum_j p_j v_j[d], with acc_d one vector per dimension d (lanes = query rows), kept in
//   the four rows' own out slots (transposed per 4 x 4 block; transposed back when the sweep ends, then times 1/l).
// So the kernel needs no scratch buffer; each K/V row is read once per four query rows.
import { transpose_sum_f32 } from "../assembly/convert.as";
import { exp_f32x4 } from "../assembly/math.as";

/** Keys per online-softmax step. */
const TILE: i32 = 8;
/** Query rows per sweep over the keys (the lanes of a vector). */
const GROUP: i32 = 4;

/**
 * score_pair's second result. A global: each thread runs its own instance of the module, with its own globals.
 */
let pairSecond: v128 = i32x4.splat(0);

/** Four f32 at a + o, b + o, c + o, d + o as the lanes of one vector. */
// @ts-ignore: decorator
@inline function gather(a: usize, b: usize, c: usize, d: usize, o: usize): v128 {
  return f32x4.replace_lane(f32x4.replace_lane(f32x4.replace_lane(f32x4.splat(load<f32>(a + o)), 1, load<f32>(b + o)), 2, load<f32>(c + o)), 3, load<f32>(d + o));
}

/**
 * [qa . k0, qa . k1, qa . k2, qa . k3] over headDim; the same for qb into pairSecond. Each sum: lanes d mod 4
 * accumulated in order of d, then added pairwise (transpose_sum_f32), then the dimensions past the last multiple of 4.
 */
// @ts-ignore: decorator
@inline function score_pair(qa: usize, qb: usize, k0: usize, k1: usize, k2: usize, k3: usize, headDim: i32): v128 {
  let a0 = f32x4.splat(0), a1 = f32x4.splat(0), a2 = f32x4.splat(0), a3 = f32x4.splat(0);
  let b0 = f32x4.splat(0), b1 = f32x4.splat(0), b2 = f32x4.splat(0), b3 = f32x4.splat(0);
  let d = 0;
  for (; d + 4 <= headDim; d += 4) {
    const o = <usize>d << 2;
    const x = v128.load(qa + o);
    const y = v128.load(qb + o);
    const v0 = v128.load(k0 + o);
    a0 = f32x4.add(a0, f32x4.mul(x, v0));
    b0 = f32x4.add(b0, f32x4.mul(y, v0));
    const v1 = v128.load(k1 + o);
    a1 = f32x4.add(a1, f32x4.mul(x, v1));
    b1 = f32x4.add(b1, f32x4.mul(y, v1));
    const v2 = v128.load(k2 + o);
    a2 = f32x4.add(a2, f32x4.mul(x, v2));
    b2 = f32x4.add(b2, f32x4.mul(y, v2));
    const v3 = v128.load(k3 + o);
    a3 = f32x4.add(a3, f32x4.mul(x, v3));
    b3 = f32x4.add(b3, f32x4.mul(y, v3));
  }
  let sa = transpose_sum_f32(a0, a1, a2, a3);
  let sb = transpose_sum_f32(b0, b1, b2, b3);
  for (; d < headDim; d++) {
    const o = <usize>d << 2;
    const keys = gather(k0, k1, k2, k3, o);
    sa = f32x4.add(sa, f32x4.mul(f32x4.splat(load<f32>(qa + o)), keys));
    sb = f32x4.add(sb, f32x4.mul(f32x4.splat(load<f32>(qb + o)), keys));
  }
  pairSecond = sb;
  return sa;
}

/** [a0 b0 a1 b1] */
// @ts-ignore: decorator
@inline function zip_low(a: v128, b: v128): v128 {
  return i8x16.shuffle(a, b, 0, 1, 2, 3, 16, 17, 18, 19, 4, 5, 6, 7, 20, 21, 22, 23);
}

/** [a2 b2 a3 b3] */
// @ts-ignore: decorator
@inline function zip_high(a: v128, b: v128): v128 {
  return i8x16.shuffle(a, b, 8, 9, 10, 11, 24, 25, 26, 27, 12, 13, 14, 15, 28, 29, 30, 31);
}

/** [a0 a1 b0 b1] */
// @ts-ignore: decorator
@inline function low_halves(a: v128, b: v128): v128 {
  return i8x16.shuffle(a, b, 0, 1, 2, 3, 4, 5, 6, 7, 16, 17, 18, 19, 20, 21, 22, 23);
}

/** [a2 a3 b2 b3] */
// @ts-ignore: decorator
@inline function high_halves(a: v128, b: v128): v128 {
  return i8x16.shuffle(a, b, 8, 9, 10, 11, 12, 13, 14, 15, 24, 25, 26, 27, 28, 29, 30, 31);
}

/** Lanes 0 .. rows - 1 of acc stored as the f32 at p0 + o, p1 + o, p2 + o, p3 + o. */
// @ts-ignore: decorator
@inline function scatter(p0: usize, p1: usize, p2: usize, p3: usize, o: usize, acc: v128, rows: i32): void {
  store<f32>(p0 + o, f32x4.extract_lane(acc, 0));
  if (rows > 1) store<f32>(p1 + o, f32x4.extract_lane(acc, 1));
  if (rows > 2) store<f32>(p2 + o, f32x4.extract_lane(acc, 2));
  if (rows > 3) store<f32>(p3 + o, f32x4.extract_lane(acc, 3));
}

/** acc + sum_j p_j * v_j[d] for the dimension at byte offset o of the eight value rows, in order of j. */
// @ts-ignore: decorator
@inline function weigh(
  acc: v128, o: usize, v0: usize, v1: usize, v2: usize, v3: usize, v4: usize, v5: usize, v6: usize, v7: usize,
  p0: v128, p1: v128, p2: v128, p3: v128, p4: v128, p5: v128, p6: v128, p7: v128,
): v128 {
  acc = f32x4.add(acc, f32x4.mul(p0, v128.load32_splat(v0 + o)));
  acc = f32x4.add(acc, f32x4.mul(p1, v128.load32_splat(v1 + o)));
  acc = f32x4.add(acc, f32x4.mul(p2, v128.load32_splat(v2 + o)));
  acc = f32x4.add(acc, f32x4.mul(p3, v128.load32_splat(v3 + o)));
  acc = f32x4.add(acc, f32x4.mul(p4, v128.load32_splat(v4 + o)));
  acc = f32x4.add(acc, f32x4.mul(p5, v128.load32_splat(v5 + o)));
  acc = f32x4.add(acc, f32x4.mul(p6, v128.load32_splat(v6 + o)));
  return f32x4.add(acc, f32x4.mul(p7, v128.load32_splat(v7 + o)));
}

/**
 * acc_d = acc_d (* corr when rescale) + sum_j p_j * v_j[d] for dimensions d in [dStart, headDim), acc_d with lane r
 * at o_r + 4 d (the natural layout: the last dimensions of a full group, every dimension of a group of fewer than
 * four rows; lanes past `rows` read the last row and are not stored).
 */
// @ts-ignore: decorator
@inline function weigh_natural(
  o0: usize, o1: usize, o2: usize, o3: usize, rows: i32, dStart: i32, headDim: i32, rescale: bool, corr: v128,
  v0: usize, v1: usize, v2: usize, v3: usize, v4: usize, v5: usize, v6: usize, v7: usize,
  p0: v128, p1: v128, p2: v128, p3: v128, p4: v128, p5: v128, p6: v128, p7: v128,
): void {
  for (let d = dStart; d < headDim; d++) {
    const o = <usize>d << 2;
    const acc = gather(o0, o1, o2, o3, o);
    scatter(o0, o1, o2, o3, o, weigh(rescale ? f32x4.mul(acc, corr) : acc, o, v0, v1, v2, v3, v4, v5, v6, v7, p0, p1, p2, p3, p4, p5, p6, p7), rows);
  }
}

/**
 * The same for a full group's dimensions [0, d4) in the blocked layout: acc_d for d = 4 b + i is the vector at
 * o_i + 16 b (row i's slot of block b).
 */
// @ts-ignore: decorator
@inline function weigh_blocked(
  o0: usize, o1: usize, o2: usize, o3: usize, d4: i32, rescale: bool, corr: v128,
  v0: usize, v1: usize, v2: usize, v3: usize, v4: usize, v5: usize, v6: usize, v7: usize,
  p0: v128, p1: v128, p2: v128, p3: v128, p4: v128, p5: v128, p6: v128, p7: v128,
): void {
  for (let d = 0; d < d4; d += 4) {
    const o = <usize>d << 2;
    const a0 = v128.load(o0 + o), a1 = v128.load(o1 + o), a2 = v128.load(o2 + o), a3 = v128.load(o3 + o);
    v128.store(o0 + o, weigh(rescale ? f32x4.mul(a0, corr) : a0, o, v0, v1, v2, v3, v4, v5, v6, v7, p0, p1, p2, p3, p4, p5, p6, p7));
    v128.store(o1 + o, weigh(rescale ? f32x4.mul(a1, corr) : a1, o + 4, v0, v1, v2, v3, v4, v5, v6, v7, p0, p1, p2, p3, p4, p5, p6, p7));
    v128.store(o2 + o, weigh(rescale ? f32x4.mul(a2, corr) : a2, o + 8, v0, v1, v2, v3, v4, v5, v6, v7, p0, p1, p2, p3, p4, p5, p6, p7));
    v128.store(o3 + o, weigh(rescale ? f32x4.mul(a3, corr) : a3, o + 12, v0, v1, v2, v3, v4, v5, v6, v7, p0, p1, p2, p3, p4, p5, p6, p7));
  }
}

/** Query rows [t, t + rows) (rows 1..4) of head `head`: see the file's header. */
function attend_group(q: usize, k: usize, v: usize, out: usize, tokens: i32, heads: i32, headDim: i32, scale: f32, head: i32, t: i32, rows: i32): void {
  const rowBytes = <usize>heads * (<usize>headDim << 2); // one token of q, k, v or out
  const headOffset = <usize>head * (<usize>headDim << 2);
  const headBytes = <usize>headDim << 2;
  // Rows past `rows` repeat the last one (computed, never stored).
  const q0 = q + <usize>t * rowBytes + headOffset;
  const q1 = q0 + <usize>min(1, rows - 1) * rowBytes;
  const q2 = q0 + <usize>min(2, rows - 1) * rowBytes;
  const q3 = q0 + <usize>min(3, rows - 1) * rowBytes;
  const o0 = out + <usize>t * rowBytes + headOffset;
  const o1 = o0 + <usize>min(1, rows - 1) * rowBytes;
  const o2 = o0 + <usize>min(2, rows - 1) * rowBytes;
  const o3 = o0 + <usize>min(3, rows - 1) * rowBytes;
  const full = rows == GROUP;
  const d4 = full ? headDim & ~3 : 0; // dimensions in the blocked layout
  memory.fill(o0, 0, headBytes);
  memory.fill(o1, 0, headBytes);
  memory.fill(o2, 0, headBytes);
  memory.fill(o3, 0, headBytes);
  const kBase = k + headOffset;
  const vBase = v + headOffset;
  const lastRow = <usize>(tokens - 1) * rowBytes;
  const scaleV = f32x4.splat(scale);
  const minusInfinity = f32x4.splat(-Infinity);
  let m = minusInfinity;
  let l = f32x4.splat(0);
  for (let j = 0; j < tokens; j += TILE) {
    const n = min(TILE, tokens - j);
    // Key and value rows j .. j + 7, clamped to the last (their scores are masked below).
    const r0 = <usize>j * rowBytes;
    const r1 = min(r0 + rowBytes, lastRow), r2 = min(r0 + 2 * rowBytes, lastRow), r3 = min(r0 + 3 * rowBytes, lastRow);
    const r4 = min(r0 + 4 * rowBytes, lastRow), r5 = min(r0 + 5 * rowBytes, lastRow), r6 = min(r0 + 6 * rowBytes, lastRow);
    const r7 = min(r0 + 7 * rowBytes, lastRow);

    // Scores: rows (q0, q1) and (q2, q3) against keys 0-3, transposed into s0..s3 (lanes = query rows); then 4-7.
    const a0 = score_pair(q0, q1, kBase + r0, kBase + r1, kBase + r2, kBase + r3, headDim);
    const b0 = pairSecond;
    const c0 = score_pair(q2, q3, kBase + r0, kBase + r1, kBase + r2, kBase + r3, headDim);
    const d0 = pairSecond;
    let t0 = zip_low(a0, b0), t1 = zip_high(a0, b0), t2 = zip_low(c0, d0), t3 = zip_high(c0, d0);
    let s0 = f32x4.mul(low_halves(t0, t2), scaleV);
    let s1 = f32x4.mul(high_halves(t0, t2), scaleV);
    let s2 = f32x4.mul(low_halves(t1, t3), scaleV);
    let s3 = f32x4.mul(high_halves(t1, t3), scaleV);
    const a1 = score_pair(q0, q1, kBase + r4, kBase + r5, kBase + r6, kBase + r7, headDim);
    const b1 = pairSecond;
    const c1 = score_pair(q2, q3, kBase + r4, kBase + r5, kBase + r6, kBase + r7, headDim);
    const d1 = pairSecond;
    t0 = zip_low(a1, b1); t1 = zip_high(a1, b1); t2 = zip_low(c1, d1); t3 = zip_high(c1, d1);
    let s4 = f32x4.mul(low_halves(t0, t2), scaleV);
    let s5 = f32x4.mul(high_halves(t0, t2), scaleV);
    let s6 = f32x4.mul(low_halves(t1, t3), scaleV);
    let s7 = f32x4.mul(high_halves(t1, t3), scaleV);
    if (n < TILE) {
      if (n <= 1) s1 = minusInfinity;
      if (n <= 2) s2 = minusInfinity;
      if (n <= 3) s3 = minusInfinity;
      if (n <= 4) s4 = minusInfinity;
      if (n <= 5) s5 = minusInfinity;
      if (n <= 6) s6 = minusInfinity;
      s7 = minusInfinity;
    }

    // Online softmax, one lane per query row.
    const mNew = f32x4.max(m, f32x4.max(f32x4.max(f32x4.max(s0, s1), f32x4.max(s2, s3)), f32x4.max(f32x4.max(s4, s5), f32x4.max(s6, s7))));
    const rescale = !i32x4.all_true(f32x4.eq(mNew, m));
    const corr = exp_f32x4(f32x4.sub(m, mNew)); // 0 on the first step (m = -infinity), 1 in lanes whose max held
    const p0 = exp_f32x4(f32x4.sub(s0, mNew)), p1 = exp_f32x4(f32x4.sub(s1, mNew));
    const p2 = exp_f32x4(f32x4.sub(s2, mNew)), p3 = exp_f32x4(f32x4.sub(s3, mNew));
    const p4 = exp_f32x4(f32x4.sub(s4, mNew)), p5 = exp_f32x4(f32x4.sub(s5, mNew));
    const p6 = exp_f32x4(f32x4.sub(s6, mNew)), p7 = exp_f32x4(f32x4.sub(s7, mNew));
    l = f32x4.add(f32x4.mul(l, corr), f32x4.add(f32x4.add(f32x4.add(p0, p1), f32x4.add(p2, p3)), f32x4.add(f32x4.add(p4, p5), f32x4.add(p6, p7))));
    m = mNew;

    // Values.
    const v0 = vBase + r0, v1 = vBase + r1, v2 = vBase + r2, v3 = vBase + r3;
    const v4 = vBase + r4, v5 = vBase + r5, v6 = vBase + r6, v7 = vBase + r7;
    if (rescale) {
      weigh_blocked(o0, o1, o2, o3, d4, true, corr, v0, v1, v2, v3, v4, v5, v6, v7, p0, p1, p2, p3, p4, p5, p6, p7);
      weigh_natural(o0, o1, o2, o3, rows, d4, headDim, true, corr, v0, v1, v2, v3, v4, v5, v6, v7, p0, p1, p2, p3, p4, p5, p6, p7);
    } else {
      weigh_blocked(o0, o1, o2, o3, d4, false, corr, v0, v1, v2, v3, v4, v5, v6, v7, p0, p1, p2, p3, p4, p5, p6, p7);
      weigh_natural(o0, o1, o2, o3, rows, d4, headDim, false, corr, v0, v1, v2, v3, v4, v5, v6, v7, p0, p1, p2, p3, p4, p5, p6, p7);
    }
  }

  // out = acc * (1 / l), as ggml scales by the reciprocal of the sum; blocks transposed back to rows.
  const inverse = f32x4.div(f32x4.splat(1), l);
  for (let d = 0; d < d4; d += 4) {
    const o = <usize>d << 2;
    const e0 = f32x4.mul(v128.load(o0 + o), inverse); // dimension d, lanes = rows
    const e1 = f32x4.mul(v128.load(o1 + o), inverse);
    const e2 = f32x4.mul(v128.load(o2 + o), inverse);
    const e3 = f32x4.mul(v128.load(o3 + o), inverse);
    const t0 = zip_low(e0, e1), t1 = zip_high(e0, e1), t2 = zip_low(e2, e3), t3 = zip_high(e2, e3);
    v128.store(o0 + o, low_halves(t0, t2));
    v128.store(o1 + o, high_halves(t0, t2));
    v128.store(o2 + o, low_halves(t1, t3));
    v128.store(o3 + o, high_halves(t1, t3));
  }
  for (let d = d4; d < headDim; d++) {
    const o = <usize>d << 2;
    scatter(o0, o1, o2, o3, o, f32x4.mul(gather(o0, o1, o2, o3, o), inverse), rows);
  }
}

/**
 * out[t][h] = softmax_j(q[t][h] . k[j][h] * scale) . v[j][h] over every token j (no mask), for the items [i0, i1)
 * of heads * ceil(tokens / blockRows): item w is head w / blocks, query rows [b * blockRows, (b + 1) * blockRows)
 * with b = w % blocks (see the header). q, k, v, out: [tokens, heads, headDim] f32 (out must not alias q, k or v).
 * No scratch. Split grain 1; blockRows a multiple of 4 (any positive value works, others run slower).
 */
export function attention_dense(q: usize, k: usize, v: usize, out: usize, tokens: i32, heads: i32, headDim: i32, scale: f32, blockRows: i32, i0: i32, i1: i32): void {
  const blocks = (tokens + blockRows - 1) / blockRows;
  for (let w = i0; w < i1; w++) {
    const head = w / blocks;
    const first = (w - head * blocks) * blockRows;
    const end = min(first + blockRows, tokens);
    for (let t = first; t < end; t += GROUP) attend_group(q, k, v, out, tokens, heads, headDim, scale, head, t, min(GROUP, end - t));
  }
}
