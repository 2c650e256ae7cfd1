// The additive token estimate that turn dropping replays earlier requests with: a prompt is estimated as a constant
// plus one size per message, each size the template's overhead for that kind of message (measured once per call on
// tiny probe conversations) plus the tokens of the message's texts.
//
// NOTE: every size depends on the message alone (never on the messages after it), so the estimate of an earlier
// request is the same whichever later conversation it is computed from: the property the replay needs.

import type { ChatMessage, ChatToolCall } from "../chat/messages.js";
import { hasReasoning, type ConversationPlan } from "./plan.js";

/** Renders and tokenizes a message list; returns the prompt length in tokens. */
export type CountTokens = (messages: readonly ChatMessage[]) => number;
/** Tokens of a plain text, without any template (e.g. `tokenizer.encode(text).length`). */
export type CountTextTokens = (text: string) => number;

/** How message i is rendered in a given request. */
export type MessageVariant = "full" | "without-reasoning" | "pruned-tool";

/** Estimated sizes of a conversation's messages. */
export interface SizeEstimate {
  /** Tokens of the prompt around the messages (generation prompt, tool definitions, a default system prompt). */
  readonly constant: number;
  /** Estimated tokens of message i rendered as `variant`. */
  size(index: number, variant: MessageVariant): number;
}

/** A template's overhead for one kind of message part, and whether the template renders that part's text at all. */
interface Slot {
  overhead: number;
  renders: boolean;
}

const EMPTY_USER: ChatMessage = { role: "user", content: "" };
const SHORT_TEXT = "x";
const LONG_TEXT = "x x x x x x x x x x x x";
const SHORT_ARGUMENTS = '{"a": 1}';
const LONG_ARGUMENTS = '{"a": "x x x x x x x x x x x x"}';
const FALLBACK_SLOT: Slot = { overhead: 4, renders: true };
const PROBE_CALL_NAME = "f";

/** Text of a tool call as counted: its name and its arguments (JSON text as given, or the object as JSON). */
function callArguments(call: ChatToolCall): string {
  const args = call?.function?.arguments;
  if (typeof args === "string") return args;
  try {
    return JSON.stringify(args) ?? "";
  } catch {
    return "";
  }
}

function callName(call: ChatToolCall): string {
  const name = call?.function?.name;
  return typeof name === "string" ? name : "";
}

function text(value: unknown): string {
  return typeof value === "string" ? value : "";
}

/**
 * Measures the template's per-message overheads with a few probe conversations through `countTokens`, and counts
 * texts with `countText` (or, without it, with one more probe per distinct text: correct but slower). A template
 * that rejects a probe gets fixed fallback overheads for that kind of message.
 */
export function estimateSizes(
  messages: readonly ChatMessage[],
  plan: ConversationPlan,
  countTokens: CountTokens,
  countText?: CountTextTokens,
): SizeEstimate {
  const probe = (list: ChatMessage[]): number | undefined => {
    try {
      const count = countTokens(list);
      return Number.isFinite(count) ? count : undefined;
    } catch {
      return undefined;
    }
  };
  const base = probe([EMPTY_USER]);
  const twoUsers = probe([EMPTY_USER, EMPTY_USER]);

  const textCache = new Map<string, number>();
  const countPlain = (value: string): number => {
    if (value === "") return 0;
    const cached = textCache.get(value);
    if (cached !== undefined) return cached;
    let count: number | undefined;
    if (countText) count = countText(value);
    else if (twoUsers !== undefined) {
      const withText = probe([EMPTY_USER, { role: "user", content: value }]);
      if (withText !== undefined) count = withText - twoUsers;
    }
    const result = Math.max(0, count ?? Math.ceil(value.length / 3));
    textCache.set(value, result);
    return result;
  };

  /** Overhead of a part: probe(text) - reference - tokens(text), and whether a longer text costs more. */
  const slot = (build: (value: string) => ChatMessage[], reference: number | undefined, short: string, long?: string): Slot => {
    if (reference === undefined) return FALLBACK_SLOT;
    const withShort = probe(build(short));
    if (withShort === undefined) return FALLBACK_SLOT;
    let renders = true;
    if (long !== undefined) {
      const withLong = probe(build(long));
      if (withLong === undefined) return FALLBACK_SLOT;
      renders = withLong > withShort;
    }
    return { overhead: withShort - reference - (renders ? countPlain(short) : 0), renders };
  };

  const user = slot((value) => [EMPTY_USER, { role: "user", content: value }], base, SHORT_TEXT);
  const system = slot((value) => [EMPTY_USER, { role: "system", content: value }], base, SHORT_TEXT);
  const tool = slot((value) => [EMPTY_USER, { role: "tool", content: value }], base, SHORT_TEXT);
  // An assistant message without kept reasoning sits before a user message; one with kept reasoning is the last.
  const assistant = slot((value) => [EMPTY_USER, { role: "assistant", content: value }, EMPTY_USER], twoUsers, SHORT_TEXT);
  const thinking = slot(
    (value) => [EMPTY_USER, { role: "assistant", content: "", reasoning_content: value }],
    base,
    SHORT_TEXT,
    LONG_TEXT,
  );
  const emptyAssistant = probe([EMPTY_USER, { role: "assistant", content: "" }, EMPTY_USER]);
  const callSlot = slot(
    (value) => [
      EMPTY_USER,
      { role: "assistant", content: "", tool_calls: [{ type: "function", function: { name: PROBE_CALL_NAME, arguments: value } }] },
      EMPTY_USER,
    ],
    emptyAssistant,
    SHORT_ARGUMENTS,
    LONG_ARGUMENTS,
  );
  const call: Slot = callSlot.renders && callSlot !== FALLBACK_SLOT
    ? { overhead: callSlot.overhead - countPlain(PROBE_CALL_NAME), renders: true }
    : callSlot;
  const constant = base !== undefined && twoUsers !== undefined ? 2 * base - twoUsers : 0;

  const sizeOf = (message: ChatMessage, variant: MessageVariant, index: number): number => {
    switch (message.role) {
      case "user":
        return user.overhead + countPlain(text(message.content));
      case "system":
        return system.overhead + countPlain(text(message.content));
      case "tool": {
        const content = variant === "pruned-tool" ? (plan.prunedToolContent[index] ?? text(message.content)) : text(message.content);
        return tool.overhead + countPlain(content);
      }
      case "assistant": {
        const keepReasoning = variant === "full" && hasReasoning(message);
        let size = keepReasoning
          ? thinking.overhead + (thinking.renders ? countPlain(text(message.reasoning_content)) : 0)
          : assistant.overhead;
        size += countPlain(text(message.content));
        if (Array.isArray(message.tool_calls)) {
          for (const toolCall of message.tool_calls) {
            size += call.overhead + (call.renders ? countPlain(callName(toolCall)) + countPlain(callArguments(toolCall)) : 0);
          }
        }
        return size;
      }
      default:
        return FALLBACK_SLOT.overhead + countPlain(text((message as ChatMessage | undefined)?.content));
    }
  };

  const cache = new Map<string, number>();
  return {
    constant,
    size(index, variant) {
      const key = `${index}:${variant}`;
      let size = cache.get(key);
      if (size === undefined) {
        size = Math.max(0, sizeOf(messages[index]!, variant, index));
        cache.set(key, size);
      }
      return size;
    },
  };
}

/** UTF-8 bytes of every text of the conversation, plus one per text: an upper bound on their tokens for BPE tokenizers. */
export function textBytesBound(messages: readonly ChatMessage[]): number {
  const encoder = new TextEncoder();
  let total = 0;
  const add = (value: string): void => {
    if (value !== "") total += encoder.encode(value).length + 1;
  };
  for (const message of messages) {
    add(text(message?.content));
    add(text(message?.reasoning_content));
    if (Array.isArray(message?.tool_calls)) {
      for (const toolCall of message.tool_calls) {
        add(callName(toolCall));
        add(callArguments(toolCall));
      }
    }
  }
  return total;
}
