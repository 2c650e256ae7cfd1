// The shape of a conversation as compaction sees it: when rules (a) and (b) start to apply to each message (as the
// conversation grows), the units turn dropping removes, and where earlier requests ended.
//
// Every rule is stated for a prefix of the conversation (the request that was sent when the conversation had L
// messages). A message's treatment only ever changes one way as L grows (kept -> pruned), which is what makes the
// decisions monotone.

import type { ChatMessage } from "../chat/messages.js";
import { prunedToolContent } from "./tool-content.js";

/** What compaction decided about a conversation's structure; indices refer to the input list. */
export interface ConversationPlan {
  /** Number of messages. */
  readonly length: number;
  /**
   * Rule (a): from which prefix length on message i loses its reasoning (Infinity: never). For an assistant message
   * with reasoning, that is one past the first user message after it.
   */
  readonly reasoningPrunedFrom: readonly number[];
  /**
   * Rule (b): from which prefix length on tool message i is cut to {@link ConversationPlan.prunedToolContent}
   * (Infinity: never): once `toolResultWindow` newer tool messages exist and an assistant message came after it.
   */
  readonly toolPrunedFrom: readonly number[];
  /** The pruned content of each tool message (undefined: none, or not prunable). */
  readonly prunedToolContent: readonly (string | undefined)[];
  /** 1 where the message is a user message. */
  readonly isUser: Uint8Array;
  /** Index of the last user message (-1: none): never dropped. */
  readonly lastUser: number;
  /** Start of each droppable unit, ascending; unit k spans [unitStarts[k], unitStarts[k + 1]), the last one up to `length`. */
  readonly unitStarts: readonly number[];
  /** The unit of each message, or -1 for the head (messages before the first unit). */
  readonly unitOf: Int32Array;
  /** Prefix lengths L at which an earlier request ended: `messages[L]` is an assistant message, 1 <= L < length. */
  readonly requestEnds: readonly number[];
}

/** True for an assistant message with non-empty reasoning. */
export function hasReasoning(message: ChatMessage): boolean {
  return message.role === "assistant" && typeof message.reasoning_content === "string" && message.reasoning_content !== "";
}

/**
 * Where a unit may start: a user message, or an assistant message right after a tool result (the next step of an
 * agentic turn). A unit therefore holds a user message with the assistant step answering it, or one assistant step
 * with its tool results: a tool call is never separated from its results, and what follows a dropped span is always
 * a user or an assistant message.
 */
function isUnitStart(messages: readonly ChatMessage[], index: number): boolean {
  const role = messages[index]!.role;
  return role === "user" || (role === "assistant" && messages[index - 1]?.role === "tool");
}

/** Works out the plan of `messages` for a tool-result window. */
export function planConversation(messages: readonly ChatMessage[], toolResultWindow: number): ConversationPlan {
  const length = messages.length;
  const reasoningPrunedFrom = new Array<number>(length).fill(Infinity);
  const toolPrunedFrom = new Array<number>(length).fill(Infinity);
  const prunedContent = new Array<string | undefined>(length).fill(undefined);

  // (a) Reasoning goes once a user message follows.
  let nextUser = Infinity;
  let nextAssistant = Infinity;
  const nextAssistantAfter = new Array<number>(length);
  for (let index = length - 1; index >= 0; index--) {
    const message = messages[index]!;
    nextAssistantAfter[index] = nextAssistant;
    if (hasReasoning(message)) reasoningPrunedFrom[index] = nextUser + 1;
    if (message.role === "user") nextUser = index;
    if (message.role === "assistant") nextAssistant = index;
  }

  // (b) A tool result is cut once `toolResultWindow` newer tool results exist and the model has answered after it.
  const tools: number[] = [];
  messages.forEach((message, index) => {
    if (message.role === "tool") tools.push(index);
  });
  tools.forEach((index, position) => {
    const content = prunedToolContent(messages[index]!.content);
    if (content === undefined || content === messages[index]!.content) return;
    const newer = tools[position + toolResultWindow];
    if (newer === undefined) return;
    prunedContent[index] = content;
    toolPrunedFrom[index] = Math.max(newer + 1, nextAssistantAfter[index]! + 1);
  });

  // (c) Units: the head is everything up to the first unit start after the first user message (the system prompt,
  // the first user message and the reply to it); every later unit start opens a unit.
  const unitOf = new Int32Array(length).fill(-1);
  const unitStarts: number[] = [];
  const firstUser = messages.findIndex((message) => message.role === "user");
  if (firstUser >= 0) {
    for (let index = firstUser + 1; index < length; index++) {
      if (isUnitStart(messages, index)) unitStarts.push(index);
      if (unitStarts.length > 0) unitOf[index] = unitStarts.length - 1;
    }
  }

  let lastUser = -1;
  const isUser = new Uint8Array(length);
  const requestEnds: number[] = [];
  messages.forEach((message, index) => {
    if (message.role === "user") {
      lastUser = index;
      isUser[index] = 1;
    }
    if (message.role === "assistant" && index >= 1) requestEnds.push(index);
  });

  return {
    length,
    reasoningPrunedFrom,
    toolPrunedFrom,
    prunedToolContent: prunedContent,
    isUser,
    lastUser,
    unitStarts,
    unitOf,
    requestEnds,
  };
}

/** One past the last message of unit k. */
export function unitEnd(plan: ConversationPlan, unit: number): number {
  return plan.unitStarts[unit + 1] ?? plan.length;
}

/** How many units (from the oldest) a request of `prefixLength` messages may drop: those clear of the recent messages. */
export function droppableUnits(plan: ConversationPlan, prefixLength: number, keepRecentMessages: number): number {
  const limit = prefixLength - keepRecentMessages;
  let count = 0;
  while (count < plan.unitStarts.length && unitEnd(plan, count) <= limit) count++;
  return count;
}

/** Indices of the messages dropped with the first `units` units, sparing the last user message. */
export function droppedIndices(plan: ConversationPlan, units: number): number[] {
  const dropped: number[] = [];
  if (units <= 0) return dropped;
  for (let index = plan.unitStarts[0]!; index < unitEnd(plan, units - 1); index++) {
    if (index !== plan.lastUser) dropped.push(index);
  }
  return dropped;
}
