// Operations on code-point DFAs that regular expressions alone do not give: intersection (a format and a pattern on
// one string, a lookahead and what follows it), complement (negative lookaheads, names a key must not be), the DFA of
// a finite set of strings, and restriction to an alphabet (code points a JSON string can hold unescaped).

import { type CharDfa, pushTransition, RangeDfa, spend, type PatternWork, trimDeadStates, type Transition } from "./dfa.js";
import { UnsupportedPatternError } from "./error.js";
import { minimise } from "./minimise.js";
import { type Ranges, subtract } from "./ranges.js";

/**
 * The DFA of strings both `a` and `b` accept: the product automaton over the pairs reachable from (0, 0), minimised,
 * with no dead states; `work` counts the pairs built and the transitions merged.
 * @throws UnsupportedPatternError("more than N DFA states", label) past `maxStates` pairs.
 */
export function intersect(a: CharDfa, b: CharDfa, maxStates: number, label: string, work?: PatternWork): CharDfa {
  const pairs: Array<readonly [number, number]> = [];
  const idOfPair = new Map<number, number>();
  const intern = (x: number, y: number): number => {
    const key = x * b.stateCount + y;
    let id = idOfPair.get(key);
    if (id === undefined) {
      if (pairs.length >= maxStates) throw new UnsupportedPatternError(`more than ${maxStates} DFA states`, label);
      spend(work, 1, label);
      id = pairs.length;
      idOfPair.set(key, id);
      pairs.push([x, y]);
    }
    return id;
  };
  intern(0, 0);
  const accept: boolean[] = [];
  const table: Transition[][] = [];
  for (let id = 0; id < pairs.length; id++) {
    const [x, y] = pairs[id]!;
    const left = a.transitions(x);
    const right = b.transitions(y);
    const transitions: Transition[] = [];
    // Both lists are sorted and disjoint: one sweep yields every overlap.
    for (let i = 0, j = 0; i < left.length && j < right.length;) {
      const [loA, hiA, toA] = left[i]!;
      const [loB, hiB, toB] = right[j]!;
      const lo = Math.max(loA, loB);
      const hi = Math.min(hiA, hiB);
      if (lo <= hi) pushTransition(transitions, lo, hi, intern(toA, toB));
      if (hiA < hiB) i++;
      else j++;
    }
    spend(work, left.length + right.length, label);
    table.push(transitions);
    accept.push(a.accepting(x) && b.accepting(y));
  }
  return trimDeadStates(minimise(new RangeDfa(accept, table)));
}

/** The DFA of the strings over `alphabet` (normalised ranges) that `dfa` rejects, minimised. */
export function complement(dfa: CharDfa, alphabet: Ranges): CharDfa {
  const sink = dfa.stateCount;
  const accept: boolean[] = [];
  const table: Transition[][] = [];
  for (let s = 0; s < dfa.stateCount; s++) {
    const transitions: Transition[] = [];
    // Walk the alphabet and the state's transitions together: covered code points keep their target, gaps go to
    // the sink, code points outside the alphabet are dropped.
    const own = dfa.transitions(s);
    let t = 0;
    for (const [lo, hi] of alphabet) {
      let next = lo;
      while (next <= hi) {
        while (t < own.length && own[t]![1] < next) t++;
        const current = own[t];
        if (current === undefined || current[0] > hi) {
          pushTransition(transitions, next, hi, sink);
          break;
        }
        if (current[0] > next) pushTransition(transitions, next, current[0] - 1, sink);
        const end = Math.min(current[1], hi);
        pushTransition(transitions, Math.max(current[0], next), end, current[2]);
        next = end + 1;
      }
    }
    table.push(transitions);
    accept.push(!dfa.accepting(s));
  }
  table.push(alphabet.map(([lo, hi]) => [lo, hi, sink] as const));
  accept.push(true);
  return trimDeadStates(minimise(new RangeDfa(accept, table)));
}

/** The DFA of exactly `strings` (read as code points): a trie. */
export function stringsDfa(strings: Iterable<string>): CharDfa {
  const children: Array<Map<number, number>> = [new Map()];
  const accept: boolean[] = [false];
  for (const text of strings) {
    let state = 0;
    for (const char of text) {
      const code = char.codePointAt(0)!;
      let next = children[state]!.get(code);
      if (next === undefined) {
        next = children.length;
        children.push(new Map());
        accept.push(false);
        children[state]!.set(code, next);
      }
      state = next;
    }
    accept[state] = true;
  }
  const table = children.map((byCode) => [...byCode].sort((x, y) => x[0] - y[0]).map(([code, target]) => [code, code, target] as const));
  return new RangeDfa(accept, table);
}

/** `dfa` without transitions on the code points in `removed` (normalised ranges), trimmed of the states that die. */
export function restrict(dfa: CharDfa, removed: Ranges): CharDfa {
  // Most DFAs come trimmed and without those code points already (patterns compiled with them excluded).
  if (dfa instanceof RangeDfa && dfa.trimmed && !touches(dfa, removed)) return dfa;
  const accept: boolean[] = [];
  const table: Transition[][] = [];
  for (let s = 0; s < dfa.stateCount; s++) {
    const transitions: Transition[] = [];
    for (const [lo, hi, target] of dfa.transitions(s)) {
      for (const [from, to] of subtract([[lo, hi]], removed)) pushTransition(transitions, from, to, target);
    }
    table.push(transitions);
    accept.push(dfa.accepting(s));
  }
  return trimDeadStates(new RangeDfa(accept, table));
}

/** Whether some transition of `dfa` covers a code point in `ranges` (normalised). */
function touches(dfa: CharDfa, ranges: Ranges): boolean {
  for (let s = 0; s < dfa.stateCount; s++) {
    for (const [lo, hi] of dfa.transitions(s)) if (ranges.some(([from, to]) => from <= hi && lo <= to)) return true;
  }
  return false;
}

/** Whether `dfa` accepts `text` (read as code points). */
export function dfaAccepts(dfa: CharDfa, text: string): boolean {
  let state = 0;
  for (const char of text) {
    state = dfa.next(state, char.codePointAt(0)!);
    if (state < 0) return false;
  }
  return dfa.accepting(state);
}
