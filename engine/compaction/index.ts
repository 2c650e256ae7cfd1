// Auto compaction of long conversations: prunes reasoning of earlier turns, old tool results and, when over the
// working-memory budget, the oldest middle turns, so each request fits and the section-pruning cache still hits.
// See README.md for the rules.

export { compactConversation } from "./compact.js";
export { type CountTextTokens, type CountTokens } from "./estimate.js";
export { type CompactionOptions, DEFAULT_COMPACTION_OPTIONS, type ResolvedCompactionOptions, resolveCompactionOptions } from "./options.js";
export { type CompactionResult, describeCompaction, type PrunedKind, type PrunedPart } from "./result.js";
export { EMPTY_WITHOUT_CLEAN_CUT_CHARS, prunedToolContent } from "./tool-content.js";
