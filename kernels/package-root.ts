// Finds the package root (the folder holding package.json) from any file inside it, in sources or in dist/.
// It sits in kernels/, the bottom layer, because the kernels find their own files from it (kernels/<op>/*.wgsl,
// dist/wasm/kernels.wasm); engine, server, bench and scripts import it from here.
import { existsSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

/** The nearest folder at or above `start` holding a package.json. */
export function packageRoot(start = dirname(fileURLToPath(import.meta.url))): string {
  for (let dir = start; ; dir = dirname(dir)) {
    if (existsSync(join(dir, "package.json"))) return dir;
    if (dirname(dir) === dir) throw new Error(`no package.json found above ${start}`);
  }
}

/** The root of this package. */
export const PACKAGE_ROOT = packageRoot();

/** The shared fixtures folder: `LOOM_SHARED_DIR`, else `../shared` beside the checkout. */
export const SHARED_ROOT = process.env.LOOM_SHARED_DIR ?? resolve(PACKAGE_ROOT, "..", "shared");
