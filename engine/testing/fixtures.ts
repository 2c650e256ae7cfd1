// Locates shared fixtures for tests: under CI a missing fixture is a failure, elsewhere the test is skipped.
import { existsSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

/** The nearest folder at or above `start` holding a package.json: the same from sources and from dist/. */
function packageRoot(start: string): string {
  for (let dir = start; ; dir = dirname(dir)) {
    if (existsSync(join(dir, "package.json"))) return dir;
    if (dirname(dir) === dir) return start;
  }
}

/** The repository root (the folder holding package.json). */
export const REPOSITORY_ROOT = packageRoot(dirname(fileURLToPath(import.meta.url)));

/** The shared fixtures folder beside the repository checkout. */
export const SHARED_ROOT = process.env.LOOM_SHARED_DIR ?? resolve(REPOSITORY_ROOT, "..", "shared");

/**
 * Resolves a fixture under ../shared. Returns undefined when it is missing outside CI (callers skip);
 * under CI=true a missing fixture throws so the run fails instead of silently skipping.
 */
export function sharedFixture(relativePath: string): string | undefined {
  const path = join(SHARED_ROOT, relativePath);
  if (existsSync(path)) return path;
  if (process.env.CI === "true") throw new Error(`required fixture missing under CI: ${path}`);
  console.warn(`skipping: fixture ${path} not found`);
  return undefined;
}
