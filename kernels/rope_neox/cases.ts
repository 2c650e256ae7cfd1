// Conformance cases for rope_neox: tiny heads (stories260K: headDim 8), partial rotary dims, Llama 3 frequency
// factors, large positions, model shapes.
import { type CaseSetup, type KernelCase, randomF32, randomInts } from "../case.js";
import { NO_YARN, type YarnConstants, yarnConstants } from "../rope-frequencies.js";
import { ropeNeoxRef } from "./rope_neox.ref.js";

function ropeCase(rows: number, heads: number, headDim: number, rotaryDim: number, base: number, withFactors: boolean, maxPosition = 4096, freqScale = 1, yarn: YarnConstants = NO_YARN): KernelCase {
  return {
    name: `rope_neox rows=${rows} heads=${heads} headDim=${headDim} rotaryDim=${rotaryDim}${withFactors ? " freqFactors" : ""}${freqScale !== 1 ? ` freqScale=${freqScale}` : ""}${yarn.extFactor !== 0 ? ` yarn=${yarn.corrLow}..${yarn.corrHigh}` : ""}`,
    // Angles are exact f32 iterations; cos/sin of the same f32 angle may differ by an ulp between libms.
    tolerance: 1e-13,
    build(): CaseSetup {
      const x = randomF32(rows * heads * headDim, rows * heads + headDim, 2);
      const positions = randomInts(rows, rows + 1, maxPosition);
      positions[0] = 0;
      const factors = withFactors ? Float32Array.from({ length: rotaryDim / 2 }, (_, i) => 1 + (i % 5) * 1.75) : undefined;
      const thetaScale = Math.fround(Math.pow(base, -2 / rotaryDim));
      const expected = ropeNeoxRef(Float32Array.from(x), positions, factors, rows, heads, headDim, rotaryDim, thetaScale, freqScale, yarn);
      return {
        kernel: "rope_neox",
        buffers: factors ? { x, positions, factors } : { x, positions },
        args: ["x", "positions", factors ? "factors" : 0, rows, heads, headDim, rotaryDim, thetaScale, freqScale, yarn.extFactor, yarn.corrLow, yarn.corrHigh, yarn.mscale],
        count: rows,
        expected: { x: expected },
      };
    },
  };
}

export const cases: KernelCase[] = [
  ropeCase(1, 1, 8, 8, 10000, false), ropeCase(3, 2, 8, 8, 10000, false), ropeCase(5, 3, 16, 12, 10000, false),
  ropeCase(4, 4, 64, 32, 10000, true), ropeCase(1, 16, 128, 128, 1000000, false, 40000), ropeCase(7, 8, 128, 128, 500000, true),
  ropeCase(33, 16, 64, 64, 10000, false),
  // Linear scaling (Gemma 3's global layers: factor 8), and a factor whose reciprocal is not exact in f32.
  ropeCase(9, 4, 128, 128, 1000000, false, 100000, 0.125), ropeCase(5, 2, 64, 64, 10000, true, 4096, Math.fround(1 / 3)),
  // YaRN: gpt-oss (factor 32 from 4096, base 150000, head 64) and a Ministral-like one (factor 16 from 16384, base 1e6).
  ropeCase(11, 4, 64, 64, 150000, false, 131072, Math.fround(1 / 32), yarnConstants({ factor: 32, originalContext: 4096, betaFast: 32, betaSlow: 1, logMultiplier: 0, attnFactor: 1 }, 150000, 64)),
  ropeCase(6, 2, 128, 128, 1000000, false, 262144, Math.fround(1 / 16), yarnConstants({ factor: 16, originalContext: 16384, betaFast: 32, betaSlow: 1, logMultiplier: 1, attnFactor: 1 }, 1000000, 128)),
];
