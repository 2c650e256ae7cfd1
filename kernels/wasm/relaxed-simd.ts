// Whether this V8 runs WebAssembly relaxed SIMD correctly, turning on its flag where it is only experimental (Node
// 20's V8 11.3 needs --experimental-wasm-relaxed-simd; Node 22 and later run it by default). The flag is
// process-wide, so the worker threads that instantiate the module the main thread compiled accept it too.
// NOTE: accepting the instructions is not enough: Node 20's V8 returns twice the true sum from
// i32x4.relaxed_dot_i8x16_i7x16_add_s. The check therefore runs the one instruction the kernels use,
// i16x8.relaxed_dot_i8x16_i7x16_s, on known inputs and compares the result.
import { setFlagsFromString } from "node:v8";

interface WebAssemblyApi {
  validate(bytes: Uint8Array): boolean;
  Module: new (bytes: Uint8Array) => object;
  Instance: new (module: object) => { exports: Record<string, unknown> };
}
const wasm = (globalThis as unknown as { WebAssembly: WebAssemblyApi }).WebAssembly;

/** a: signed bytes, b: 7-bit bytes (the instruction's contract), spanning both ends of each range. */
const A = [-128, -127, -100, -64, -33, -8, -1, 0, 1, 7, 31, 63, 64, 99, 126, 127];
const B = [127, 0, 1, 126, 64, 63, 2, 100, 127, 5, 99, 33, 127, 17, 88, 3];
const EXPECTED = A.reduce((sum, a, i) => sum + a * B[i], 0);

const byte = (value: number) => value & 0xff;
const SIMD = 0xfd;
const BODY = [
  0x01, 0x01, 0x7b, // one v128 local
  SIMD, 0x0c, ...A.map(byte), // v128.const a
  SIMD, 0x0c, ...B.map(byte), // v128.const b
  SIMD, 0x92, 0x02, // i16x8.relaxed_dot_i8x16_i7x16_s
  SIMD, 0x7e, // i32x4.extadd_pairwise_i16x8_s
  0x22, 0x00, // local.tee 0
  SIMD, 0x1b, 0x00, // i32x4.extract_lane 0
  0x20, 0x00, SIMD, 0x1b, 0x01, 0x6a, // + lane 1
  0x20, 0x00, SIMD, 0x1b, 0x02, 0x6a, // + lane 2
  0x20, 0x00, SIMD, 0x1b, 0x03, 0x6a, // + lane 3
  0x0b, // end
];
/** A module exporting "dot": () -> i32, the lane sum of the relaxed dot of A and B. */
const PROBE = Uint8Array.of(
  0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00, // magic, version 1
  0x01, 0x05, 0x01, 0x60, 0x00, 0x01, 0x7f, // type: () -> i32
  0x03, 0x02, 0x01, 0x00, // one function of that type
  0x07, 0x07, 0x01, 0x03, 0x64, 0x6f, 0x74, 0x00, 0x00, // export "dot"
  0x0a, BODY.length + 2, 0x01, BODY.length, ...BODY, // code
);

function computesCorrectly(): boolean {
  if (!wasm.validate(PROBE)) return false;
  const dot = new wasm.Instance(new wasm.Module(PROBE)).exports.dot as () => number;
  return dot() === EXPECTED;
}

let supported: boolean | undefined;

/**
 * True when modules using relaxed SIMD compile here and its int8 dot product computes exactly, after enabling V8's
 * flag if it was off (checked once per process).
 */
export function relaxedSimdSupported(): boolean {
  if (supported === undefined) {
    if (!wasm.validate(PROBE)) setFlagsFromString("--experimental-wasm-relaxed-simd");
    supported = computesCorrectly();
  }
  return supported;
}
