// Thompson construction: each AST node becomes a fragment with one entry and one exit state joined by
// epsilon edges; every state has at most one code-point edge. Excluded code points are removed here, so no
// later stage ever sees them.

import type { CharDfa } from "./dfa.js";
import { UnsupportedPatternError } from "./error.js";
import type { RegexNode, TopAlternative } from "./parse.js";
import { ANY, type Ranges, subtract } from "./ranges.js";

/** Most NFA states a pattern may expand to (counted repetitions copy their operand). */
export const MAX_NFA_STATES = 100_000;

/** A code-point edge: any code point in `ranges` leads to `target`. */
export interface NfaEdge {
  readonly ranges: Ranges;
  readonly target: number;
}

/** A Thompson NFA: states are 0..epsilon.length-1. */
export interface Nfa {
  readonly start: number;
  readonly accept: number;
  /** Epsilon successors of each state. */
  readonly epsilon: ReadonlyArray<readonly number[]>;
  /** The code-point edge leaving each state, if any. */
  readonly edge: ReadonlyArray<NfaEdge | undefined>;
  /** States that accept every string of allowed code points: the [\s\S]* after a search-mode match. */
  readonly universal: readonly number[];
}

interface Fragment {
  readonly start: number;
  readonly end: number;
}

const ANYTHING: RegexNode = { kind: "repeat", node: { kind: "set", ranges: ANY }, min: 0, max: Infinity };

/** How {@link buildNfa} reads the alternatives. */
export interface NfaOptions {
  /**
   * An alternative without ^ gets a [\s\S]* prefix and one without $ a [\s\S]* suffix (RegExp.test semantics);
   * without it, anchors change nothing.
   */
  readonly search: boolean;
  /** Code points removed from every edge (normalised). */
  readonly excluded: Ranges;
}

/** Builds the NFA of the union of `alternatives` (lookaheads already resolved). */
export function buildNfa(alternatives: readonly TopAlternative[], options: NfaOptions, pattern: string): Nfa {
  const { search, excluded } = options;
  const builder = new Builder(excluded, pattern);
  const universal: number[] = [];
  const start = builder.state();
  const accept = builder.state();
  for (const { node, anchoredStart, anchoredEnd } of alternatives) {
    let end = start;
    if (search && !anchoredStart) end = builder.append(end, ANYTHING);
    end = builder.append(end, node);
    if (search && !anchoredEnd) {
      // The suffix loop's exit leads to `accept` by epsilon edges alone, so it accepts anything from here on.
      end = builder.append(end, ANYTHING);
      universal.push(end);
    }
    builder.epsilon[end].push(accept);
  }
  return { start, accept, epsilon: builder.epsilon, edge: builder.edge, universal };
}

class Builder {
  readonly epsilon: number[][] = [];
  readonly edge: (NfaEdge | undefined)[] = [];
  /**
   * Each distinct set with the excluded code points removed, one object per set: repetitions build the
   * same set many times, and subset construction groups edges by Ranges identity.
   */
  private readonly allowed = new Map<string, Ranges>();

  constructor(private readonly excluded: Ranges, private readonly pattern: string) {}

  build(node: RegexNode): Fragment {
    switch (node.kind) {
      case "set": {
        const start = this.state();
        const end = this.state();
        const key = node.ranges.join(";");
        let ranges = this.allowed.get(key);
        if (ranges === undefined) this.allowed.set(key, (ranges = subtract(node.ranges, this.excluded)));
        this.edge[start] = { ranges, target: end };
        return { start, end };
      }
      case "dfa":
        return this.embed(node.dfa);
      case "look":
        throw new Error("lookaheads must be resolved before the NFA is built");
      case "seq": {
        const start = this.state();
        let end = start;
        for (const item of node.items) end = this.append(end, item);
        return { start, end };
      }
      case "alt": {
        const start = this.state();
        const end = this.state();
        for (const option of node.options) {
          const fragment = this.build(option);
          this.epsilon[start].push(fragment.start);
          this.epsilon[fragment.end].push(end);
        }
        return { start, end };
      }
      case "repeat":
        return this.repeat(node.node, node.min, node.max);
    }
  }

  /** A DFA as a fragment: a state per DFA state, an edge state per transition, accepting states to the end. */
  private embed(dfa: CharDfa): Fragment {
    const states = Array.from({ length: dfa.stateCount }, () => this.state());
    const end = this.state();
    for (let s = 0; s < dfa.stateCount; s++) {
      for (const [lo, hi, target] of dfa.transitions(s)) {
        const edge = this.state();
        this.edge[edge] = { ranges: [[lo, hi]], target: states[target]! };
        this.epsilon[states[s]!]!.push(edge);
      }
      if (dfa.accepting(s)) this.epsilon[states[s]!]!.push(end);
    }
    return { start: states[0]!, end };
  }

  /** `min` copies, then a loop (max Infinity) or `max - min` optional copies. */
  private repeat(node: RegexNode, min: number, max: number): Fragment {
    const start = this.state();
    let end = start;
    for (let i = 0; i < min; i++) end = this.append(end, node);
    if (max === Infinity) {
      const loop = this.state();
      this.epsilon[end].push(loop);
      const body = this.build(node);
      this.epsilon[loop].push(body.start);
      this.epsilon[body.end].push(loop);
      return { start, end: loop };
    }
    if (max > min) {
      // NOTE: every optional copy may skip straight to the exit, so after k copies the active set stays
      // small (nesting (x(x(x)?)?)? would keep k exits alive and make subset construction quadratic).
      const exit = this.state();
      for (let i = min; i < max; i++) {
        this.epsilon[end].push(exit);
        end = this.append(end, node);
      }
      this.epsilon[end].push(exit);
      end = exit;
    }
    return { start, end };
  }

  /** Builds `node` after state `from`; returns the new end. */
  append(from: number, node: RegexNode): number {
    const fragment = this.build(node);
    this.epsilon[from].push(fragment.start);
    return fragment.end;
  }

  state(): number {
    if (this.epsilon.length >= MAX_NFA_STATES) {
      throw new UnsupportedPatternError(`pattern expands to more than ${MAX_NFA_STATES} NFA states`, this.pattern);
    }
    this.epsilon.push([]);
    this.edge.push(undefined);
    return this.epsilon.length - 1;
  }
}
