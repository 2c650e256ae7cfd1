// The grammar of a JSON array with a count range: item i follows the rule for "after i items", so per-position items
// (prefixItems) and counts are exact; past the last fixed position the rule repeats itself.
import type { GrammarBuilder, GrammarSymbol } from "../grammar.js";
import type { Gaps } from "./layout.js";

/** What an array holds: the item at each position, and how many. */
export interface ArrayShape {
  /** The item symbol at position `index` (0-based). */
  item(index: number): GrammarSymbol;
  minItems: number;
  /** Infinity for no maximum. */
  maxItems: number;
  /** Positions whose item differs from the next (prefixItems, and minItems to count): the rules unrolled. */
  fixed: number;
}

/** The rule of `[` items `]` for `shape`. `name` labels the rules. */
export function arrayRule(b: GrammarBuilder, name: string, shape: ArrayShape, gaps: Gaps): GrammarSymbol {
  const { minItems, maxItems } = shape;
  const comma = [b.literal(","), ...gaps.comma];
  // after[i]: what may follow the first i items; the last one loops when there is no maximum.
  const last = Number.isFinite(maxItems) ? maxItems : Math.max(shape.fixed, 1);
  const after: number[] = [];
  for (let i = 0; i <= last; i++) after.push(b.declare(`${name}/items@${i}`));
  for (let i = 1; i <= last; i++) {
    const alternatives: GrammarSymbol[][] = [];
    if (i >= minItems) alternatives.push([]);
    if (i < maxItems) alternatives.push([...comma, shape.item(i), b.ref(after[i === last ? last : i + 1]!)]);
    b.define(after[i]!, alternatives);
  }
  b.define(after[0]!, []); // unused: the first item has no comma
  const alternatives: GrammarSymbol[][] = [];
  if (minItems === 0) alternatives.push([b.literal("[]")]);
  if (maxItems > 0) alternatives.push([b.literal("["), ...gaps.open, shape.item(0), b.ref(after[Math.min(1, last)]!), ...gaps.close, b.literal("]")]);
  return b.ref(b.rule(`${name}/array`, alternatives));
}
