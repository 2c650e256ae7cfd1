// What auto compaction reports per request: what it pruned and the tokens that saved, plus a one-line summary for logs.

import type { ChatMessage } from "../chat/messages.js";

/** The kinds of pruning, in the order they are applied. */
export type PrunedKind = "reasoning" | "tool_result" | "turns";

/** One kind of pruning that happened. */
export interface PrunedPart {
  /** "reasoning": earlier turns' `reasoning_content` removed; "tool_result": old tool results cut to a short tail; "turns": old messages dropped. */
  kind: PrunedKind;
  /** Indices in the ORIGINAL message list of the messages affected, ascending. */
  messageIndices: number[];
  /** Prompt tokens this step saved: the count before it minus the count after it (steps applied in the order above). */
  tokensSaved: number;
}

/** The outcome of {@link compactConversation}. */
export interface CompactionResult {
  /**
   * The compacted conversation: a new array (unchanged messages are the input objects; changed ones are copies).
   * It is an array `countTokens` was called with and returned `tokensAfter` for, so its rendering can be reused.
   */
  messages: ChatMessage[];
  /** What was pruned, one entry per kind that pruned anything, in the order applied. */
  pruned: PrunedPart[];
  /** Prompt tokens of the input conversation. */
  tokensBefore: number;
  /** Prompt tokens of the compacted conversation. */
  tokensAfter: number;
  /** tokensBefore - tokensAfter. */
  tokensSaved: number;
  /** True when even the compacted conversation is over the budget (nothing more could be dropped). */
  overBudget: boolean;
}

const KIND_LABELS: Record<PrunedKind, string> = { reasoning: "reasoning", tool_result: "tool results", turns: "turns" };

/** One line for logs, e.g. `auto compaction: 5200 -> 3100 tokens (saved 2100): reasoning [3,5] -400, tool results [2] -1200, turns [4-9] -500`. */
export function describeCompaction(result: CompactionResult): string {
  const over = result.overBudget ? "; still over budget" : "";
  if (result.pruned.length === 0) return `auto compaction: nothing pruned (${result.tokensBefore} tokens)${over}`;
  const parts = result.pruned.map((part) => `${KIND_LABELS[part.kind]} [${ranges(part.messageIndices)}] -${part.tokensSaved}`);
  return `auto compaction: ${result.tokensBefore} -> ${result.tokensAfter} tokens (saved ${result.tokensSaved}): ${parts.join(", ")}${over}`;
}

/** Ascending indices as ranges: [1, 2, 3, 7] -> "1-3,7". */
function ranges(indices: readonly number[]): string {
  const out: string[] = [];
  for (let start = 0; start < indices.length; ) {
    let end = start;
    while (end + 1 < indices.length && indices[end + 1] === indices[end]! + 1) end++;
    out.push(end === start ? `${indices[start]}` : `${indices[start]}-${indices[end]}`);
    start = end + 1;
  }
  return out.join(",");
}
