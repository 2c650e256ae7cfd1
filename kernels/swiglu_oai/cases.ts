// Conformance cases for swiglu_oai: odd lengths (scalar tails), inputs on both sides of the limits, in place.
import { type CaseSetup, type KernelCase, randomF32 } from "../case.js";
import { swigluOaiRef } from "./swiglu_oai.ref.js";

/** gpt-oss's constants (llama.cpp's LLM_FFN_SWIGLU_OAI_MOE). */
const ALPHA = Math.fround(1.702);
const LIMIT = 7;

function swigluCase(n: number, range: number, inPlace = false): KernelCase {
  return {
    name: `swiglu_oai n=${n} range=±${range}${inPlace ? " in place" : ""}`,
    // f32 exp within ~1 ulp, one division and two products: a few ulp per element.
    tolerance: 1e-12,
    build(): CaseSetup {
      const gate = randomF32(n, n + 5, range);
      const up = randomF32(n, n + 6, range);
      if (n > 10) {
        gate.set([0, -0, LIMIT, -LIMIT, 7.5, -50, 100, -100, 1e-20, -1e-20]);
        up.set([LIMIT, -LIMIT, 8, -8, 0, -0, 1e30, -1e30, 6.99, -7.01]);
      }
      const expected = swigluOaiRef(gate, up, ALPHA, LIMIT);
      return {
        kernel: "swiglu_oai",
        buffers: inPlace ? { gate, up } : { gate, up, out: { bytes: n * 4 } },
        args: ["gate", "up", inPlace ? "gate" : "out", n, ALPHA, LIMIT],
        count: n,
        expected: inPlace ? { gate: expected } : { out: expected },
      };
    },
  };
}

export const cases: KernelCase[] = [swigluCase(1, 4), swigluCase(7, 10), swigluCase(173, 12), swigluCase(2880, 9, true), swigluCase(3 * 2880 + 3, 30)];
