// The chat template of a model that ships none: ChatML, as llama.cpp falls back to it (common/chat.cpp,
// CHATML_TEMPLATE_SRC), so chat input works on every model. Picks the template a model's conversations are rendered with.

/** llama.cpp's default chat template, character for character. */
export const DEFAULT_CHAT_TEMPLATE =
  "{%- for message in messages -%}\n" +
  "  {{- '<|im_start|>' + message.role + '\\n' + message.content + '<|im_end|>\\n' -}}\n" +
  "{%- endfor -%}\n" +
  "{%- if add_generation_prompt -%}\n" +
  "  {{- '<|im_start|>assistant\\n' -}}\n" +
  "{%- endif -%}";

/**
 * The default template's turn markers. A reply ends at either one: `<|im_end|>` closes the assistant's turn, and
 * `<|im_start|>` could only open the next turn. NOTE: most vocabularies without a chat template have no token for them
 * (llama.cpp then only stops at end-of-generation tokens, and a model writing the marker as text runs on), so they are
 * matched as text, like stop sequences.
 */
export const DEFAULT_TEMPLATE_TURN_MARKERS: readonly string[] = Object.freeze(["<|im_end|>", "<|im_start|>"]);

/** How a model's conversations become prompt text. */
export interface ChatFormat {
  /** The Jinja template. */
  template: string;
  /** True when the model ships no template and {@link DEFAULT_CHAT_TEMPLATE} is used. */
  isDefault: boolean;
  /**
   * Texts that end the reply as an end-of-generation token does (reported as a normal end of turn, never as a stop
   * sequence): the default template's turn markers; none for a model's own template, whose end-of-turn token ends it.
   */
  endOfTurn: readonly string[];
}

/** The format for a model whose own template is `modelTemplate` (null, undefined or blank: it has none). */
export function chatFormatOf(modelTemplate: string | null | undefined): ChatFormat {
  if (typeof modelTemplate === "string" && modelTemplate.trim() !== "") return { template: modelTemplate, isDefault: false, endOfTurn: [] };
  return { template: DEFAULT_CHAT_TEMPLATE, isDefault: true, endOfTurn: DEFAULT_TEMPLATE_TURN_MARKERS };
}
