// This loom's version: its package.json's, as /health reports it and updates compare it.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { PACKAGE_ROOT } from "../kernels/package-root.js";

/** The version of the package this process runs from. */
export const LOOM_VERSION: string = (JSON.parse(readFileSync(join(PACKAGE_ROOT, "package.json"), "utf8")) as { version: string }).version;
