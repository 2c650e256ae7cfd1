// POST /tokenize and /detokenize bodies in both shapes clients send: llama.cpp's server (`{content, add_special,
// parse_special, with_pieces}` -> `{tokens}`; `{tokens}` -> `{content}`) and vLLM's (`{model, prompt,
// add_special_tokens, return_token_strs}` or `{model, messages, add_generation_prompt, tools, chat_template_kwargs}`
// -> `{count, max_model_len, tokens, token_strs}`; `{model, tokens}` -> `{prompt}`). The shape of the answer follows
// the shape of the request.
import type { DetokenizeRequest, TokenizeRequest } from "../../../engine/tokenize.js";
import { ProtocolError, type ServedModels } from "../../protocol/internal.js";
import { describe, invalid, isObject, isUnset, optionalBoolean, optionalObject, own, quote, unsupported } from "../openai/fields.js";
import { parseMessages } from "../openai/messages.js";
import { parseModel } from "../openai/parse.js";
import { parseTools } from "../openai/tools.js";

/** A parsed tokenize request: what to tokenize, the model (absent: the first served), and the answer's shape. */
export interface ParsedTokenize {
  model?: string;
  request: TokenizeRequest;
  /** "llama.cpp": `{tokens}` (with pieces: `[{id, piece}]`); "vllm": `{count, max_model_len, tokens, token_strs?}`. */
  shape: "llama.cpp" | "vllm";
  /** llama.cpp `with_pieces`, vLLM `return_token_strs`. */
  pieces: boolean;
}

const LLAMA_CPP_FIELDS = ["content", "add_special", "parse_special", "with_pieces"];
const VLLM_FIELDS = ["model", "prompt", "messages", "add_special_tokens", "add_generation_prompt", "continue_final_message", "return_token_strs", "tools", "chat_template_kwargs"];

/** The request's body as an object whose fields are all of `known`; anything else is refused by name. */
function checkFields(body: unknown, known: readonly string[]): Record<string, unknown> {
  if (!isObject(body)) throw new ProtocolError("invalid_request", `The request body must be a JSON object, got ${describe(body)}`);
  for (const key of Object.keys(body)) {
    if (!known.includes(key)) throw new ProtocolError("invalid_request", `Unrecognized request argument supplied: ${quote(key)}`);
  }
  return body;
}

/**
 * A tokenize body: llama.cpp's when it has `content`, else vLLM's (`prompt` or `messages`).
 * @throws ProtocolError naming the field.
 */
export function parseTokenizeRequest(body: unknown, models: ServedModels): ParsedTokenize {
  if (isObject(body) && Object.hasOwn(body, "content")) {
    const fields = checkFields(body, LLAMA_CPP_FIELDS);
    const content = own(fields, "content");
    if (typeof content !== "string") invalid("content", "a string", content);
    const addSpecial = optionalBoolean(own(fields, "add_special"), "add_special") ?? false;
    const parseSpecial = optionalBoolean(own(fields, "parse_special"), "parse_special") ?? true;
    return { request: { text: content, addSpecial, parseSpecial }, shape: "llama.cpp", pieces: optionalBoolean(own(fields, "with_pieces"), "with_pieces") ?? false };
  }
  const fields = checkFields(body, VLLM_FIELDS);
  const model = isUnset(own(fields, "model")) ? undefined : parseModel(own(fields, "model"), models);
  const pieces = optionalBoolean(own(fields, "return_token_strs"), "return_token_strs") ?? false;
  const prompt = own(fields, "prompt");
  const messages = own(fields, "messages");
  if (!isUnset(prompt) && !isUnset(messages)) throw new ProtocolError("invalid_request", "send prompt or messages, not both", "messages");
  if (!isUnset(prompt)) {
    if (typeof prompt !== "string") invalid("prompt", "a string", prompt);
    for (const key of ["add_generation_prompt", "continue_final_message", "tools", "chat_template_kwargs"]) {
      if (!isUnset(own(fields, key))) unsupported(key, `${key} applies to messages, not to a prompt`);
    }
    const addSpecial = optionalBoolean(own(fields, "add_special_tokens"), "add_special_tokens") ?? true;
    return { ...(model ? { model } : {}), request: { text: prompt, addSpecial }, shape: "vllm", pieces };
  }
  if (isUnset(messages)) throw new ProtocolError("invalid_request", "content (llama.cpp), prompt or messages is required", "prompt");
  // The conversation is rendered as submit renders it: the template writes its own special tokens and generation prompt.
  if (optionalBoolean(own(fields, "add_generation_prompt"), "add_generation_prompt") === false) {
    unsupported("add_generation_prompt", "add_generation_prompt false is not supported: conversations are tokenized as they run, with the generation prompt");
  }
  if (optionalBoolean(own(fields, "continue_final_message"), "continue_final_message")) {
    unsupported("continue_final_message", "continue_final_message is not supported: conversations are tokenized as they run, with the generation prompt");
  }
  if (optionalBoolean(own(fields, "add_special_tokens"), "add_special_tokens")) {
    unsupported("add_special_tokens", "add_special_tokens applies to a prompt: a conversation's special tokens are its template's");
  }
  const parsed = parseMessages(messages, { model: model ?? "", hasVision: false });
  const tools = parseTools(own(fields, "tools"));
  const kwargs = optionalObject(own(fields, "chat_template_kwargs"), "chat_template_kwargs") ?? {};
  for (const key of Object.keys(kwargs)) {
    if (key !== "enable_thinking") unsupported("chat_template_kwargs", `chat_template_kwargs has an unsupported key ${quote(key)}: enable_thinking is supported`);
  }
  const enableThinking = optionalBoolean(own(kwargs, "enable_thinking"), "chat_template_kwargs.enable_thinking") ?? false;
  const request: TokenizeRequest = {
    messages: parsed,
    ...(tools ? { tools: tools.map((tool) => ({ type: "function", function: { name: tool.name, description: tool.description, parameters: tool.parameters } })) } : {}),
    templateKwargs: { enable_thinking: enableThinking },
  };
  return { ...(model ? { model } : {}), request, shape: "vllm", pieces };
}

/** The most ids one detokenize request may carry (bodies are bounded too). */
export const MAX_DETOKENIZE_TOKENS = 1 << 20;

/** A detokenize body: `{tokens}` (llama.cpp) or `{model, tokens}` (vLLM). @throws ProtocolError naming the field. */
export function parseDetokenizeRequest(body: unknown, models: ServedModels): { model?: string; request: DetokenizeRequest } {
  const fields = checkFields(body, ["model", "tokens"]);
  const model = isUnset(own(fields, "model")) ? undefined : parseModel(own(fields, "model"), models);
  const tokens = own(fields, "tokens");
  if (!Array.isArray(tokens)) invalid("tokens", "an array of token ids", tokens);
  if (tokens.length > MAX_DETOKENIZE_TOKENS) invalid("tokens", `at most ${MAX_DETOKENIZE_TOKENS} token ids`, tokens);
  tokens.forEach((token: unknown, index) => {
    if (typeof token !== "number" || !Number.isSafeInteger(token) || token < 0) invalid(`tokens[${index}]`, "a token id, a non-negative integer", token);
  });
  return { ...(model ? { model } : {}), request: { tokens: tokens as number[] } };
}
