// Finds the compiled kernel module, dist/wasm/kernels.wasm under the package root, from this file's location
// (works both for the TypeScript sources run by vitest and for the compiled files under dist/).
import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { WasmModuleMissingError } from "./errors.js";

/** The package root: the nearest folder at or above `start` holding a package.json. */
export function packageRoot(start = dirname(fileURLToPath(import.meta.url))): string {
  for (let dir = start; ; dir = dirname(dir)) {
    if (existsSync(join(dir, "package.json"))) return dir;
    if (dirname(dir) === dir) throw new Error(`no package.json found above ${start}`);
  }
}

/** Path of dist/wasm/kernels.wasm; throws WasmModuleMissingError (telling to run `npm run build:wasm`) if absent. */
export function kernelModulePath(): string {
  const path = join(packageRoot(), "dist", "wasm", "kernels.wasm");
  if (!existsSync(path)) throw new WasmModuleMissingError(path);
  return path;
}
