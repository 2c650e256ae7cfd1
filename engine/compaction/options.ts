// Auto-compaction settings: the working-memory budget, the windows that protect recent content, and their checks.

/** Settings of {@link compactConversation}. Only the budget is required; the rest default to {@link DEFAULT_COMPACTION_OPTIONS}. */
export interface CompactionOptions {
  /** The working-memory budget for the rendered prompt, in tokens: a positive integer, or Infinity for no budget. */
  budgetTokens: number;
  /** The most recent this-many tool-result messages keep their content (default 2). An integer >= 0. */
  toolResultWindow?: number;
  /** The last this-many messages are never dropped by turn dropping (default 4). An integer >= 1. */
  keepRecentMessages?: number;
  /**
   * When whole turns must be dropped, drop until the prompt is at most `targetRatio * budgetTokens` (default 0.75).
   * The headroom lets the next turns fit without dropping again, so most turns prune a single span and hit the
   * section cache. 1 drops the minimum. A number in (0, 1].
   */
  targetRatio?: number;
}

/** Options with every default filled in and checked. */
export type ResolvedCompactionOptions = Required<CompactionOptions>;

/** The defaults of every option except the budget. */
export const DEFAULT_COMPACTION_OPTIONS: Readonly<Required<Omit<CompactionOptions, "budgetTokens">>> = Object.freeze({
  toolResultWindow: 2,
  keepRecentMessages: 4,
  targetRatio: 0.75,
});

/**
 * Fills in defaults and checks every option.
 * @throws RangeError naming the option when one is out of range or of the wrong type.
 */
export function resolveCompactionOptions(options: CompactionOptions): ResolvedCompactionOptions {
  if (typeof options !== "object" || options === null) throw new TypeError("compaction options must be an object");
  const budgetTokens = options.budgetTokens;
  if (typeof budgetTokens !== "number" || !(budgetTokens === Infinity || (Number.isInteger(budgetTokens) && budgetTokens > 0))) {
    throw new RangeError(`compaction option budgetTokens must be a positive integer or Infinity, got ${String(budgetTokens)}`);
  }
  const toolResultWindow = options.toolResultWindow ?? DEFAULT_COMPACTION_OPTIONS.toolResultWindow;
  if (typeof toolResultWindow !== "number" || !Number.isInteger(toolResultWindow) || toolResultWindow < 0) {
    throw new RangeError(`compaction option toolResultWindow must be an integer >= 0, got ${String(toolResultWindow)}`);
  }
  const keepRecentMessages = options.keepRecentMessages ?? DEFAULT_COMPACTION_OPTIONS.keepRecentMessages;
  if (typeof keepRecentMessages !== "number" || !Number.isInteger(keepRecentMessages) || keepRecentMessages < 1) {
    throw new RangeError(`compaction option keepRecentMessages must be an integer >= 1, got ${String(keepRecentMessages)}`);
  }
  const targetRatio = options.targetRatio ?? DEFAULT_COMPACTION_OPTIONS.targetRatio;
  if (typeof targetRatio !== "number" || !(targetRatio > 0 && targetRatio <= 1)) {
    throw new RangeError(`compaction option targetRatio must be a number in (0, 1], got ${String(targetRatio)}`);
  }
  return { budgetTokens, toolResultWindow, keepRecentMessages, targetRatio };
}
