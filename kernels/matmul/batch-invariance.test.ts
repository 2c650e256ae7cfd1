// Batch invariance of every matmul kernel: each row of a batched y = x W^T must be bit for bit the row computed
// alone (rows = 1, the decode path), for every batch size, since the serving engine batches sequences together
// and a sequence's tokens must not depend on its neighbours. Float kernels use k not a multiple of 8 (vector and
// scalar tails), quantized ones several block counts; n odd, and wide enough to cross a weight chunk.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { WasmRuntime } from "../wasm/runtime.js";
import { randomBf16, randomF16, randomF32, randomKQuant, randomLegacyQuant, randomMxfp4, randomQ4_0, randomQ8_0 } from "../case.js";
import { quantizeQ8_0 } from "../formats/q8_0.js";
import { quantizeQ8_1 } from "../formats/q8_1.js";
import { widenedQ6_K } from "../formats/q6_k-bytes.js";
import { quantizeQ8_K } from "../formats/q8_k.js";
import { widenQ8_0 } from "../quantize_q8_0/quantize_q8_0.ref.js";
import { repackX4Ref } from "../repack_x4/repack_x4.ref.js";

let runtime: WasmRuntime;
beforeAll(async () => { runtime = await WasmRuntime.create({ threads: 2 }); });
afterAll(async () => { await runtime.dispose(); });

type Kind = "f32" | "f16" | "bf16" | "q8_0" | "q4_0" | "q8_0x4" | "q4_0x4" | "q4_1" | "q5_0" | "q5_1" | "mxfp4";
const BATCHES = [1, 2, 3, 4, 5, 8, 17, 32];
const asBytes = (a: ArrayBufferView) => new Uint8Array(a.buffer, a.byteOffset, a.byteLength);

/** The weights of `kind` ([n, k], as the kernel reads them) and x rows ([rows, k] f32, or Q8_0 blocks). */
function inputs(kind: Kind, rows: number, k: number, n: number): { w: Uint8Array; x: Uint8Array; xRowBytes: number } {
  const scale = 1 / Math.sqrt(k);
  if (kind === "f32" || kind === "f16" || kind === "bf16") {
    const w = kind === "f32" ? randomF32(n * k, 5, scale) : kind === "f16" ? randomF16(n * k, 5, scale) : randomBf16(n * k, 5, scale);
    return { w: asBytes(w), x: asBytes(randomF32(rows * k, 6 + rows)), xRowBytes: k * 4 };
  }
  const blocks = k / 32;
  if (kind === "q4_1" || kind === "q5_0" || kind === "q5_1") {
    // Q5_0 reads Q8_0 activations, Q4_1 and Q5_1 Q8_1 (36-byte blocks), as llama.cpp's CPU backend.
    const x = randomF32(rows * k, 6 + rows, 2);
    return kind === "q5_0"
      ? { w: randomLegacyQuant(kind, n * blocks, 5), x: quantizeQ8_0(x), xRowBytes: blocks * 34 }
      : { w: randomLegacyQuant(kind, n * blocks, 5), x: quantizeQ8_1(x), xRowBytes: blocks * 36 };
  }
  if (kind === "mxfp4") {
    // MXFP4 reads Q8_0 activations (ggml_vec_dot_mxfp4_q8_0).
    return { w: randomMxfp4(n * blocks, 5), x: quantizeQ8_0(randomF32(rows * k, 6 + rows, 2)), xRowBytes: blocks * 34 };
  }
  const q8 = kind.startsWith("q8");
  const raw = q8 ? randomQ8_0(n * blocks, 5) : randomQ4_0(n * blocks, 5);
  const w = kind.endsWith("x4") ? repackX4Ref(raw, n, k, q8 ? 32 : 16) : raw;
  return { w, x: randomQ8_0(rows * blocks, 6 + rows), xRowBytes: blocks * 34 };
}

/** Row indices whose batched result differs in any bit from the row computed alone. */
function mismatchedRows(kind: Kind, rows: number, k: number, n: number): number[] {
  const mark = runtime.mark();
  try {
    const { w, x, xRowBytes } = inputs(kind, rows, k, n);
    const wp = runtime.upload(w);
    const xp = runtime.upload(x);
    const batched = runtime.alloc(rows * n * 4);
    const alone = runtime.alloc(rows * n * 4);
    const kernel = `matmul_${kind}`;
    const grain = kind.endsWith("x4") ? 4 : 1;
    runtime.parallel(kernel, [xp, wp, batched, rows, k, n], n, grain);
    for (let t = 0; t < rows; t++) runtime.parallel(kernel, [xp + t * xRowBytes, wp, alone + t * n * 4, 1, k, n], n, grain);
    const a = runtime.u8(batched, rows * n * 4);
    const b = runtime.u8(alone, rows * n * 4);
    const bad: number[] = [];
    for (let t = 0; t < rows; t++) {
      for (let i = t * n * 4; i < (t + 1) * n * 4; i++) {
        if (a[i] !== b[i]) {
          bad.push(t);
          break;
        }
      }
    }
    // Guard against comparing two untouched buffers: every output must be a finite number.
    expect(runtime.f32(batched, rows * n).every(Number.isFinite)).toBe(true);
    return bad;
  } finally {
    runtime.release(mark);
  }
}

const shapes: Record<Kind, Array<[k: number, n: number]>> = {
  f32: [[36, 37], [100, 21], [576, 300]],
  f16: [[36, 37], [100, 21], [576, 300]],
  bf16: [[36, 37], [100, 21], [576, 300]],
  q8_0: [[32, 37], [96, 21], [576, 300]],
  q4_0: [[32, 37], [96, 21], [576, 300]],
  q8_0x4: [[32, 37], [96, 21], [576, 300]],
  q4_0x4: [[32, 37], [96, 21], [576, 300]],
  q4_1: [[32, 37], [96, 21], [896, 300]],
  q5_0: [[32, 37], [96, 21], [1152, 300]],
  q5_1: [[32, 37], [96, 21], [896, 300]],
  mxfp4: [[32, 37], [96, 21], [2880, 300]],
};

describe("matmul batch invariance", () => {
  for (const [kind, kindShapes] of Object.entries(shapes) as Array<[Kind, Array<[number, number]>]>) {
    for (const [k, n] of kindShapes) {
      it(`matmul_${kind} k=${k} n=${n}: rows of batches ${BATCHES.join(", ")} equal rows computed alone, bit for bit`, () => {
        for (const rows of BATCHES) expect(mismatchedRows(kind, rows, k, n), `batch of ${rows}`).toEqual([]);
      });
    }
  }
});

// The wide Q8_0 path (quantize_q8_0_wide + matmul_q8_0_wide) replaces matmul_q8_0 in the runner: its rows, batched
// and alone, must be matmul_q8_0's bit for bit, so tokens do not change with it.
describe("matmul_q8_0_wide", () => {
  for (const [k, n] of [[32, 37], [96, 21], [576, 300]] as const) {
    it(`k=${k} n=${n}: batches of ${BATCHES.join(", ")} equal matmul_q8_0 on the same quants, bit for bit`, () => {
      for (const rows of BATCHES) {
        const mark = runtime.mark();
        try {
          const xq = randomQ8_0(rows * (k / 32), 6 + rows);
          const wp = runtime.upload(randomQ8_0(n * (k / 32), 5));
          const xp = runtime.upload(xq);
          const xw = runtime.upload(widenQ8_0(xq, rows, k));
          const narrow = runtime.alloc(rows * n * 4);
          const wide = runtime.alloc(rows * n * 4);
          runtime.parallel("matmul_q8_0", [xp, wp, narrow, rows, k, n], n);
          runtime.parallel("matmul_q8_0_wide", [xw, wp, wide, rows, k, n], n);
          expect(runtime.f32(wide, rows * n).every(Number.isFinite)).toBe(true);
          expect(Buffer.from(runtime.u8(wide, rows * n * 4)).equals(Buffer.from(runtime.u8(narrow, rows * n * 4))), `batch of ${rows}`).toBe(true);
        } finally {
          runtime.release(mark);
        }
      }
    });
  }
});

// The K-quant kernels against Q8_K activations: batched rows (the four-token tile, and the rows left over past a
// multiple of four) equal rows computed alone, and Q6_K widened at load (matmul_q6_k_bytes, what the runner uses)
// equals matmul_q6_k on the same weights, bit for bit, so widening does not change a token.
describe("K-quant matmuls", () => {
  type KQuant = "q4_k" | "q5_k" | "q6_k" | "q6_k_bytes";
  const run = (kernel: string, w: Uint8Array, xq: Uint8Array, rows: number, k: number, n: number, alone: boolean): Uint8Array => {
    const mark = runtime.mark();
    try {
      const wp = runtime.upload(w);
      const xp = runtime.upload(xq);
      const y = runtime.alloc(rows * n * 4);
      const xRowBytes = (k / 256) * 292;
      if (alone) for (let t = 0; t < rows; t++) runtime.parallel(kernel, [xp + t * xRowBytes, wp, y + t * n * 4, 1, k, n], n);
      else runtime.parallel(kernel, [xp, wp, y, rows, k, n], n);
      expect(runtime.f32(y, rows * n).every(Number.isFinite)).toBe(true);
      return runtime.u8(y, rows * n * 4).slice();
    } finally {
      runtime.release(mark);
    }
  };
  for (const kind of ["q4_k", "q5_k", "q6_k", "q6_k_bytes"] as const satisfies readonly KQuant[]) {
    for (const [k, n] of [[256, 37], [768, 21], [1024, 300]] as const) {
      it(`matmul_${kind} k=${k} n=${n}: batches of ${BATCHES.join(", ")} equal rows alone${kind === "q6_k_bytes" ? " and matmul_q6_k" : ""}, bit for bit`, () => {
        const stored = randomKQuant(kind === "q6_k_bytes" ? "q6_k" : kind, n * (k / 256), 5);
        const w = kind === "q6_k_bytes" ? widenedQ6_K(stored) : stored;
        for (const rows of BATCHES) {
          const xq = quantizeQ8_K(randomF32(rows * k, 6 + rows, 2));
          const batched = run(`matmul_${kind}`, w, xq, rows, k, n, false);
          expect(Buffer.from(batched).equals(Buffer.from(run(`matmul_${kind}`, w, xq, rows, k, n, true))), `batch of ${rows}`).toBe(true);
          if (kind === "q6_k_bytes") expect(Buffer.from(batched).equals(Buffer.from(run("matmul_q6_k", stored, xq, rows, k, n, false))), `batch of ${rows}`).toBe(true);
        }
      });
    }
  }
});
