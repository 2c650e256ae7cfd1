// Conversations for Gemma 4's chat template. It teaches the model its own markup: turns `<|turn>ROLE\n...<turn|>`,
// reasoning in a thought channel `<|channel>thought\n...<channel|>`, and calls
// `<|tool_call>call:NAME{key:VALUE,...}<tool_call|>`, whose values are written in Gemma's own notation (strings
// between `<|"|>` marks, bare keys: server/protocol/gemma4.ts reads it). This finds such a template and adapts loom's
// messages to what it reads: each call's arguments as an object, which it writes key by key (a JSON string would be
// written as is, inside the call's braces).
import type { ChatMessage, ChatToolCall } from "./messages.js";

/** Opens a Gemma 4 tool call; `call:NAME{...}` and {@link GEMMA4_TOOL_CALL_CLOSE} follow. */
export const GEMMA4_TOOL_CALL_OPEN = "<|tool_call>";
/** Closes a Gemma 4 tool call. */
export const GEMMA4_TOOL_CALL_CLOSE = "<tool_call|>";
/** The marks around a string value in Gemma 4's call notation. */
export const GEMMA4_QUOTE = '<|"|>';
/** The thought channel's tags: reasoning is what lies between them (after the newline that follows "thought"). */
export const GEMMA4_THINK_TAGS = Object.freeze({ open: "<|channel>thought", close: "<channel|>" });

/** The tokens a Gemma 4 vocabulary has for the markup the reader and the constraint rely on. */
const GEMMA4_TOKENS = [GEMMA4_TOOL_CALL_OPEN, GEMMA4_TOOL_CALL_CLOSE, GEMMA4_QUOTE, "<|channel>", "<channel|>"];

/**
 * Whether `template` is Gemma 4's: it writes calls as `'<|tool_call>call:'` (the text llama.cpp detects it by), and
 * the vocabulary, when `hasToken` is given, has the call, string and channel marks as tokens.
 */
export function isGemma4Template(template: string | null, hasToken?: (text: string) => boolean): boolean {
  if (template === null || !template.includes(`'${GEMMA4_TOOL_CALL_OPEN}call:'`)) return false;
  return hasToken === undefined || GEMMA4_TOKENS.every(hasToken);
}

/**
 * `messages` as Gemma 4's template expects them: each call's arguments as an object when they are a JSON object's
 * text, and an empty list of calls left out (the template would open a model turn for calls and wait for results).
 * Results stay "tool" messages: the template finds each one's call by `tool_call_id` and writes it after the calls.
 */
export function gemma4Messages(messages: readonly ChatMessage[]): ChatMessage[] {
  return messages.map((message): ChatMessage => {
    if (message.tool_calls === undefined) return { ...message };
    if (message.tool_calls.length === 0) {
      const { tool_calls: _, ...rest } = message;
      return rest;
    }
    return { ...message, tool_calls: message.tool_calls.map(withArgumentObject) };
  });
}

/**
 * A rendered Gemma 4 prompt that ends a turn (`<turn|>\n`) gets the model's turn opened after it: the template opens
 * none after an assistant message that has calls, their results and text, and the model would not know it is to
 * answer. llama.cpp's Gemma 4 handler does the same.
 */
export function withGemma4ModelTurn(prompt: string): string {
  return prompt.endsWith("<turn|>\n") ? `${prompt}<|turn>model\n` : prompt;
}

function withArgumentObject(call: ChatToolCall): ChatToolCall {
  const args = call.function.arguments;
  if (typeof args !== "string") return call;
  try {
    const parsed: unknown = JSON.parse(args.trim() === "" ? "{}" : args);
    if (typeof parsed === "object" && parsed !== null && !Array.isArray(parsed)) {
      return { ...call, function: { name: call.function.name, arguments: parsed as Record<string, unknown> } };
    }
  } catch {
    // Not JSON: the template writes the text as it came.
  }
  return call;
}
