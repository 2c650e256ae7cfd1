// Lookaheads as intersections. `(?=A)` asserts that what follows starts with a match of A, so `X (?=A) Y` is X
// followed by the strings of Y-and-the-rest-of-the-pattern that also start with A: (rest) ∩ A.*, or (rest) ∩ A when A
// ends with $; `(?!A)` takes the complement of A.* instead. "The rest" runs to the end of the string, past the
// lookahead's enclosing groups, so it is pushed into them: (P|Q)R becomes (PR|QR) where P or Q holds a lookahead.
// Lookaheads inside a repetition other than `?` are refused (their rest would differ per round).

import { type CharDfa, determinise, type PatternWork, spend, trimDeadStates } from "./dfa.js";
import { complement, intersect } from "./dfa-ops.js";
import { UnsupportedPatternError } from "./error.js";
import { minimise } from "./minimise.js";
import { buildNfa, type NfaOptions } from "./nfa.js";
import type { RegexNode, TopAlternative } from "./parse.js";
import { ANY, complement as complementRanges, type Ranges } from "./ranges.js";

const EMPTY: RegexNode = { kind: "seq", items: [] };
const ANYTHING: RegexNode = { kind: "repeat", node: { kind: "set", ranges: ANY }, min: 0, max: Infinity };

/** How sub-DFAs are built: the pattern's excluded code points and state limit, and its source for errors. */
interface Context {
  readonly excluded: Ranges;
  readonly maxStates: number;
  readonly pattern: string;
  readonly work?: PatternWork;
}

/** Whether a node holds a lookahead anywhere. */
export function hasLookahead(node: RegexNode): boolean {
  switch (node.kind) {
    case "look": return true;
    case "seq": return node.items.some(hasLookahead);
    case "alt": return node.options.some(hasLookahead);
    case "repeat": return hasLookahead(node.node);
    default: return false;
  }
}

/**
 * The alternatives with every lookahead resolved: an alternative holding one becomes its node followed by what may
 * follow it (nothing when anchored or not searching, anything otherwise), intersected where lookaheads stand, and is
 * marked anchored at its end since its tail is now inside it.
 */
export function resolveLookaheads(alternatives: readonly TopAlternative[], options: NfaOptions, maxStates: number, pattern: string, work?: PatternWork): TopAlternative[] {
  const { search, excluded } = options;
  const context: Context = { excluded, maxStates, pattern, work };
  return alternatives.map((alternative) => {
    if (!hasLookahead(alternative.node)) return alternative;
    const tail = search && !alternative.anchoredEnd ? ANYTHING : EMPTY;
    return { node: expand(alternative.node, tail, context), anchoredStart: alternative.anchoredStart, anchoredEnd: true };
  });
}

/** `node` followed by `tail` (which holds no lookahead), with no lookahead left. */
function expand(node: RegexNode, tail: RegexNode, context: Context): RegexNode {
  if (!hasLookahead(node)) return sequence(node, tail);
  switch (node.kind) {
    case "look":
      return { kind: "dfa", dfa: intersect(nodeDfa(tail, context), lookDfa(node, context), context.maxStates, context.pattern, context.work) };
    case "seq":
      return expandSequence(node.items, 0, tail, context);
    case "alt":
      return { kind: "alt", options: node.options.map((option) => expand(option, tail, context)) };
    case "repeat": {
      if (node.max !== 1) throw new UnsupportedPatternError("lookahead inside a repetition", context.pattern);
      const once = expand(node.node, tail, context);
      return node.min === 0 ? { kind: "alt", options: [tail, once] } : once;
    }
    default:
      return sequence(node, tail);
  }
}

function expandSequence(items: readonly RegexNode[], index: number, tail: RegexNode, context: Context): RegexNode {
  if (index === items.length) return tail;
  return expand(items[index]!, expandSequence(items, index + 1, tail, context), context);
}

function sequence(node: RegexNode, tail: RegexNode): RegexNode {
  return tail === EMPTY ? node : { kind: "seq", items: [node, tail] };
}

/** The strings a lookahead admits at its position: A.* (A where anchored), or their complement when negated. */
function lookDfa(look: Extract<RegexNode, { kind: "look" }>, context: Context): CharDfa {
  const options = look.alternatives.map(({ node, anchoredEnd }) => expand(node, anchoredEnd ? EMPTY : ANYTHING, context));
  const dfa = nodeDfa(options.length === 1 ? options[0]! : { kind: "alt", options }, context);
  return look.negate ? complement(dfa, complementRanges(context.excluded)) : dfa;
}

/** The minimal DFA of a lookahead-free node matched whole. */
function nodeDfa(node: RegexNode, context: Context): CharDfa {
  const nfa = buildNfa([{ node, anchoredStart: true, anchoredEnd: true }], { search: false, excluded: context.excluded }, context.pattern);
  spend(context.work, nfa.epsilon.length, context.pattern);
  return trimDeadStates(minimise(determinise(nfa, context.maxStates, context.pattern, context.work)));
}
