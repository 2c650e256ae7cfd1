// Turn dropping as a replay: the number of units to drop is decided request by request over the conversation's
// history (every earlier request, then this one), each decision starting from the previous one. The decision for a
// conversation therefore contains the decision for each of its earlier requests, without any state kept between
// requests.

import type { ResolvedCompactionOptions } from "./options.js";
import { type ConversationPlan, unitEnd } from "./plan.js";
import type { SizeEstimate } from "./estimate.js";

/** The outcome of the replay for the whole conversation. */
export interface ReplayOutcome {
  /** Units dropped, from the oldest. */
  units: number;
  /** The estimated prompt tokens of the whole conversation after (a), (b) and dropping `units`. */
  estimatedTokens: number;
}

/**
 * Replays turn dropping over the requests of the conversation: at each request end (and at the end of the
 * conversation), if the estimated prompt is over `budgetTokens`, more units are dropped, oldest first, until it is at
 * most `targetRatio * budgetTokens` or no unit clear of the last `keepRecentMessages` messages is left.
 *
 * Rules (a) and (b) are applied as they stood at each request (see {@link ConversationPlan}); the last user message
 * of each request is never dropped. Runs in time linear in the number of messages.
 */
export function replayTurnDropping(plan: ConversationPlan, sizes: SizeEstimate, options: ResolvedCompactionOptions): ReplayOutcome {
  const length = plan.length;
  const target = options.targetRatio * options.budgetTokens;

  // Rule changes per prefix length, so that the state at length L is exactly the rules applied to messages[0, L).
  const changes: Array<Array<{ index: number; variant: "without-reasoning" | "pruned-tool" }> | undefined> = new Array(length + 1);
  const schedule = (at: number, index: number, variant: "without-reasoning" | "pruned-tool"): void => {
    if (at > length) return;
    (changes[at] ??= []).push({ index, variant });
  };
  for (let index = 0; index < length; index++) {
    schedule(plan.reasoningPrunedFrom[index]!, index, "without-reasoning");
    schedule(plan.toolPrunedFrom[index]!, index, "pruned-tool");
  }
  const isRequestEnd = new Uint8Array(length + 1);
  for (const end of plan.requestEnds) isRequestEnd[end] = 1;
  isRequestEnd[length] = 1;

  const current = new Float64Array(length);
  let units = 0;
  let droppable = 0;
  let pinnedUser = -1;
  let kept = 0;
  /** Dropped: in one of the first `units` units, unless it is the last user message so far. */
  const isDropped = (index: number): boolean => index !== pinnedUser && plan.unitOf[index]! >= 0 && plan.unitOf[index]! < units;

  for (let prefix = 1; prefix <= length; prefix++) {
    const index = prefix - 1;
    current[index] = sizes.size(index, "full");
    kept += current[index]!;
    if (plan.isUser[index]) {
      // The previous last user message is no longer protected: if its unit is gone, it goes too.
      const previous = pinnedUser;
      pinnedUser = index;
      if (previous >= 0 && isDropped(previous)) kept -= current[previous]!;
    }
    for (const change of changes[prefix] ?? []) {
      const size = sizes.size(change.index, change.variant);
      if (!isDropped(change.index)) kept -= current[change.index]! - size;
      current[change.index] = size;
    }
    if (!isRequestEnd[prefix] || sizes.constant + kept <= options.budgetTokens) continue;
    while (droppable < plan.unitStarts.length && unitEnd(plan, droppable) <= prefix - options.keepRecentMessages) droppable++;
    while (sizes.constant + kept > target && units < droppable) {
      for (let member = plan.unitStarts[units]!; member < unitEnd(plan, units); member++) {
        if (member !== pinnedUser) kept -= current[member]!;
      }
      units++;
    }
  }
  return { units, estimatedTokens: sizes.constant + kept };
}
