// DFAs over code points with range transitions: the table type, subset construction from a Thompson NFA,
// and dead-state trimming.

import { UnsupportedPatternError } from "./error.js";
import type { Nfa } from "./nfa.js";
import type { Ranges } from "./ranges.js";

/** One transition: code points lo..hi (inclusive) lead to `target`. */
export type Transition = readonly [lo: number, hi: number, target: number];

/** A DFA over code points. State 0 is the start. Transitions are sorted, disjoint, inclusive code-point ranges. */
export interface CharDfa {
  readonly stateCount: number;
  accepting(state: number): boolean;
  /** The next state on `codePoint`, or -1 when no transition. */
  next(state: number, codePoint: number): number;
  /** The outgoing transitions of `state` as [lo, hi, target] with lo <= hi, sorted by lo, non-overlapping. */
  transitions(state: number): ReadonlyArray<readonly [lo: number, hi: number, target: number]>;
}

/**
 * A running count of the work of building automata, for callers that bound it across many: a unit per state built,
 * per NFA state visited or target collected in subset construction, per transition merged in a product, and per
 * transition times log2(states) for minimisation (states alone misjudge the time tenfold between a chain like
 * [a-z]{800} and a search like [ab]*a[ab]{11}). Past `limit`, building stops with UnsupportedPatternError.
 */
export interface PatternWork {
  units: number;
  readonly limit: number;
}

/** Counts `units` more of work. */
export function spend(work: PatternWork | undefined, units: number, label: string): void {
  if (work && (work.units += units) > work.limit) throw new UnsupportedPatternError(`more than ${work.limit} units of automaton work in all`, label);
}

/** A CharDfa stored as one sorted transition array per state; `next` binary-searches it. */
export class RangeDfa implements CharDfa {
  constructor(
    private readonly accept: ReadonlyArray<boolean>,
    private readonly table: ReadonlyArray<ReadonlyArray<Transition>>,
    /** Made by trimDeadStates: every state can reach acceptance (but for the lone dead start of an empty language). */
    readonly trimmed = false,
  ) {}

  get stateCount(): number {
    return this.table.length;
  }

  accepting(state: number): boolean {
    return this.accept[state] === true;
  }

  /** The next state on `codePoint`, or -1 when no transition (also from state -1, so a run can go on blindly). */
  next(state: number, codePoint: number): number {
    const transitions = this.table[state];
    if (transitions === undefined) return -1;
    let lo = 0;
    let hi = transitions.length - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      const t = transitions[mid];
      if (codePoint < t[0]) hi = mid - 1;
      else if (codePoint > t[1]) lo = mid + 1;
      else return t[2];
    }
    return -1;
  }

  transitions(state: number): ReadonlyArray<Transition> {
    return this.table[state];
  }
}

/** Appends a transition, merging it into the previous one when they touch and share a target. */
export function pushTransition(list: Transition[], lo: number, hi: number, target: number): void {
  const last = list[list.length - 1];
  if (last !== undefined && last[2] === target && last[1] + 1 === lo) list[list.length - 1] = [last[0], hi, target];
  else list.push([lo, hi, target]);
}

/**
 * Subset construction. Each DFA state is the set of NFA states with a code-point edge (plus the accept state)
 * in an epsilon closure; the code points leaving a set are cut into intervals at every range boundary of
 * its edges, and each interval's successor set becomes one transition. Throws past `maxStates` states.
 */
export function determinise(nfa: Nfa, maxStates: number, pattern: string, work?: PatternWork): RangeDfa {
  const mark = new Int32Array(nfa.epsilon.length);
  const isUniversal = new Uint8Array(nfa.epsilon.length);
  for (const s of nfa.universal) isUniversal[s] = 1;
  let universalSet: Int32Array | undefined;
  let epoch = 0;
  const closure = (seeds: Iterable<number>, collapse = true): Int32Array => {
    epoch++;
    const stack = [...seeds];
    const kept: number[] = [];
    let universal = false;
    let visited = 0;
    while (stack.length > 0) {
      const s = stack.pop()!;
      if (mark[s] === epoch) continue;
      mark[s] = epoch;
      visited++;
      universal ||= isUniversal[s] === 1;
      // NOTE: pure epsilon states do not affect the future, so leaving them out merges more subsets.
      if (nfa.edge[s] !== undefined || s === nfa.accept) kept.push(s);
      for (const t of nfa.epsilon[s]) if (mark[t] !== epoch) stack.push(t);
    }
    spend(work, visited, pattern);
    if (universal && collapse) {
      // Every set holding a universal state has the same language (all allowed strings): share one DFA
      // state instead of tracking partial matches that no longer matter.
      return (universalSet ??= closure([nfa.universal[0]], false));
    }
    return Int32Array.from(kept).sort();
  };

  const sets: Int32Array[] = [];
  const idOfSet = new Map<string, number>();
  const intern = (set: Int32Array): number => {
    const key = setKey(set);
    let id = idOfSet.get(key);
    if (id === undefined) {
      if (sets.length >= maxStates) throw new UnsupportedPatternError(`more than ${maxStates} DFA states`, pattern);
      spend(work, 1, pattern);
      id = sets.length;
      idOfSet.set(key, id);
      sets.push(set);
    }
    return id;
  };
  // Successor sets keyed by the edge targets taken, so each closure is computed once.
  const idOfTargets = new Map<string, number>();

  intern(closure([nfa.start]));
  const accept: boolean[] = [];
  const table: Transition[][] = [];
  for (let id = 0; id < sets.length; id++) {
    // Edge targets grouped by range set: the copies made by a repetition share one Ranges object, so the
    // cutting below works per distinct set rather than per edge.
    const groups = new Map<Ranges, number[]>();
    for (const s of sets[id]) {
      const edge = nfa.edge[s];
      if (edge === undefined) continue;
      const targets = groups.get(edge.ranges);
      if (targets === undefined) groups.set(edge.ranges, [edge.target]);
      else targets.push(edge.target);
    }
    const entries = [...groups];
    const cuts = entries.flatMap(([ranges]) => ranges.flatMap(([lo, hi]) => [lo, hi + 1])).sort((a, b) => a - b);
    const cursor = new Int32Array(entries.length);
    const transitions: Transition[] = [];
    for (let k = 0; k + 1 < cuts.length; k++) {
      const lo = cuts[k];
      if (lo === cuts[k + 1]) continue;
      const targets: number[] = [];
      for (let i = 0; i < entries.length; i++) {
        const ranges = entries[i][0];
        while (cursor[i] < ranges.length && ranges[cursor[i]][1] < lo) cursor[i]++;
        if (cursor[i] < ranges.length && ranges[cursor[i]][0] <= lo) for (const t of entries[i][1]) targets.push(t);
      }
      if (targets.length === 0) continue;
      const key = setKey(Int32Array.from(targets).sort());
      let target = idOfTargets.get(key);
      if (target === undefined) idOfTargets.set(key, (target = intern(closure(targets))));
      pushTransition(transitions, lo, cuts[k + 1] - 1, target);
      spend(work, targets.length, pattern);
    }
    // Minimisation then refines over these transitions, about log2(states) times each.
    spend(work, sets[id].length + cuts.length + transitions.length * Math.ceil(Math.log2(sets.length + 1)), pattern);
    table.push(transitions);
    accept.push(sets[id].includes(nfa.accept));
  }
  return new RangeDfa(accept, table);
}

/**
 * A map key for a sorted set of NFA states: its bytes as UTF-16 units, several times cheaper than joining decimals
 * (sets run to thousands of states under counted repetitions, and every DFA state builds a few keys).
 */
function setKey(set: Int32Array): string {
  const units = new Uint16Array(set.buffer, set.byteOffset, set.length * 2);
  let key = "";
  for (let i = 0; i < units.length; i += 8192) key += String.fromCharCode.apply(null, units.subarray(i, i + 8192) as unknown as number[]);
  return key;
}

/**
 * Removes states from which no accepting state can be reached (transitions into them are dropped), so that
 * every remaining state can still complete; returns the trimmed DFA (state 0 stays the start; if the start
 * itself is dead, returns a DFA with one non-accepting state and no transitions).
 */
export function trimDeadStates(dfa: CharDfa): CharDfa {
  if (dfa instanceof RangeDfa && dfa.trimmed) return dfa;
  const n = dfa.stateCount;
  const predecessors: number[][] = Array.from({ length: n }, () => []);
  const live = new Uint8Array(n);
  const queue: number[] = [];
  for (let s = 0; s < n; s++) {
    for (const [, , t] of dfa.transitions(s)) predecessors[t].push(s);
    if (dfa.accepting(s)) {
      live[s] = 1;
      queue.push(s);
    }
  }
  while (queue.length > 0) {
    for (const p of predecessors[queue.pop()!]) {
      if (live[p] === 0) {
        live[p] = 1;
        queue.push(p);
      }
    }
  }
  if (n === 0 || live[0] === 0) return new RangeDfa([false], [[]], true);

  const renumbered = new Int32Array(n).fill(-1);
  let count = 0;
  for (let s = 0; s < n; s++) if (live[s] === 1) renumbered[s] = count++;
  const accept: boolean[] = [];
  const table: Transition[][] = [];
  for (let s = 0; s < n; s++) {
    if (live[s] === 0) continue;
    const transitions: Transition[] = [];
    for (const [lo, hi, t] of dfa.transitions(s)) if (live[t] === 1) pushTransition(transitions, lo, hi, renumbered[t]);
    table.push(transitions);
    accept.push(dfa.accepting(s));
  }
  return new RangeDfa(accept, table, true);
}
