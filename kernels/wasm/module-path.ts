// Finds the compiled kernel module, dist/wasm/kernels.wasm under the package root, from this file's location
// (works both for the TypeScript sources run by vitest and for the compiled files under dist/).
import { existsSync } from "node:fs";
import { join } from "node:path";
import { PACKAGE_ROOT } from "../package-root.js";
import { WasmModuleMissingError } from "./errors.js";

/** Path of dist/wasm/kernels.wasm; throws WasmModuleMissingError (telling to run `npm run build:wasm`) if absent. */
export function kernelModulePath(): string {
  const path = join(PACKAGE_ROOT, "dist", "wasm", "kernels.wasm");
  if (!existsSync(path)) throw new WasmModuleMissingError(path);
  return path;
}
