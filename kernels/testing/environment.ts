// The one rule for what a test needs and does not have (a fixture file, a WebGPU adapter): under CI=true the test
// fails, elsewhere it is skipped with the reason in its name. It lives below kernels/ so that kernel tests and every
// layer above (engine/testing/fixtures.ts re-exports it with the fixture paths) share it. Plain code: no test-runner
// imports, so bench and script code can use it too.
import { PACKAGE_ROOT } from "../package-root.js";

/** The repository root (the folder holding package.json). */
export const REPOSITORY_ROOT = PACKAGE_ROOT;

/** True when running under CI, where a missing fixture or adapter is an error rather than a reason to skip. */
export const IN_CI = process.env.CI === "true";

/** Whether a group should be skipped: something it needs is missing (`reason`) and this is not CI. */
export function skipOutsideCi(reason: string | undefined): boolean {
  return reason !== undefined && !IN_CI;
}

/** Throws when something a test needs is missing (reached only under CI, where such tests are not skipped). */
export function failIfMissing(reason: string | undefined): void {
  if (reason !== undefined) throw new Error(`${reason}; CI=true, so this fails instead of skipping`);
}

/** A test or group title that says why it is skipped, when it is. */
export function titled(title: string, reason: string | undefined): string {
  return skipOutsideCi(reason) ? `${title} [skipped: ${reason}]` : title;
}
