// Tokenizing and detokenizing on request (a server's POST /tokenize and /detokenize): a text, with or without the
// model's special tokens, or a conversation rendered with the chat template as submit renders it; token ids back to
// text, with each token's own bytes. Pure functions of a prompt model, so that the engine thread, a WorkerEngine's
// prompt thread and a gateway's workers all answer the same.
import type { ChatMessage } from "./chat/messages.js";
import { type PromptModel, type PromptSettings, prepareRequestPrompt } from "./prompt.js";
import { EngineError } from "./request.js";
import { TokenLimitError } from "./tokenizer/errors.js";

/** Most tokens one tokenize request may produce (its body is bounded before: this bounds the work). */
export const MAX_TOKENIZE_TOKENS = 1 << 20;

/**
 * What to tokenize: a text (`addSpecial`: the BOS/EOS the model asks for, default false; `parseSpecial`: control
 * tokens' text such as `<|im_start|>` read as those tokens, default true, as llama.cpp's server reads them), or a
 * conversation rendered with the model's chat template and its generation prompt, exactly as submit renders it (no
 * auto compaction: a conversation over the context is "too_long").
 */
export type TokenizeRequest =
  | { text: string; addSpecial?: boolean; parseSpecial?: boolean }
  | { messages: ChatMessage[]; tools?: unknown[]; templateKwargs?: Record<string, unknown> };

/** Token ids to decode; `pieces`: also each token's own bytes. */
export interface DetokenizeRequest {
  tokens: number[];
  pieces?: boolean;
}

/** Decoded text (as llama.cpp's detokenizer writes it, special tokens as their text) and, asked, each token's bytes. */
export interface Detokenized {
  text: string;
  /** One per token: its piece as bytes (a partial UTF-8 sequence stays partial). */
  pieces?: number[][];
}

/** The token ids of `request`. @throws EngineError naming the field at fault, "too_long" past the limits. */
export function tokenizeWith(model: PromptModel, request: TokenizeRequest, settings: PromptSettings): number[] {
  if (typeof request !== "object" || request === null) throw new EngineError("invalid_request", "the request must have text or messages", "text");
  if ("text" in request) {
    if (typeof request.text !== "string") throw new EngineError("invalid_request", "text must be a string", "text");
    try {
      return model.tokenizer.encode(request.text, { addSpecial: request.addSpecial ?? false, parseSpecial: request.parseSpecial ?? true, maxTokens: MAX_TOKENIZE_TOKENS });
    } catch (error) {
      if (error instanceof TokenLimitError) throw new EngineError("too_long", `the text has more than ${MAX_TOKENIZE_TOKENS} tokens, the most one request tokenizes`, "text");
      throw error;
    }
  }
  const { messages, tools, templateKwargs } = request;
  const input = { messages, ...(tools ? { tools } : {}), ...(templateKwargs ? { templateKwargs } : {}) };
  return prepareRequestPrompt(model, { input, enableAutoCompaction: false }, settings).tokens;
}

/** The text of `request.tokens` and, asked, each one's bytes. @throws EngineError naming the bad id. */
export function detokenizeWith(model: PromptModel, request: DetokenizeRequest): Detokenized {
  const tokens: unknown = request?.tokens;
  if (!Array.isArray(tokens)) throw new EngineError("invalid_request", "tokens must be an array of token ids", "tokens");
  const limit = model.tokenizer.vocabSize;
  tokens.forEach((token: unknown, index) => {
    if (typeof token !== "number" || !Number.isInteger(token) || token < 0 || token >= limit) {
      throw new EngineError("invalid_request", `tokens[${index}] is ${JSON.stringify(token)}; token ids are integers in 0..${limit - 1}`, `tokens[${index}]`);
    }
  });
  const ids = tokens as number[];
  const text = model.tokenizer.decode(ids);
  return request.pieces ? { text, pieces: ids.map((id) => Array.from(model.tokenizer.tokenBytes(id))) } : { text };
}
