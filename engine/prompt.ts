// Turns a request's input into prompt tokens: a conversation is (optionally) auto-compacted, rendered with the
// model's chat template and tokenized; text is tokenized with the model's special tokens; token ids are checked.
import { chatFormatOf } from "./chat/default-template.js";
import { harmonyMessages, harmonyTools, isHarmonyTemplate } from "./chat/harmony.js";
import type { ChatMessage } from "./chat/messages.js";
import { type PromptImage, type PromptVision, imageTokenIds, markImages, messageImages } from "./vision/image-tokens.js";
import { checkRgbImage } from "./vision/preprocess.js";
import { gemma4Messages, isGemma4Template, withGemma4ModelTurn } from "./chat/gemma4.js";
import { mistralCallLayout, mistralMessages, readsThinkingBlocks } from "./chat/mistral.js";
import { renderChatTemplate } from "./chat/template.js";
import { type CompactionOptions, type CompactionResult, compactConversation } from "./compaction/index.js";
import { EngineError, type EngineInput, type EngineRequest } from "./request.js";
import { OversizedWordError, TokenLimitError } from "./tokenizer/errors.js";
import type { Tokenizer } from "./tokenizer/tokenizer.js";

/** What the prompt step needs of the loaded model. */
export interface PromptModel {
  tokenizer: Tokenizer;
  /** The model's own chat template; without one, conversations get the default (engine/chat/default-template.ts). */
  chatTemplate: string | null;
  vocabSize: number;
  /** Set when the model takes images: how an image is written into the prompt. */
  vision?: PromptVision;
}

/** A prompt ready to run. */
export interface PreparedPrompt {
  /** Token ids; an image's tokens are placeholders (see engine/vision/image-tokens.ts). */
  tokens: number[];
  /** The prompt's images, with where their tokens start; absent without images. */
  images?: PromptImage[];
  compaction?: CompactionResult;
  /** Texts that end the reply like an end-of-generation token (the default chat template's turn markers). */
  endOfTurn?: readonly string[];
}


/** What preparing a request's prompt needs besides the model: the engine's own limits. Plain data: it crosses threads. */
export interface PromptSettings {
  /** The most prompt tokens: the context (or the KV cache, if smaller) less one for the first generated token. */
  limit: number;
  /** Auto compaction as the engine resolved it (requests may turn it off). */
  compaction: CompactionOptions;
}

/**
 * The prompt `request` runs with, as its engine prepares it: rendered, compacted unless the request turns compaction
 * off, tokenized, at most `settings.limit` tokens and not empty. Pure: the engine thread and a WorkerEngine's prompt
 * thread (engine/host/prompt-worker.ts) give the same tokens for the same request.
 * @throws EngineError as {@link preparePrompt}, and for an empty prompt.
 */
export function prepareRequestPrompt(model: PromptModel, request: EngineRequest, settings: PromptSettings): PreparedPrompt {
  const compaction = request.enableAutoCompaction === false ? undefined : settings.compaction;
  const prompt = preparePrompt(model, request.input, compaction, settings.limit);
  if (prompt.tokens.length === 0) throw new EngineError("invalid_request", "the prompt is empty: it must contain at least one token", "input");
  return prompt;
}

/**
 * Renders and tokenizes `input`; throws {@link EngineError} naming the field at fault, or "too_long" once the prompt
 * is certain to exceed `maxTokens`. NOTE: an oversized prompt costs about `maxTokens` tokens of work, not its length
 * (the tokenizer stops at the limit), so a megabyte prompt cannot stall the step loop; compaction counts saturate at
 * the limit too, which keeps its comparisons against the (smaller) budget exact.
 */
export function preparePrompt(model: PromptModel, input: EngineInput, compaction: CompactionOptions | undefined, maxTokens = Number.POSITIVE_INFINITY): PreparedPrompt {
  if (typeof input !== "object" || input === null) throw new EngineError("invalid_request", "input must be an object with messages, text or tokens", "input");
  const tooLong = () => new EngineError("too_long", `the prompt has more than ${maxTokens} tokens, the most this model's context leaves room for (prompt plus at least one generated token)`, "input");
  const encode = (text: string, addSpecial: boolean): number[] => {
    try {
      return model.tokenizer.encode(text, { addSpecial, parseSpecial: true, maxTokens });
    } catch (error) {
      if (error instanceof OversizedWordError) throw new EngineError("too_long", `the prompt cannot be tokenized: ${error.message}`, "input");
      if (error instanceof TokenLimitError) throw tooLong();
      throw error;
    }
  };
  if ("tokens" in input) {
    const tokens = checkTokens(input.tokens, model.vocabSize);
    if (tokens.length > maxTokens) throw tooLong();
    return { tokens };
  }
  if ("text" in input) {
    if (typeof input.text !== "string") throw new EngineError("invalid_request", "input.text must be a string", "input.text");
    return { tokens: encode(input.text, true) };
  }
  if (!("messages" in input) || !Array.isArray(input.messages) || input.messages.length === 0) {
    throw new EngineError("invalid_request", "input must have messages (a non-empty array), text or tokens", "input.messages");
  }
  const format = chatFormatOf(model.chatTemplate);
  const endOfTurn = format.endOfTurn.length > 0 ? format.endOfTurn : undefined;
  // A harmony template (gpt-oss) reads reasoning, calls and their results in its own way (engine/chat/harmony.ts).
  const hasToken = (text: string) => model.tokenizer.tokenId(text) !== undefined;
  const harmony = isHarmonyTemplate(format.template, hasToken);
  // A Mistral template wants 9-character call ids and argument objects (engine/chat/mistral.ts).
  const mistral = !harmony && mistralCallLayout(format.template, hasToken) !== undefined;
  const thinkingBlocks = mistral && readsThinkingBlocks(format.template);
  // Gemma 4's template writes call arguments key by key from an object (engine/chat/gemma4.ts).
  const gemma4 = !harmony && !mistral && isGemma4Template(format.template, hasToken);
  const adapt = (messages: readonly ChatMessage[]) =>
    harmony ? harmonyMessages(messages) : mistral ? mistralMessages(messages, thinkingBlocks) : gemma4 ? gemma4Messages(messages) : messages;
  // A model's own template writes any BOS itself; the default one does not, so its text gets the vocabulary's special
  // tokens as raw text does (llama.cpp tokenizes chat prompts with add_special).
  let images: PromptImage[] | undefined;
  const render = (messages: readonly ChatMessage[]): number[] => {
    const withImages = messageImages(messages);
    if (withImages.length > 0 && !model.vision) {
      throw new EngineError("invalid_request", "this model does not take images (it was loaded without a vision projector: --mmproj)", withImages[0]!.field);
    }
    for (const { image, field } of withImages) {
      try {
        checkRgbImage(image);
      } catch (error) {
        throw new EngineError("invalid_request", `${field}: ${(error as Error).message}`, field);
      }
    }
    // Each image becomes a marker no message can contain; the rendered text is cut there and the image's tokens put in.
    const marked = withImages.length > 0 ? markImages(messages) : { messages, marker: "" };
    const rendered = renderChatTemplate(format.template, adapt(marked.messages), {
      addGenerationPrompt: true,
      bosToken: model.tokenizer.bosId === undefined ? "" : model.tokenizer.tokenText(model.tokenizer.bosId),
      eosToken: model.tokenizer.eosId === undefined ? "" : model.tokenizer.tokenText(model.tokenizer.eosId),
      kwargs: input.templateKwargs,
      tools: harmony && input.tools ? harmonyTools(input.tools) : input.tools,
    });
    const text = gemma4 ? withGemma4ModelTurn(rendered) : rendered;
    if (withImages.length === 0) return encode(text, format.isDefault);
    const pieces = text.split(marked.marker);
    if (pieces.length !== withImages.length + 1) throw new EngineError("invalid_request", "the chat template dropped or repeated an image", "input.messages");
    const vision = model.vision!;
    const tokens = encode(pieces[0]!, format.isDefault);
    const placed: PromptImage[] = [];
    withImages.forEach(({ image }, i) => {
      tokens.push(...encode(vision.begin, false));
      placed.push({ start: tokens.length, image });
      tokens.push(...imageTokenIds(image, vision.tokensPerImage));
      tokens.push(...encode(vision.end, false), ...encode(pieces[i + 1]!, false));
      if (tokens.length > maxTokens) throw tooLong();
    });
    images = placed;
    return tokens;
  };
  /** A count for compaction: exact up to the limit, the limit plus one past it. */
  const saturating = (count: () => number): number => {
    try {
      return count();
    } catch (error) {
      if (error instanceof EngineError && error.kind === "too_long") return maxTokens + 1;
      throw error;
    }
  };
  try {
    if (!compaction) {
      const tokens = render(input.messages);
      return { tokens, endOfTurn, ...(images ? { images } : {}) };
    }
    const countTokens = (messages: readonly ChatMessage[]) => saturating(() => render(messages).length);
    const textTokens = new Map<string, number>();
    const countText = (text: string) => {
      let count = textTokens.get(text);
      if (count === undefined) textTokens.set(text, (count = saturating(() => encode(text, false).length)));
      return count;
    };
    const result = compactConversation(input.messages, compaction, countTokens, countText);
    // Rendered last or now, so `images` is the final prompt's.
    const tokens = render(result.messages);
    return { tokens, compaction: result, endOfTurn, ...(images ? { images } : {}) };
  } catch (error) {
    if (error instanceof EngineError) throw error;
    throw new EngineError("invalid_request", `input.messages: ${(error as Error).message}`, "input.messages", { cause: error });
  }
}

function checkTokens(tokens: unknown, vocabSize: number): number[] {
  if (!Array.isArray(tokens)) throw new EngineError("invalid_request", "input.tokens must be an array of token ids", "input.tokens");
  tokens.forEach((token, index) => {
    if (!Number.isInteger(token) || token < 0 || token >= vocabSize) {
      throw new EngineError("invalid_request", `input.tokens[${index}] is ${JSON.stringify(token)}; token ids are integers in 0..${vocabSize - 1}`, "input.tokens");
    }
  });
  return [...tokens] as number[];
}
