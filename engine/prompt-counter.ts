// Counts a request's prompt tokens on the calling thread, with the model's tokenizer and chat template and without its
// weights: what admission against token limits needs, without a round trip to the engine thread, which answers only
// between steps (tens of milliseconds under load).
import type { EngineRequest } from "./request.js";
import { openModelSource } from "./model/source.js";
import { type PromptModel, preparePrompt } from "./prompt.js";
import { tokenizerFromGguf } from "./tokenizer/gguf.js";
import { tokenizerFromHuggingFace } from "./tokenizer/huggingface.js";

/** A model's prompt counter. */
export class PromptCounter {
  private constructor(private readonly model: PromptModel) {}

  /** Reads the tokenizer and chat template of a GGUF file or Hugging Face directory (not its weights). */
  static open(path: string): PromptCounter {
    const source = openModelSource(path);
    const tokenizer = source.ggufMetadata ? tokenizerFromGguf(source.ggufMetadata, path) : tokenizerFromHuggingFace(path);
    return new PromptCounter({ tokenizer, chatTemplate: source.chatTemplate, vocabSize: source.config.vocab_size });
  }

  /**
   * The prompt's tokens as the engine renders and tokenizes it, before auto compaction (which only removes tokens): an
   * upper bound of the engine's count, equal to it when compaction prunes nothing. Stops counting past `maxTokens`.
   * @throws EngineError as the engine would for a malformed request; "too_long" past `maxTokens`.
   */
  count(request: EngineRequest, maxTokens: number): number {
    return preparePrompt(this.model, request.input, undefined, maxTokens).tokens.length;
  }
}
