// Turns a request's input into prompt tokens: a conversation is (optionally) auto-compacted, rendered with the
// model's chat template and tokenized; text is tokenized with the model's special tokens; token ids are checked.
import type { ChatMessage } from "./chat/messages.js";
import { renderChatTemplate } from "./chat/template.js";
import { type CompactionOptions, type CompactionResult, compactConversation } from "./compaction/index.js";
import { EngineError, type EngineInput } from "./request.js";
import type { Tokenizer } from "./tokenizer/tokenizer.js";

/** What the prompt step needs of the loaded model. */
export interface PromptModel {
  tokenizer: Tokenizer;
  chatTemplate: string | null;
  vocabSize: number;
}

/** A prompt ready to run. */
export interface PreparedPrompt {
  tokens: number[];
  compaction?: CompactionResult;
}


/** Renders and tokenizes `input`; throws {@link EngineError} naming the field at fault. */
export function preparePrompt(model: PromptModel, input: EngineInput, compaction: CompactionOptions | undefined): PreparedPrompt {
  if (typeof input !== "object" || input === null) throw new EngineError("invalid_request", "input must be an object with messages, text or tokens", "input");
  if ("tokens" in input) return { tokens: checkTokens(input.tokens, model.vocabSize) };
  if ("text" in input) {
    if (typeof input.text !== "string") throw new EngineError("invalid_request", "input.text must be a string", "input.text");
    return { tokens: model.tokenizer.encode(input.text, { addSpecial: true, parseSpecial: true }) };
  }
  if (!("messages" in input) || !Array.isArray(input.messages) || input.messages.length === 0) {
    throw new EngineError("invalid_request", "input must have messages (a non-empty array), text or tokens", "input.messages");
  }
  const template = model.chatTemplate;
  if (!template) throw new EngineError("invalid_request", "this model has no chat template; send text or tokens instead of messages", "input.messages");
  const render = (messages: readonly ChatMessage[]): number[] => {
    const text = renderChatTemplate(template, messages, {
      addGenerationPrompt: true,
      bosToken: model.tokenizer.bosId === undefined ? "" : model.tokenizer.tokenText(model.tokenizer.bosId),
      eosToken: model.tokenizer.eosId === undefined ? "" : model.tokenizer.tokenText(model.tokenizer.eosId),
      kwargs: input.templateKwargs,
      tools: input.tools,
    });
    // The template writes any BOS itself.
    return model.tokenizer.encode(text, { addSpecial: false, parseSpecial: true });
  };
  try {
    if (!compaction) return { tokens: render(input.messages) };
    // Compaction counts candidate lists; the one it returns was counted last, so its render is reused.
    const rendered = new WeakMap<readonly ChatMessage[], number[]>();
    const countTokens = (messages: readonly ChatMessage[]) => {
      const tokens = render(messages);
      rendered.set(messages, tokens);
      return tokens.length;
    };
    const textTokens = new Map<string, number>();
    const countText = (text: string) => {
      let count = textTokens.get(text);
      if (count === undefined) textTokens.set(text, (count = model.tokenizer.encode(text, { addSpecial: false, parseSpecial: true }).length));
      return count;
    };
    const result = compactConversation(input.messages, compaction, countTokens, countText);
    return { tokens: rendered.get(result.messages) ?? render(result.messages), compaction: result };
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
