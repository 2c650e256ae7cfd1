// Engine request fields as each wire format names them, for error messages and `param`: the engine says
// `sampling.topP` or `maxTokens`; a client sent `top_p` or `max_tokens`.

/** Names chat completions and messages share (the Responses API renames some: responsesWireField). */
const SHARED: Record<string, string> = {
  input: "messages",
  "input.messages": "messages",
  "input.text": "messages",
  "input.tokens": "messages",
  maxTokens: "max_tokens",
  "sampling.temperature": "temperature",
  "sampling.topP": "top_p",
  "sampling.topK": "top_k",
  "sampling.frequencyPenalty": "frequency_penalty",
  "sampling.presencePenalty": "presence_penalty",
  "sampling.seed": "seed",
};

/** OpenAI chat completions' names. */
export function openAiWireField(field: string): string {
  if (field === "thinkingBudget.tokens") return "chat_template_kwargs";
  if (field === "constraint") return "response_format";
  return SHARED[field] ?? field;
}

/** Anthropic messages' names. */
export function anthropicWireField(field: string): string {
  if (field === "thinkingBudget.tokens") return "thinking.budget_tokens";
  if (field === "constraint") return "tools";
  const stop = /^stop\[(\d+)\]$/.exec(field);
  if (stop) return `stop_sequences[${stop[1]}]`;
  return SHARED[field] ?? field;
}

/** Engine input fields: the Responses API names them all `input`. */
const INPUT_FIELDS = ["input", "input.messages", "input.text", "input.tokens"];

/** The Responses API's names. */
export function responsesWireField(field: string): string {
  if (INPUT_FIELDS.includes(field)) return "input";
  if (field === "maxTokens") return "max_output_tokens";
  if (field === "constraint") return "text.format";
  if (field === "thinkingBudget.tokens") return "reasoning.effort";
  return SHARED[field] ?? field;
}
