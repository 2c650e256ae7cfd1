// Conformance cases for add, mul, scale and add_bias: exact f32 arithmetic, so byte-identical.
import { type CaseSetup, type KernelCase, randomF32 } from "../case.js";
import { addRef, mulRef, scaleRef } from "./add.ref.js";

function binaryCase(kernel: "add" | "mul", n: number, inPlace = false): KernelCase {
  return {
    name: `${kernel} n=${n}${inPlace ? " in place" : ""}`,
    tolerance: 0,
    build(): CaseSetup {
      const a = randomF32(n, n, 10);
      const b = randomF32(n, n + 7, 10);
      const expected = kernel === "add" ? addRef(a, b) : mulRef(a, b);
      return {
        kernel,
        buffers: inPlace ? { a, b } : { a, b, out: { bytes: n * 4 } },
        args: ["a", "b", inPlace ? "a" : "out"],
        count: n,
        expected: inPlace ? { a: expected } : { out: expected },
      };
    },
  };
}

function scaleCase(n: number): KernelCase {
  return {
    name: `scale n=${n}`,
    tolerance: 0,
    build(): CaseSetup {
      const a = randomF32(n, n, 10);
      return { kernel: "scale", buffers: { a, out: { bytes: n * 4 } }, args: ["a", 0.1, "out"], count: n, expected: { out: scaleRef(a, 0.1) } };
    },
  };
}

/** add_bias: a bias row added to each of `rows` rows of n (threads split the rows). */
function biasCase(rows: number, n: number): KernelCase {
  return {
    name: `add_bias rows=${rows} n=${n}`,
    tolerance: 0,
    build(): CaseSetup {
      const y = randomF32(rows * n, rows + n, 10);
      const bias = randomF32(n, n + 3, 10);
      const expected = Float32Array.from(y, (value, i) => Math.fround(value + bias[i % n]!));
      return { kernel: "add_bias", buffers: { y, bias }, args: ["y", "bias", n], count: rows, expected: { y: expected } };
    },
  };
}

export const cases: KernelCase[] = [
  biasCase(1, 7), biasCase(5, 2880), biasCase(17, 33),
  binaryCase("add", 1), binaryCase("add", 7), binaryCase("add", 1024, true), binaryCase("add", 16 * 576 + 3),
  binaryCase("mul", 5), binaryCase("mul", 1031, true), scaleCase(3), scaleCase(4099),
];
