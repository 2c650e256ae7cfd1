// Conformance cases for gelu: every half as input (the table's whole domain), odd lengths, values across the half
// range, both cut-offs (+-10) and their edges, in place.
import { type CaseSetup, type KernelCase, randomF32 } from "../case.js";
import { f16ToF32 } from "../formats/f16.js";
import { geluRef } from "./gelu.ref.js";

/** The cut-offs, their neighbours, zeros, tiny values that round to zero or subnormal halves, and past the half range. */
const EDGES = [0, -0, 10, -10, 9.999, -9.999, 10.001, -10.001, 1e-20, -1e-20, 3e-6, -3e-6, 65504, -70000, 70000];

function geluCase(name: string, inputs: () => Float32Array, inPlace = false): KernelCase {
  return {
    name: `gelu ${name}${inPlace ? " in place" : ""}`,
    // The f64 tanh rounds to the correctly rounded f32, as the reference's does: every output matches exactly.
    tolerance: 0,
    build(): CaseSetup {
      const x = inputs();
      const expected = geluRef(x);
      return {
        kernel: "gelu",
        buffers: inPlace ? { x } : { x, out: { bytes: x.length * 4 } },
        args: ["x", inPlace ? "x" : "out", x.length],
        count: x.length,
        expected: inPlace ? { x: expected } : { out: expected },
      };
    },
  };
}

function randomCase(n: number, range: number, inPlace = false): KernelCase {
  return geluCase(`n=${n} range=±${range}`, () => {
    const x = randomF32(n, n + 11, range);
    if (n > EDGES.length) x.set(EDGES);
    return x;
  }, inPlace);
}

/** Every finite half as input: all of ggml's table entries between the cut-offs. */
const everyHalf = () => Float32Array.from({ length: 0x10000 }, (_, bits) => f16ToF32(bits)).filter((v) => Number.isFinite(v));

export const cases: KernelCase[] = [
  geluCase("every finite half", everyHalf),
  randomCase(1, 4), randomCase(7, 4), randomCase(173, 12), randomCase(4304, 6, true), randomCase(3 * 8192 + 5, 30),
];
