// Conversations for Mistral's chat templates (Mistral 7B v0.3, Nemo, Small, Magistral, Ministral 3): they teach calls
// after a `[TOOL_CALLS]` token, either as one JSON list (v3 / Nemo: `[TOOL_CALLS][{"name": ..., "arguments": {...}}]`)
// or as a name and its arguments per call (tekken v11+: `[TOOL_CALLS]NAME[ARGS]{...}`), and their templates refuse a
// call or a tool result whose id is not 9 letters and digits. This finds the layout and adapts loom's messages to
// the ids and argument objects those templates expect (llama.cpp keeps the ids as the client sent them, which such a
// template rejects).
import { createHash } from "node:crypto";
import type { ChatMessage, ChatToolCall } from "./messages.js";

/** The token that opens Mistral tool calls. */
export const MISTRAL_TOOL_CALLS = "[TOOL_CALLS]";
/** The token between a call's name and its arguments in the v11+ layout. */
export const MISTRAL_ARGS = "[ARGS]";

/** How a Mistral template lays out calls: one JSON list, or a name and `[ARGS]` per call. */
export type MistralCallLayout = "json" | "args";

/**
 * The call layout a Mistral chat template teaches, or undefined when `template` is not one: it writes `[TOOL_CALLS]`
 * (and the vocabulary has it as a token, when `hasToken` is given); "args" when it also writes `[ARGS]` (and that is a
 * token too), else "json".
 */
export function mistralCallLayout(template: string | null, hasToken?: (text: string) => boolean): MistralCallLayout | undefined {
  if (template === null || !template.includes(MISTRAL_TOOL_CALLS) || !(hasToken?.(MISTRAL_TOOL_CALLS) ?? true)) return undefined;
  return template.includes(MISTRAL_ARGS) && (hasToken?.(MISTRAL_ARGS) ?? true) ? "args" : "json";
}

/** Magistral-style reasoning tags, when the template writes them and the vocabulary has them as tokens. */
export function mistralThinkTags(template: string | null, hasToken?: (text: string) => boolean): { open: string; close: string } | undefined {
  const tags = { open: "[THINK]", close: "[/THINK]" };
  if (template === null || !template.includes(tags.open) || !template.includes(tags.close)) return undefined;
  return (hasToken?.(tags.open) ?? true) && (hasToken?.(tags.close) ?? true) ? tags : undefined;
}

/**
 * Whether the template reads an assistant's reasoning as content blocks (`{type: "thinking"}` beside `{type: "text"}`):
 * Ministral 3 and Magistral Large 3, told apart as llama.cpp tells them: `[SYSTEM_PROMPT]`, `[TOOL_CALLS]` and
 * `[ARGS]` without Mistral Small 3.2's `[CALL_ID]`.
 */
export function readsThinkingBlocks(template: string | null): boolean {
  return template !== null && ["[SYSTEM_PROMPT]", MISTRAL_TOOL_CALLS, MISTRAL_ARGS].every((tag) => template.includes(tag)) && !template.includes("[CALL_ID]");
}

/** Reasoning at the start of an assistant message's content, as chat completions returns it. */
const THINK_IN_CONTENT = /^\s*<think>([\s\S]*?)<\/think>\s*/;

/** A message as a Mistral template reads it: content may be blocks of text and thinking (see readsThinkingBlocks). */
export type MistralChatMessage = Omit<ChatMessage, "content"> & { content: string | Array<{ type: "text"; text: string } | { type: "thinking"; thinking: string }> };

/** An id as Mistral's templates demand it: 9 letters and digits. */
const MISTRAL_ID = /^[A-Za-z0-9]{9}$/;
const ALPHANUMERIC = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

/**
 * A Mistral id for `id`: itself when it is one, else 9 letters and digits derived from it (the same every time, so a
 * call and the result that names it agree, and a conversation renders the same tokens turn after turn).
 */
export function mistralToolCallId(id: string): string {
  if (MISTRAL_ID.test(id)) return id;
  const digest = createHash("sha256").update(id).digest();
  let out = "";
  for (let i = 0; i < 9; i++) out += ALPHANUMERIC[digest[i]! % ALPHANUMERIC.length];
  return out;
}

/**
 * `messages` as a Mistral template expects them: every call and result id made a Mistral id (see mistralToolCallId;
 * a call without one gets one from its place in the conversation, a result without one answers the calls of the
 * turn before it in order), each call's function as `{name, arguments}` with its arguments as an object when they
 * are a JSON object's text (the templates write `function|tojson`), and an empty list of calls left out. With
 * `thinkingBlocks` (see readsThinkingBlocks), an assistant's reasoning becomes a thinking block of its content.
 */
export function mistralMessages(messages: readonly ChatMessage[], thinkingBlocks = false): MistralChatMessage[] {
  let lastCalls: string[] = [];
  let answered = 0;
  return messages.map((given, position): MistralChatMessage => {
    const message: MistralChatMessage = given.role === "assistant" && thinkingBlocks ? withThinkingBlocks(given) : given;
    if (message.role === "assistant" && message.tool_calls && message.tool_calls.length > 0) {
      const calls = message.tool_calls.map((call, index) => mistralCall(call, `loom-call:${position}:${index}`));
      lastCalls = calls.map((call) => call.id!);
      answered = 0;
      return { ...message, tool_calls: calls };
    }
    if (message.tool_calls) {
      // An empty list would still open `[TOOL_CALLS][` in the template (it tests whether the field is defined).
      const { tool_calls: _, ...rest } = message;
      return rest;
    }
    if (message.role === "tool") {
      const id = message.tool_call_id !== undefined ? mistralToolCallId(message.tool_call_id) : lastCalls[answered];
      answered++;
      return id === undefined ? { ...message } : { ...message, tool_call_id: id };
    }
    return { ...message };
  });
}

/**
 * An assistant message whose reasoning (`reasoning_content`, or `<think>` at the start of its content as chat
 * completions returns it) goes to the template as a thinking block before a text block, as llama.cpp's Ministral 3
 * handler passes it. Without reasoning, the message is left as it is.
 */
function withThinkingBlocks(message: ChatMessage): MistralChatMessage {
  const { reasoning_content: given, ...rest } = message;
  const tagged = given === undefined ? THINK_IN_CONTENT.exec(rest.content) : null;
  const reasoning = given ?? tagged?.[1];
  if (!reasoning) return message;
  const text = tagged ? rest.content.slice(tagged[0].length) : rest.content;
  return { ...rest, content: [{ type: "thinking", thinking: reasoning }, { type: "text", text }] };
}

function mistralCall(call: ChatToolCall, fallbackId: string): ChatToolCall {
  let args = call.function.arguments;
  if (typeof args === "string") {
    try {
      const parsed: unknown = JSON.parse(args.trim() === "" ? "{}" : args);
      if (typeof parsed === "object" && parsed !== null && !Array.isArray(parsed)) args = parsed as Record<string, unknown>;
    } catch {
      // Not JSON: the template writes the text as it came.
    }
  }
  return { ...call, id: mistralToolCallId(call.id ?? fallbackId), function: { name: call.function.name, arguments: args } };
}
