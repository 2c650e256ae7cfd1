// The byte-level BPE pre-tokenizers loom knows, keyed by GGUF `tokenizer.ggml.pre`, with the regexes and flags
// llama.cpp attaches to each name; and the splitting of text into words with them.
import { ModelFileError } from "../model/errors.js";
import { GPT4O_REGEX, TEKKEN_REGEX } from "./case-split-regexes.js";
import { GPT2_REGEX, LLAMA3_REGEX, QWEN2_REGEX, handwrittenSplitterFor, splitHandwritten } from "./split-handwritten.js";
import { collapseText, compileSplitRegex, splitWithRegex, type CompiledSplitRegex } from "./split-regex.js";
import { codepointsOf, wellFormed } from "./unicode.js";

/** How one pre-tokenizer behaves. */
export interface PreTokenizerSpec {
  /** Regexes applied one after another; each splits the pieces the previous one produced. */
  readonly regexes: readonly string[];
  /** Detokenization removes spaces before punctuation and some contractions (llama.cpp's `clean_spaces`). */
  readonly cleanSpaces: boolean;
  /** A word that is itself a vocabulary token is emitted whole, without merges (llama.cpp's `ignore_merges`). */
  readonly ignoreMerges: boolean;
  /** Default for adding BOS when the GGUF file does not say. */
  readonly addBos: boolean;
  /** The vocabulary has no BOS token unless the GGUF file names one. */
  readonly noDefaultBos: boolean;
  /**
   * SentencePiece-style BPE (llama.cpp's `escape_whitespaces` without `byte_encode`): spaces become U+2581 before
   * splitting, merges run over the UTF-8 characters themselves, and bytes no token covers become `<0xXX>` tokens.
   */
  readonly rawUtf8: boolean;
  /** A word made only of newlines that is itself a token is emitted whole, without merges (Gemma 4). */
  readonly wholeNewlineRuns: boolean;
  /** BOS is added even where the GGUF file says not to (llama.cpp's Gemma 4 override). */
  readonly forceAddBos: boolean;
}

const DEFAULT_REGEXES = ["[\\p{P}\\$\\+<=>\\^~\\|]+", GPT2_REGEX, "\\p{N}+", "[0-9][0-9][0-9]"];
const STARCODER_REGEXES = ["\\p{N}", GPT2_REGEX];

function spec(regexes: readonly string[], flags: Partial<Omit<PreTokenizerSpec, "regexes">> = {}): PreTokenizerSpec {
  return {
    regexes, cleanSpaces: true, ignoreMerges: false, addBos: false, noDefaultBos: false, rawUtf8: false, wholeNewlineRuns: false,
    forceAddBos: false, ...flags,
  };
}

const LLAMA3 = spec([LLAMA3_REGEX], { ignoreMerges: true, addBos: true });
const GPT2 = spec([GPT2_REGEX]);
const GPT2_KEEP_SPACES = spec([GPT2_REGEX], { cleanSpaces: false });
const QWEN2 = spec([QWEN2_REGEX], { cleanSpaces: false });
const QWEN2_CLEAN = spec([QWEN2_REGEX]);
const STARCODER = spec(STARCODER_REGEXES);
const STARCODER_KEEP_SPACES = spec(STARCODER_REGEXES, { cleanSpaces: false });
const GPT4O = spec([GPT4O_REGEX], { cleanSpaces: false });

/**
 * Pre-tokenizer names (GGUF `tokenizer.ggml.pre`) and their behaviour, as llama.cpp's llama-vocab.cpp assigns them.
 * Names llama.cpp knows but loom does not yet (DeepSeek, Falcon, Bloom, ...) are rejected on load.
 */
export const PRE_TOKENIZERS: ReadonlyMap<string, PreTokenizerSpec> = new Map([
  ["default", spec(DEFAULT_REGEXES)],
  ...["llama3", "llama-v3", "llama-bpe", "falcon3", "falcon-h1", "pixtral", "midm-2.0", "lfm2", "jina-v5-nano"].map(
    (name) => [name, LLAMA3] as const,
  ),
  ["dbrx", spec([LLAMA3_REGEX])],
  ["smaug-bpe", spec([LLAMA3_REGEX])],
  ["glm4", spec([LLAMA3_REGEX], { noDefaultBos: true })],
  ["chatglm-bpe", spec([LLAMA3_REGEX], { noDefaultBos: true })],
  ...["gpt-2", "phi-2", "jina-es", "jina-de", "gigachat", "jina-v2-es", "jina-v2-de", "a.x-4.0", "mellum", "modern-bert"].map(
    (name) => [name, GPT2] as const,
  ),
  ["mpt", GPT2],
  ["olmo", GPT2],
  ["jais", GPT2],
  ["exaone4", GPT2],
  ["trillion", GPT2_KEEP_SPACES],
  ["granite-docling", GPT2_KEEP_SPACES],
  ...["qwen2", "deepseek-r1-qwen", "kormo", "f2llmv2", "hunyuan", "solar-open"].map((name) => [name, QWEN2] as const),
  ["megrez", QWEN2_CLEAN],
  ["stablelm2", QWEN2_CLEAN],
  ...["starcoder", "refact", "codeshell", "exaone", "minerva-7b", "mellum2"].map((name) => [name, STARCODER] as const),
  ["smollm", STARCODER_KEEP_SPACES],
  ["command-r", STARCODER_KEEP_SPACES],
  // o200k (gpt-oss, Llama 4) and Tekken (Mistral Nemo, Ministral, Mistral 3): see case-split-regexes.ts.
  ...["gpt-4o", "llama4", "kanana2", "talkie", "minimax-m2"].map((name) => [name, GPT4O] as const),
  ["tekken", spec([TEKKEN_REGEX], { cleanSpaces: false, ignoreMerges: true, addBos: true })],
  // Gemma 4: BPE over the whole text (spaces as U+2581), split only into runs of newlines and runs of other characters.
  ["gemma4", spec(["[^\\n]+|[\\n]+"], { rawUtf8: true, wholeNewlineRuns: true, forceAddBos: true })],
]);

/** Looks up a pre-tokenizer by GGUF name; a missing name means "default", as in llama.cpp. */
export function preTokenizerSpec(name: string | undefined, path: string): PreTokenizerSpec {
  const found = PRE_TOKENIZERS.get(name === undefined || name === "" ? "default" : name);
  if (!found) {
    throw new ModelFileError(
      path,
      `pre-tokenizer '${name}' (tokenizer.ggml.pre) is not supported; loom knows: ${[...PRE_TOKENIZERS.keys()].join(", ")}`,
    );
  }
  return found;
}

type Splitter = (codepoints: readonly number[], collapsed: () => string, pieces: readonly number[]) => number[];

/** Splits text into words with a fixed list of regexes; built once per vocabulary. */
export class WordSplitter {
  private readonly steps: Splitter[];

  constructor(readonly regexes: readonly string[]) {
    this.steps = regexes.map((regex): Splitter => {
      const handwritten = handwrittenSplitterFor(regex);
      if (handwritten) return (codepoints, _collapsed, pieces) => splitHandwritten(handwritten, codepoints, pieces);
      const compiled: CompiledSplitRegex = compileSplitRegex(regex);
      return (codepoints, collapsed, pieces) => splitWithRegex(compiled, codepoints, collapsed, pieces);
    });
  }

  /** The words of `text`, in order; their concatenation is `text` (with lone surrogates as U+FFFD). */
  split(text: string): string[] {
    const codepoints = codepointsOf(text);
    let collapsedCache: string | undefined;
    const collapsed = () => (collapsedCache ??= collapseText(codepoints));
    let pieces: number[] = codepoints.length > 0 ? [codepoints.length] : [];
    for (const step of this.steps) pieces = step(codepoints, collapsed, pieces);
    // Cut the well-formed text at the same codepoint boundaries (astral codepoints take two UTF-16 units).
    const source = wellFormed(text);
    const words: string[] = [];
    let codepoint = 0;
    let unit = 0;
    for (const length of pieces) {
      const wordStart = unit;
      for (const end = codepoint + length; codepoint < end; codepoint++) unit += codepoints[codepoint] > 0xffff ? 2 : 1;
      words.push(source.slice(wordStart, unit));
    }
    return words;
  }
}
