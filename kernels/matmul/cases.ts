// Conformance cases for the matmul kernels: every weight type, tiny and odd shapes, the real model shapes
// (576x1536, 1024x3072, 2048x8192, vocabulary-sized n), and 1 to 16 token rows; K-quants against Q8_K activations.
import { GgmlType } from "../formats/types.js";
import { type KernelCase, random, randomBf16, randomF16, randomF32, randomKQuant, randomLegacyQuant, randomMxfp4, randomQ4_0, randomQ8_0 } from "../case.js";
import { quantizeQ8_0 } from "../formats/q8_0.js";
import { quantizeQ8_1 } from "../formats/q8_1.js";
import { quantizeQ8_K } from "../formats/q8_k.js";
import { widenedQ6_K } from "../formats/q6_k-bytes.js";
import { widenQ8_0 } from "../quantize_q8_0/quantize_q8_0.ref.js";
import { repackX4Ref } from "../repack_x4/repack_x4.ref.js";
import { matmulFloatRef, matmulKQuantRef, matmulLegacyRef, matmulMxfp4Ref, matmulQuantRef } from "./matmul.ref.js";

type FloatType = "f32" | "f16" | "bf16";
type QuantType = "q8_0" | "q4_0" | "q8_0x4" | "q4_0x4";

const GGML_TYPES: Record<FloatType, GgmlType> = { f32: GgmlType.F32, f16: GgmlType.F16, bf16: GgmlType.BF16 };

/** Weights of a float type as raw bytes, values of order 1/sqrt(k) like real layers. */
function floatWeights(type: FloatType, count: number, seed: number, scale: number): Uint8Array {
  const values = type === "f32" ? randomF32(count, seed, scale) : type === "f16" ? randomF16(count, seed, scale) : randomBf16(count, seed, scale);
  return new Uint8Array(values.buffer);
}

function floatCase(type: FloatType, rows: number, k: number, n: number): KernelCase {
  return {
    name: `matmul_${type} rows=${rows} k=${k} n=${n}`,
    tolerance: 1e-12,
    build() {
      const x = randomF32(rows * k, 1 + rows + k);
      const w = floatWeights(type, n * k, 7 + n, 1 / Math.sqrt(k));
      return {
        kernel: `matmul_${type}`,
        buffers: { x, w, y: { bytes: rows * n * 4 } },
        args: ["x", "w", "y", rows, k, n],
        count: n,
        expected: { y: matmulFloatRef(x, GGML_TYPES[type], w, rows, k, n) },
      };
    },
  };
}

function quantCase(type: QuantType, rows: number, k: number, n: number): KernelCase {
  const base = type.startsWith("q8_0") ? "q8_0" : "q4_0";
  const packed = type.endsWith("x4");
  return {
    name: `matmul_${type} rows=${rows} k=${k} n=${n}`,
    // Integer block sums are exact; only the f32 accumulation of scaled block sums rounds.
    tolerance: 1e-12,
    build() {
      const xq = randomQ8_0(rows * (k / 32), 3 + rows + k);
      const w = base === "q8_0" ? randomQ8_0(n * (k / 32), 11 + n) : randomQ4_0(n * (k / 32), 11 + n);
      return {
        kernel: `matmul_${type}`,
        buffers: { xq, w: packed ? repackX4Ref(w, n, k, base === "q8_0" ? 32 : 16) : w, y: { bytes: rows * n * 4 } },
        args: ["xq", "w", "y", rows, k, n],
        count: n,
        grain: packed ? 4 : 1,
        expected: { y: matmulQuantRef(xq, w, base, rows, k, n) },
      };
    },
  };
}

/** matmul_q8_0_wide: Q8_0 weights against wide activations; the expectation is matmul_q8_0's. */
function wideCase(rows: number, k: number, n: number): KernelCase {
  return {
    name: `matmul_q8_0_wide rows=${rows} k=${k} n=${n}`,
    tolerance: 1e-12,
    build() {
      const xq = randomQ8_0(rows * (k / 32), 3 + rows + k);
      const w = randomQ8_0(n * (k / 32), 11 + n);
      return {
        kernel: "matmul_q8_0_wide",
        buffers: { xw: widenQ8_0(xq, rows, k), w, y: { bytes: rows * n * 4 } },
        args: ["xw", "w", "y", rows, k, n],
        count: n,
        expected: { y: matmulQuantRef(xq, w, "q8_0", rows, k, n) },
      };
    },
  };
}

type LegacyType = "q4_1" | "q5_0" | "q5_1";

/** Q4_1 / Q5_1 against Q8_1 activations, Q5_0 against Q8_0, as llama.cpp's CPU backend pairs them. */
function legacyCase(type: LegacyType, rows: number, k: number, n: number): KernelCase {
  return {
    name: `matmul_${type} rows=${rows} k=${k} n=${n}`,
    // Integer block sums are exact; only the f32 accumulation of scaled block sums (and min terms) rounds.
    tolerance: 1e-12,
    build() {
      const x = randomF32(rows * k, 3 + rows + k, 2);
      const xq = type === "q5_0" ? quantizeQ8_0(x) : quantizeQ8_1(x);
      const w = randomLegacyQuant(type, n * (k / 32), 11 + n);
      return {
        kernel: `matmul_${type}`,
        buffers: { xq, w, y: { bytes: rows * n * 4 } },
        args: ["xq", "w", "y", rows, k, n],
        count: n,
        expected: { y: matmulLegacyRef(xq, w, type, rows, k, n) },
      };
    },
  };
}

/**
 * MXFP4 against Q8_0 activations (ggml_vec_dot_mxfp4_q8_0). Exponent extremes: "low" gives every block e 0, 1 or 2
 * (E8M0_half's f32 subnormal scales, 0x00200000 << e, and subnormal products); "high" e 253, 254 or 255 with the
 * activation scales set to the smallest f16 subnormals, so that 2^127-scaled blocks stay finite.
 */
function mxfp4Case(rows: number, k: number, n: number, exponents?: "low" | "high"): KernelCase {
  return {
    name: `matmul_mxfp4 rows=${rows} k=${k} n=${n}${exponents ? ` e=${exponents === "low" ? "0,1,2" : "253,254,255"}` : ""}`,
    // The reference rounds every product and sum to f32 in the kernel's order: byte-identical.
    tolerance: 0,
    build() {
      const xq = quantizeQ8_0(randomF32(rows * k, 3 + rows + k, 2));
      if (exponents === "high") {
        const next = random(rows + k + n);
        for (let b = 0; b < xq.length / 34; b++) { xq[b * 34] = 1 + Math.floor(next() * 7); xq[b * 34 + 1] = 0; }
      }
      const w = randomMxfp4(n * (k / 32), 11 + n, true, exponents === "low" ? [0, 1, 2] : exponents === "high" ? [253, 254, 255] : undefined);
      return {
        kernel: "matmul_mxfp4",
        buffers: { xq, w, y: { bytes: rows * n * 4 } },
        args: ["xq", "w", "y", rows, k, n],
        count: n,
        expected: { y: matmulMxfp4Ref(xq, w, rows, k, n) },
      };
    },
  };
}

type KQuantType = "q4_k" | "q5_k" | "q6_k";

/** q6_k_bytes: Q6_K weights widened as the runner does at load; the expectation is matmul_q6_k's. */
function kQuantCase(type: KQuantType | "q6_k_bytes", rows: number, k: number, n: number): KernelCase {
  const stored = type === "q6_k_bytes" ? "q6_k" : type;
  return {
    name: `matmul_${type} rows=${rows} k=${k} n=${n}`,
    // Integer super-block sums are exact; only the f32 accumulation of scaled sums rounds.
    tolerance: 1e-12,
    build() {
      const xq = quantizeQ8_K(randomF32(rows * k, 5 + rows + k, 2));
      const w = randomKQuant(stored, n * (k / 256), 13 + n);
      return {
        kernel: `matmul_${type}`,
        buffers: { xq, w: type === "q6_k_bytes" ? widenedQ6_K(w) : w, y: { bytes: rows * n * 4 } },
        args: ["xq", "w", "y", rows, k, n],
        count: n,
        expected: { y: matmulKQuantRef(xq, w, stored, rows, k, n) },
      };
    },
  };
}

const floatShapes: Array<[number, number, number]> = [
  [1, 8, 3], [1, 172, 7], [3, 172, 5], [2, 13, 9], [5, 64, 33], [1, 576, 1536], [16, 576, 1536], [3, 1024, 3072],
];
const quantShapes: Array<[number, number, number]> = [
  [1, 32, 1], [2, 64, 5], [5, 96, 13], [3, 160, 10], [1, 576, 1536], [16, 576, 1536], [1, 1024, 3072], [5, 1024, 3072],
  [1, 2048, 8192], [1, 64, 151936],
];

// K-quant rows are whole super-blocks (k a multiple of 256); n and the token count need not be multiples of 4.
const kQuantShapes: Array<[number, number, number]> = [
  [1, 256, 1], [2, 512, 5], [5, 768, 13], [4, 256, 7], [3, 1280, 10], [1, 1024, 3072], [5, 1024, 3072], [9, 3072, 1024],
  [16, 1024, 3072],
  [1, 2048, 8192], [1, 256, 151936],
];

export const cases: KernelCase[] = [
  ...(["f32", "f16", "bf16"] as const).flatMap((type) => floatShapes.map(([rows, k, n]) => floatCase(type, rows, k, n))),
  floatCase("f32", 1, 2048, 8192),
  floatCase("f16", 2, 2048, 8192),
  ...(["q8_0", "q4_0", "q8_0x4", "q4_0x4"] as const).flatMap((type) => quantShapes.map(([rows, k, n]) => quantCase(type, rows, k, n))),
  ...(["q4_1", "q5_0", "q5_1"] as const).flatMap((type) => [...quantShapes, [4, 896, 4864], [9, 1152, 300], [16, 896, 128], [7, 64, 5]].map(([rows, k, n]) => legacyCase(type, rows, k, n))),
  ...[...quantShapes, [4, 96, 7], [8, 576, 300], [7, 64, 5]].map(([rows, k, n]) => wideCase(rows, k, n)),
  ...[...quantShapes, [4, 2880, 2880], [9, 2880, 300], [16, 896, 128], [7, 64, 5]].map(([rows, k, n]) => mxfp4Case(rows, k, n)),
  ...((["low", "high"] as const).flatMap((range) => [[1, 128, 37], [6, 128, 21]].map(([rows, k, n]) => mxfp4Case(rows, k, n, range)))),
  ...(["q4_k", "q5_k", "q6_k", "q6_k_bytes"] as const).flatMap((type) => kQuantShapes.map(([rows, k, n]) => kQuantCase(type, rows, k, n))),
];
