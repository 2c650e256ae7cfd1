// Conformance cases for gelu_mul: odd lengths, values across the half range, both cut-offs (+-10) and their edges.
import { type CaseSetup, type KernelCase, randomF32 } from "../case.js";
import { geluMulRef } from "./gelu_mul.ref.js";

function geluCase(n: number, range: number, inPlace = false): KernelCase {
  return {
    name: `gelu_mul n=${n} range=±${range}${inPlace ? " in place" : ""}`,
    // Both roundings to halves absorb the f32 tanh's last-bit differences: all but rare ties match exactly.
    tolerance: 1e-12,
    build(): CaseSetup {
      const gate = randomF32(n, n, range);
      const up = randomF32(n, n + 1, 2);
      if (n > 12) gate.set([0, -0, 10, -10, 9.999, -9.999, 10.001, -10.001, 1e-20, -1e-20, 65504, -70000]);
      const expected = geluMulRef(gate, up);
      return {
        kernel: "gelu_mul",
        buffers: inPlace ? { gate, up } : { gate, up, out: { bytes: n * 4 } },
        args: ["gate", "up", inPlace ? "gate" : "out", n],
        count: n,
        expected: inPlace ? { gate: expected } : { out: expected },
      };
    },
  };
}

export const cases: KernelCase[] = [geluCase(1, 4), geluCase(7, 4), geluCase(173, 12), geluCase(1536, 8, true), geluCase(3 * 8192 + 5, 30)];
