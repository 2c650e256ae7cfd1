// WebGPU cases for sampling on the device: greedy rows (ties, NaN, an all -Infinity row, an all-NaN row) must give
// exactly the CPU argmax; temperature, top_k, top_p and min_p rows must land on the reference's token for the same
// draw, over a vocabulary-sized row and a grid of draws that covers the whole distribution.
import { randomF32 } from "../case.js";
import type { GpuKernelCase } from "../gpu-case.js";
import { type RowSamplingRef, sampleRowRef } from "./sample.ref.js";

/** Rows as the kernel's RowSampling structs: temperature, top_k, top_p, min_p, random (f32/u32) and the logits row. */
function packSampling(rows: Array<RowSamplingRef & { row: number }>): Uint8Array {
  const bytes = new Uint8Array(rows.length * 24);
  const view = new DataView(bytes.buffer);
  rows.forEach((s, i) => {
    view.setFloat32(i * 24, s.temperature, true);
    view.setUint32(i * 24 + 4, s.topK, true);
    view.setFloat32(i * 24 + 8, s.topP, true);
    view.setFloat32(i * 24 + 12, s.minP, true);
    view.setFloat32(i * 24 + 16, s.random, true);
    view.setUint32(i * 24 + 20, s.row, true);
  });
  return bytes;
}

function sampleCase(name: string, vocab: number, logitRows: Float32Array[], rows: Array<RowSamplingRef & { row: number }>): GpuKernelCase {
  return {
    name: `sample ${name} vocab=${vocab} rows=${rows.length}`,
    tolerance: 0,
    build() {
      const logits = new Float32Array(logitRows.length * vocab);
      logitRows.forEach((row, i) => logits.set(row, i * vocab));
      // The reference sees the f32 draw the kernel reads.
      const expected = Int32Array.from(rows, (s) => sampleRowRef(logitRows[s.row], { ...s, random: Math.fround(s.random) }));
      return {
        shader: { op: "sample" },
        bindings: [{ name: "logits", contents: logits }, { name: "sampling", contents: packSampling(rows) }, { name: "tokens", contents: { bytes: rows.length * 4 } }],
        params: [["u32", vocab]],
        workgroups: [rows.length, 1],
        expected: { tokens: expected },
      };
    },
  };
}

const greedy = (row: number) => ({ temperature: 0, topK: 0, topP: 1, minP: 0, random: 0, row });

function greedyRows(vocab: number): Float32Array[] {
  const plain = randomF32(vocab, vocab, 4);
  const tie = randomF32(vocab, vocab + 1, 4);
  const peak = tie.reduce((a, b) => Math.max(a, b), -Infinity) + 1;
  tie[vocab - 3] = peak;
  tie[vocab >> 1] = peak; // the lower id must win
  const withNaN = randomF32(vocab, vocab + 2, 4);
  for (let i = 0; i < vocab; i += 7) withNaN[i] = Number.NaN;
  withNaN[1] = Number.NaN;
  return [plain, tie, withNaN, new Float32Array(vocab).fill(-Infinity), new Float32Array(vocab).fill(Number.NaN)];
}

/** Logits spread like a language model's: most tokens far below a few likely ones. */
function peakedRow(vocab: number, seed: number): Float32Array {
  const row = randomF32(vocab, seed, 3);
  const boosts = randomF32(24, seed + 1, 1);
  for (let i = 0; i < boosts.length; i++) row[(i * 7919 + seed) % vocab] += 9 + 3 * boosts[i];
  return row;
}

/** Draws (i + 0.5) / count: every part of the distribution is visited. */
const draws = (count: number) => Array.from({ length: count }, (_, i) => (i + 0.5) / count);

const settings: Array<Omit<RowSamplingRef, "random">> = [
  { temperature: 1, topK: 0, topP: 1, minP: 0 },
  { temperature: 0.7, topK: 40, topP: 1, minP: 0 },
  { temperature: 0.8, topK: 0, topP: 0.9, minP: 0 },
  { temperature: 1.3, topK: 20, topP: 0.5, minP: 0 },
  { temperature: 0.6, topK: 0, topP: 1, minP: 0.05 },
  { temperature: 1, topK: 50, topP: 0.95, minP: 0.02 },
];

export const cases: GpuKernelCase[] = [
  sampleCase("greedy", 1000, greedyRows(1000), [0, 1, 2, 3, 4].map(greedy)),
  sampleCase("greedy", 151936, greedyRows(151936).slice(0, 3), [0, 1, 2].map(greedy)),
  ...settings.map((s, i) => {
    const vocab = i % 2 === 0 ? 49152 : 777;
    return sampleCase(`t=${s.temperature} top_k=${s.topK} top_p=${s.topP} min_p=${s.minP}`, vocab, [peakedRow(vocab, 17 + i)],
      draws(64).map((random) => ({ ...s, random, row: 0 })));
  }),
  // Several rows in one dispatch, each its own logits row; the draw at the very top of [0, 1).
  sampleCase("mixed rows", 3000, [peakedRow(3000, 5), peakedRow(3000, 6)], [
    { ...greedy(1) }, { temperature: 0.9, topK: 10, topP: 0.8, minP: 0, random: 0.3, row: 0 },
    { temperature: 1, topK: 0, topP: 1, minP: 0, random: 0.99999994, row: 1 }, { temperature: 2, topK: 3, topP: 1, minP: 0, random: 0.5, row: 1 },
  ]),
  // Nothing with a finite weight: every logit -Infinity, or NaN.
  sampleCase("no finite logit", 300, [new Float32Array(300).fill(-Infinity), new Float32Array(300).fill(Number.NaN)], [
    { temperature: 1, topK: 0, topP: 1, minP: 0, random: 0.5, row: 0 }, { temperature: 1, topK: 0, topP: 1, minP: 0, random: 0.5, row: 1 },
  ]),
];
