// Engine request fields as the Responses API names them, for error messages and `param`.

const NAMES: Record<string, string> = {
  input: "input",
  "input.messages": "input",
  "input.text": "input",
  "input.tokens": "input",
  maxTokens: "max_output_tokens",
  "sampling.temperature": "temperature",
  "sampling.topP": "top_p",
  constraint: "text.format",
  "thinkingBudget.tokens": "reasoning.effort",
};

/** The Responses API's name of an engine request field. */
export function responsesWireField(field: string): string {
  return NAMES[field] ?? field;
}
