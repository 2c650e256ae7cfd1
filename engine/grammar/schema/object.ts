// The grammar of a JSON object whose members come in a fixed order: declared properties first (optional ones may be
// left out), then any number of extra members where the schema allows them. Linear in the member count: the rule for
// "after member i" either writes member i or, when it is optional, passes to the rule after it.
import type { GrammarBuilder, GrammarSymbol } from "../grammar.js";
import type { Gaps } from "./layout.js";

/** One property the object may hold, in writing order. */
export interface ObjectMember {
  /** The key and its colon, e.g. the literal `"name":` (the gap after the colon is added here). */
  readonly key: readonly GrammarSymbol[];
  readonly value: GrammarSymbol;
  readonly required: boolean;
}

/**
 * The rule of `{` members `}`: `members` in order, each written unless optional, then, with `extra`, any number of
 * extra members. `name` labels the rules.
 */
export function objectRule(b: GrammarBuilder, name: string, members: readonly ObjectMember[], extra: ObjectMember | undefined, gaps: Gaps): GrammarSymbol {
  const n = members.length;
  const pair = (member: ObjectMember): GrammarSymbol[] => [...member.key, ...gaps.colon, member.value];
  const comma = [b.literal(","), ...gaps.comma];
  // rest[i]: at least one member is written and members before i are settled; first[i]: none written yet.
  const rest: number[] = [];
  const first: number[] = [];
  for (let i = 0; i <= n; i++) {
    rest.push(b.declare(`${name}/after@${i}`));
    first.push(b.declare(`${name}/first@${i}`));
  }
  for (let i = 0; i < n; i++) {
    const member = members[i]!;
    b.define(rest[i]!, [[...comma, ...pair(member), b.ref(rest[i + 1]!)], ...(member.required ? [] : [[b.ref(rest[i + 1]!)]])]);
    b.define(first[i]!, [[...pair(member), b.ref(rest[i + 1]!)], ...(member.required ? [] : [[b.ref(first[i + 1]!)]])]);
  }
  b.define(rest[n]!, extra ? [[], [...comma, ...pair(extra), b.ref(rest[n]!)]] : [[]]);
  // Without extra members first[n] admits nothing, so an object with every member left out is only `{}` below.
  b.define(first[n]!, extra ? [[...pair(extra), b.ref(rest[n]!)]] : []);
  const alternatives: GrammarSymbol[][] = [[b.literal("{"), ...gaps.open, b.ref(first[0]!), ...gaps.close, b.literal("}")]];
  if (!members.some((member) => member.required)) alternatives.push([b.literal("{}")]);
  return b.ref(b.rule(`${name}/object`, alternatives));
}
