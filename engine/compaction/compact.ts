// Auto compaction: decides which parts of a long conversation to prune so that the prompt fits the working-memory
// budget and still hits the section-pruning cache (previous chain A B C, new input A C D: one pruned span).
//
// Three steps, always in this order (README.md has the full rules and the reasons):
//   (a) reasoning: assistant messages before the last user message lose `reasoning_content`. Always applied.
//   (b) tool results: tool messages older than the last `toolResultWindow` ones, once answered by an assistant
//       message, are cut to a short tail starting at a clean token boundary (see tool-content.ts). Always applied.
//   (c) turns: when over budget, whole units (a user message with the reply to it, or an assistant step with its tool
//       results) are dropped from the oldest middle, keeping the system prompt, the first user message and the reply
//       to it, the last user message and the last `keepRecentMessages` messages, until the prompt is at most
//       `targetRatio * budgetTokens`. The decision is replayed over the conversation's earlier requests with an
//       additive token estimate (replay.ts), so it only ever grows as the conversation grows; the exact count then
//       confirms it and drops more if the estimate was short.
//
// Decisions depend only on the messages and the options: the same conversation always compacts the same way, and a
// conversation that grew by appending messages prunes everything the shorter one pruned, plus possibly more.

import type { ChatMessage } from "../chat/messages.js";
import { type CountTextTokens, type CountTokens, estimateSizes, textBytesBound } from "./estimate.js";
import { type CompactionOptions, resolveCompactionOptions } from "./options.js";
import { type ConversationPlan, droppableUnits, droppedIndices, planConversation } from "./plan.js";
import { replayTurnDropping } from "./replay.js";
import type { CompactionResult, PrunedPart } from "./result.js";

/**
 * Compacts `messages` for a request: applies rules (a) and (b), then (c) when over budget, and reports what it
 * pruned with the tokens each step saved. The input is never modified.
 *
 * @param countTokens renders and tokenizes a message list exactly as the request will be (template, tools, kwargs,
 *   generation prompt) and returns its length. Called on the input, after each step that pruned something, a few
 *   times on tiny probe lists, and a few times more when turns are dropped.
 * @param countText optional: tokens of a plain text. Used for the estimate that replays earlier requests; without
 *   it, each distinct text costs one `countTokens` probe. Engines should pass it (and may memoize it).
 * @throws RangeError for invalid options; TypeError when `messages` is not an array of objects. Errors thrown by
 *   `countTokens` on the real conversation propagate.
 */
export function compactConversation(
  messages: readonly ChatMessage[],
  options: CompactionOptions,
  countTokens: CountTokens,
  countText?: CountTextTokens,
): CompactionResult {
  const resolved = resolveCompactionOptions(options);
  if (!Array.isArray(messages)) throw new TypeError("messages must be an array");
  messages.forEach((message, index) => {
    if (typeof message !== "object" || message === null) throw new TypeError(`messages[${index}] is not an object`);
  });
  const length = messages.length;
  const plan = planConversation(messages, resolved.toolResultWindow);
  // NOTE: every list this function returns is one it passed to countTokens, which returned tokensAfter for it, so
  // an engine can memoize its rendering by array identity (e.g. a WeakMap) instead of rendering it again.
  let current: ChatMessage[] = [...messages];
  const tokensBefore = countTokens(current);
  const pruned: PrunedPart[] = [];
  let tokens = tokensBefore;

  const step = (kind: PrunedPart["kind"], messageIndices: number[], next: ChatMessage[], nextTokens?: number): void => {
    if (messageIndices.length === 0) return;
    const after = nextTokens ?? countTokens(next);
    pruned.push({ kind, messageIndices, tokensSaved: tokens - after });
    current = next;
    tokens = after;
  };

  // (a) Reasoning of turns before the last user message.
  const reasoningPruned = (index: number): boolean => plan.reasoningPrunedFrom[index]! <= length;
  step("reasoning", indicesWhere(length, reasoningPruned), current.map((message, index) => (reasoningPruned(index) ? withoutReasoning(message) : message)));

  // (b) Tool results outside the window.
  const toolPruned = (index: number): boolean => plan.toolPrunedFrom[index]! <= length;
  step(
    "tool_result",
    indicesWhere(length, toolPruned),
    current.map((message, index) => (toolPruned(index) ? { ...message, content: plan.prunedToolContent[index]! } : message)),
  );

  // (c) Turns. Shortcut: when the raw prompt plus every text's UTF-8 bytes fits, no request of this conversation can
  // have been over budget (a text has at most about one token per byte, and the raw prompt holds the template's
  // overheads), so the replay would drop nothing. NOTE: the raw count alone is no such bound: templates such as
  // Qwen3's render an earlier turn's reasoning only while that turn is the current one.
  const maxUnits = droppableUnits(plan, length, resolved.keepRecentMessages);
  if (maxUnits > 0 && tokensBefore + textBytesBound(messages) > resolved.budgetTokens) {
    const sizes = estimateSizes(messages, plan, countTokens, countText);
    let units = replayTurnDropping(plan, sizes, resolved).units;
    const counted = new Map<number, { list: ChatMessage[]; tokens: number }>([[0, { list: current, tokens }]]);
    const measured = (dropped: number): { list: ChatMessage[]; tokens: number } => {
      let entry = counted.get(dropped);
      if (entry === undefined) {
        const list = dropUnits(current, plan, dropped);
        entry = { list, tokens: countTokens(list) };
        counted.set(dropped, entry);
      }
      return entry;
    };
    const countWith = (dropped: number): number => measured(dropped).tokens;
    if (countWith(units) > resolved.budgetTokens && units < maxUnits) units = exactTopUp(units, maxUnits, countWith, resolved.targetRatio * resolved.budgetTokens);
    step("turns", droppedIndices(plan, units), measured(units).list, countWith(units));
  }

  return {
    messages: current,
    pruned,
    tokensBefore,
    tokensAfter: tokens,
    tokensSaved: tokensBefore - tokens,
    overBudget: tokens > resolved.budgetTokens,
  };
}

/** The fewest units in (from, max] whose exact count is at most `target`, or `max` when none is (counts fall as units go). */
function exactTopUp(from: number, max: number, countWith: (units: number) => number, target: number): number {
  if (countWith(max) > target) return max;
  let over = from;
  let within = max;
  while (within - over > 1) {
    const middle = Math.floor((over + within) / 2);
    if (countWith(middle) > target) over = middle;
    else within = middle;
  }
  return within;
}

/** `current` without the first `units` units (the last user message stays). */
function dropUnits(current: readonly ChatMessage[], plan: ConversationPlan, units: number): ChatMessage[] {
  const dropped = new Set(droppedIndices(plan, units));
  return current.filter((_, index) => !dropped.has(index));
}

function withoutReasoning(message: ChatMessage): ChatMessage {
  const copy = { ...message };
  delete copy.reasoning_content;
  return copy;
}

function indicesWhere(length: number, predicate: (index: number) => boolean): number[] {
  const indices: number[] = [];
  for (let index = 0; index < length; index++) if (predicate(index)) indices.push(index);
  return indices;
}
