// Picks the chat template a model ships (tokenizer_config.json `chat_template`), or says clearly that it has none.

import { ChatTemplateError, NoChatTemplateError } from "./errors.js";

/** The `chat_template` field of a tokenizer_config.json: one template, or a list of named ones. */
export type ChatTemplateField = string | ReadonlyArray<{ name: string; template: string }> | null | undefined;

/**
 * The template to use, chosen as Hugging Face transformers does: a plain string as is; from a named list,
 * `name` if given, else "tool_use" when tools are present and the list has it, else "default".
 * @throws NoChatTemplateError when the model has no template (no fallback here: chatFormatOf supplies llama.cpp's).
 * @throws ChatTemplateError ("input") when a named list lacks the template asked for.
 */
export function requireChatTemplate(
  field: ChatTemplateField,
  options: { model?: string; name?: string; hasTools?: boolean } = {},
): string {
  if (typeof field === "string") {
    if (field.trim() === "") throw new NoChatTemplateError(options.model);
    return field;
  }
  if (!field || field.length === 0) throw new NoChatTemplateError(options.model);
  const byName = new Map(field.map((entry) => [entry.name, entry.template]));
  const wanted = options.name ?? (options.hasTools && byName.has("tool_use") ? "tool_use" : "default");
  const template = byName.get(wanted);
  if (template === undefined) {
    throw new ChatTemplateError(
      "input",
      `${options.model ? `${options.model} ` : ""}has no chat template named "${wanted}" (it has: ${[...byName.keys()].join(", ")})`,
    );
  }
  return template;
}
