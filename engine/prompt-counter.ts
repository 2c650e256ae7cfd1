// Counts a request's prompt tokens on the calling thread, with the model's tokenizer and chat template and without its
// weights: what admission against token limits needs, without a round trip to the engine thread, which answers only
// between steps (tens of milliseconds under load).
import type { EngineRequest } from "./request.js";
import { openModelSource } from "./model/source.js";
import { type PromptModel, preparePrompt } from "./prompt.js";
import { vocabularySpecFromGguf } from "./tokenizer/gguf.js";
import { vocabularySpecFromHuggingFace } from "./tokenizer/huggingface.js";
import { Tokenizer } from "./tokenizer/tokenizer.js";
import type { VocabularySpec } from "./tokenizer/vocabulary.js";
import { promptVisionOf } from "./vision/clip-config.js";
import type { PromptVision } from "./vision/image-tokens.js";

/**
 * What rendering and tokenizing a model's prompts takes, as plain data that survives msgpack or JSON (typed arrays
 * and maps as arrays): a worker sends it to gateways, which then hash prompts as the worker's cache does.
 */
export interface PromptModelSource {
  vocabulary: Omit<VocabularySpec, "scores" | "tokenTypes" | "strip"> & {
    scores?: number[];
    tokenTypes?: number[];
    strip?: Array<[number, boolean, boolean]>;
  };
  chatTemplate: string | null;
  vocabSize: number;
  /** How an image is written, for a model loaded with a vision projector. */
  vision?: PromptVision;
}

/** The tokenizer and chat template that {@link PromptCounter.readSource}'s data describes, ready to prepare prompts. */
export function promptModelOf(source: PromptModelSource): PromptModel {
  const { strip, ...vocabulary } = source.vocabulary;
  const spec: VocabularySpec = { ...vocabulary, ...(strip ? { strip: new Map(strip.map(([id, lstrip, rstrip]) => [id, { lstrip, rstrip }])) } : {}) };
  return { tokenizer: new Tokenizer(spec), chatTemplate: source.chatTemplate, vocabSize: source.vocabSize, ...(source.vision ? { vision: source.vision } : {}) };
}

/** Prompts whose tokens a counter remembers. */
const RECENT_PROMPTS = 16;

/** A model's prompt counter. */
export class PromptCounter {
  /** The last prompts' tokens, by their input as JSON, oldest first. */
  readonly #recent = new Map<string, ArrayLike<number>>();

  private constructor(private readonly model: PromptModel) {}

  /**
   * Reads the tokenizer and chat template of a GGUF file or Hugging Face directory (not its weights), and how images
   * are written when the model runs with the vision projector `mmproj`.
   */
  static open(path: string, mmproj?: string): PromptCounter {
    return PromptCounter.fromSource(PromptCounter.readSource(path, mmproj));
  }

  /** The tokenizer and chat template of a GGUF file or Hugging Face directory (and `mmproj`'s image shape), as plain data. */
  static readSource(path: string, mmproj?: string): PromptModelSource {
    const source = openModelSource(path);
    const { scores, tokenTypes, strip, ...rest } = source.ggufMetadata ? vocabularySpecFromGguf(source.ggufMetadata, path) : vocabularySpecFromHuggingFace(path);
    const vocabulary: PromptModelSource["vocabulary"] = {
      ...rest,
      ...(scores ? { scores: Array.from(scores) } : {}),
      ...(tokenTypes ? { tokenTypes: Array.from(tokenTypes) } : {}),
      ...(strip ? { strip: [...strip].map(([id, { lstrip, rstrip }]) => [id, lstrip, rstrip] as [number, boolean, boolean]) } : {}),
    };
    return { vocabulary, chatTemplate: source.chatTemplate, vocabSize: source.config.vocab_size, ...(mmproj ? { vision: promptVisionOf(mmproj) } : {}) };
  }

  /** A counter from {@link readSource}'s data (read here, or received from another process). */
  static fromSource(source: PromptModelSource): PromptCounter {
    return new PromptCounter(promptModelOf(source));
  }

  /**
   * The prompt's tokens as the engine renders and tokenizes it, before auto compaction (see count).
   * @throws EngineError as count does.
   */
  tokens(request: EngineRequest, maxTokens: number): ArrayLike<number> {
    return this.#prepare(request, maxTokens);
  }

  /**
   * The prompt's tokens as the engine renders and tokenizes it, before auto compaction (which only removes tokens): an
   * upper bound of the engine's count, equal to it when compaction prunes nothing. Stops counting past `maxTokens`.
   * @throws EngineError as the engine would for a malformed request; "too_long" past `maxTokens`.
   */
  count(request: EngineRequest, maxTokens: number): number {
    return this.#prepare(request, maxTokens).length;
  }

  /**
   * The prompt's tokens, remembered for the last few inputs: a gateway renders each prompt twice, to count it for
   * admission and to hash its blocks for routing, and a 1,000-token prompt takes milliseconds to render and tokenize.
   */
  #prepare(request: EngineRequest, maxTokens: number): ArrayLike<number> {
    let key: string | undefined;
    try {
      // Images are pixels, not worth a JSON key: such prompts are not remembered.
      const input = request.input;
      key = "messages" in input && Array.isArray(input.messages) && input.messages.some((message) => message?.images?.length) ? undefined : JSON.stringify(input);
    } catch {
      key = undefined; // not plain data: not remembered
    }
    const known = key === undefined ? undefined : this.#recent.get(key);
    if (known && known.length <= maxTokens) return known;
    const tokens = preparePrompt(this.model, request.input, undefined, maxTokens).tokens;
    if (key !== undefined) {
      this.#recent.delete(key);
      this.#recent.set(key, tokens);
      if (this.#recent.size > RECENT_PROMPTS) this.#recent.delete(this.#recent.keys().next().value!);
    }
    return tokens;
  }
}
