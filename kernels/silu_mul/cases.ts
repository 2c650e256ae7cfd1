// Conformance cases for silu_mul: odd lengths (scalar tails), a wide input range including saturation.
import { type CaseSetup, type KernelCase, randomF32 } from "../case.js";
import { siluMulRef } from "./silu_mul.ref.js";

function siluCase(n: number, range: number, inPlace = false): KernelCase {
  return {
    name: `silu_mul n=${n} range=±${range}${inPlace ? " in place" : ""}`,
    // f32 exp within ~1 ulp and one division: a few ulp per element.
    tolerance: 1e-12,
    build(): CaseSetup {
      const gate = randomF32(n, n, range);
      const up = randomF32(n, n + 1, 2);
      if (n > 8) gate.set([0, -0, 88, -88, 100, -100, 1e-20, -1e-20]);
      const expected = siluMulRef(gate, up);
      return {
        kernel: "silu_mul",
        buffers: inPlace ? { gate, up } : { gate, up, out: { bytes: n * 4 } },
        args: ["gate", "up", inPlace ? "gate" : "out", n],
        count: n,
        expected: inPlace ? { gate: expected } : { out: expected },
      };
    },
  };
}

export const cases: KernelCase[] = [siluCase(1, 4), siluCase(7, 4), siluCase(173, 12), siluCase(1536, 8, true), siluCase(3 * 8192 + 5, 30)];
