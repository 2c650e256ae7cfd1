// Renders a conversation into a prompt string with the model's own Jinja chat template.

import type { HarmonyChatMessage } from "./harmony.js";
import type { MistralChatMessage } from "./mistral.js";
import type { ChatMessage, ChatRole } from "./messages.js";
import { compileChatTemplate, errorMessage, RAISE_FUNCTION_NAME } from "./compile.js";
import { ChatTemplateError, NoChatTemplateError } from "./errors.js";

/** Options of {@link renderChatTemplate}; they become the template's variables as Hugging Face names them. */
export interface ChatTemplateOptions {
  /** Append the opening of an assistant turn (`add_generation_prompt`), so the model writes the reply. */
  addGenerationPrompt: boolean;
  /** The tokenizer's BOS token text (`bos_token`); templates that start with it need it. */
  bosToken?: string;
  /** The tokenizer's EOS token text (`eos_token`). */
  eosToken?: string;
  /** Extra template variables, e.g. `{ enable_thinking: false }` for Qwen3. */
  kwargs?: Record<string, unknown>;
  /** Tool definitions (`tools`), usually JSON schemas `{type: "function", function: {...}}`; absent = none. */
  tools?: unknown[];
}

/** Variables the renderer sets itself; kwargs may not replace them. */
const RESERVED_VARIABLES = ["messages", "add_generation_prompt", "bos_token", "eos_token", "tools", "raise_exception", RAISE_FUNCTION_NAME];
const ROLES: ReadonlySet<ChatRole> = new Set(["system", "user", "assistant", "tool"]);

/** Thrown by the template's `raise_exception(...)`, told apart from the engine's own failures. */
class TemplateRaisedError extends Error {}

/**
 * Renders `messages` with a Hugging Face chat template (Jinja), as `tokenizer.apply_chat_template(..., tokenize=False)`
 * does: variables `messages`, `add_generation_prompt`, `bos_token`, `eos_token`, `tools` (None when absent) and the kwargs.
 * Each distinct template string is compiled once.
 * @throws NoChatTemplateError if `template` is empty.
 * @throws ChatTemplateError if the template does not parse ("syntax"), fails ("render"), rejects the conversation
 *   through `raise_exception` ("rejected"), or the messages or kwargs are malformed ("input").
 */
export function renderChatTemplate(
  template: string,
  messages: readonly (ChatMessage | HarmonyChatMessage | MistralChatMessage)[],
  options: ChatTemplateOptions,
): string {
  if (typeof template !== "string" || template.trim() === "") throw new NoChatTemplateError();
  const variables: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(options.kwargs ?? {})) {
    if (RESERVED_VARIABLES.includes(name)) {
      throw new ChatTemplateError("input", `kwargs.${name} would replace a variable the renderer sets; use the option instead`);
    }
    variables[name] = value;
  }
  if (options.tools !== undefined && !Array.isArray(options.tools)) {
    throw new ChatTemplateError("input", "tools must be an array of tool definitions");
  }
  Object.assign(variables, {
    messages: plainMessages(messages),
    add_generation_prompt: options.addGenerationPrompt,
    bos_token: options.bosToken,
    eos_token: options.eosToken,
    tools: options.tools ?? null,
    [RAISE_FUNCTION_NAME]: (message: unknown) => {
      throw new TemplateRaisedError(String(message));
    },
  });

  const compiled = compileChatTemplate(template);
  try {
    return compiled.render(variables);
  } catch (error) {
    if (error instanceof TemplateRaisedError) throw new ChatTemplateError("rejected", error.message, { cause: error });
    throw new ChatTemplateError("render", errorMessage(error), { cause: error });
  }
}

/** Checks the messages and copies them without undefined fields (which a template would see as defined). */
function plainMessages(messages: readonly (ChatMessage | HarmonyChatMessage | MistralChatMessage)[]): Record<string, unknown>[] {
  if (!Array.isArray(messages)) throw new ChatTemplateError("input", "messages must be an array");
  return messages.map((message, index) => {
    const where = `messages[${index}]`;
    if (typeof message !== "object" || message === null) throw new ChatTemplateError("input", `${where} is not an object`);
    if (!ROLES.has(message.role)) {
      throw new ChatTemplateError("input", `${where}.role is ${JSON.stringify(message.role)}; expected one of ${[...ROLES].join(", ")}`);
    }
    // Blocks of text and thinking are for Mistral's reasoning templates (engine/chat/mistral.ts).
    if (typeof message.content !== "string" && !isContentBlocks(message.content)) throw new ChatTemplateError("input", `${where}.content must be a string`);
    if (message.reasoning_content !== undefined && typeof message.reasoning_content !== "string") {
      throw new ChatTemplateError("input", `${where}.reasoning_content must be a string`);
    }
    if (message.tool_calls !== undefined && !Array.isArray(message.tool_calls)) {
      throw new ChatTemplateError("input", `${where}.tool_calls must be an array`);
    }
    const copy: Record<string, unknown> = {};
    for (const [key, value] of Object.entries(message)) if (value !== undefined) copy[key] = value;
    return copy;
  });
}

/** Whether `content` is a list of text and thinking blocks. */
function isContentBlocks(content: unknown): boolean {
  return Array.isArray(content) && content.every((block) => typeof block === "object" && block !== null
    && ((block.type === "text" && typeof block.text === "string") || (block.type === "thinking" && typeof block.thinking === "string")));
}
