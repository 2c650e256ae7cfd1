// Finds the compiled kernel modules under dist/wasm/ of the package root, from this file's location (works both for
// the TypeScript sources run by vitest and for the compiled files under dist/): kernels.wasm (plain SIMD) and
// kernels-relaxed.wasm (relaxed SIMD), both built by `npm run build:wasm` from the same sources.
import { existsSync } from "node:fs";
import { join } from "node:path";
import { PACKAGE_ROOT } from "../package-root.js";
import { WasmModuleMissingError } from "./errors.js";

/** The two builds of the kernels: plain 128-bit SIMD, and with relaxed SIMD's int8 dot products. */
export type SimdLevel = "plain" | "relaxed";

/** Path of the kernel module of `level`; throws WasmModuleMissingError (telling to run `npm run build:wasm`) if absent. */
export function kernelModulePath(level: SimdLevel = "plain"): string {
  const path = join(PACKAGE_ROOT, "dist", "wasm", level === "relaxed" ? "kernels-relaxed.wasm" : "kernels.wasm");
  if (!existsSync(path)) throw new WasmModuleMissingError(path);
  return path;
}
