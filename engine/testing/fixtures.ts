// Locates shared fixtures for tests: under CI a missing fixture is a failure, elsewhere the test is skipped.
import { existsSync } from "node:fs";
import { join } from "node:path";
import { PACKAGE_ROOT, SHARED_ROOT } from "../package-root.js";

/** The repository root (the folder holding package.json). */
export const REPOSITORY_ROOT = PACKAGE_ROOT;

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
