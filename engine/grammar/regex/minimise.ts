// DFA minimisation by Hopcroft's partition refinement, with whole blocks as splitters: a splitter block
// separates states whose code-point sets leading into it differ, which handles every symbol at once and
// needs no global alphabet. Missing transitions go to an explicit sink, so dead states merge with it and vanish.

import { type CharDfa, pushTransition, RangeDfa, type Transition } from "./dfa.js";
import { MAX_CODE_POINT } from "./ranges.js";

/** The minimal DFA for the language of `dfa`, states numbered breadth-first from the start; no dead states. */
export function minimise(dfa: CharDfa): RangeDfa {
  const n = dfa.stateCount;
  const sink = n;
  // inEdges[t] holds triples (source, lo, hi); the gaps in each state's transitions lead to the sink.
  const inEdges: number[][] = Array.from({ length: n + 1 }, () => []);
  for (let s = 0; s < n; s++) {
    let next = 0;
    for (const [lo, hi, t] of dfa.transitions(s)) {
      if (lo > next) inEdges[sink].push(s, next, lo - 1);
      inEdges[t].push(s, lo, hi);
      next = hi + 1;
    }
    if (next <= MAX_CODE_POINT) inEdges[sink].push(s, next, MAX_CODE_POINT);
  }
  inEdges[sink].push(sink, 0, MAX_CODE_POINT);

  const blockOf = new Int32Array(n + 1);
  const accepting: number[] = [];
  const rejecting: number[] = [sink];
  for (let s = 0; s < n; s++) (dfa.accepting(s) ? accepting : rejecting).push(s);
  const blocks = accepting.length > 0 ? [rejecting, accepting] : [rejecting];
  for (const s of accepting) blockOf[s] = 1;
  const work = blocks.map((_, b) => b);

  while (work.length > 0) {
    const splitter = work.pop()!;
    // For each state with an edge into the splitter: the code points that lead there.
    const into = new Map<number, [number, number][]>();
    for (const t of blocks[splitter]) {
      const edges = inEdges[t];
      for (let i = 0; i < edges.length; i += 3) {
        let ranges = into.get(edges[i]);
        if (ranges === undefined) into.set(edges[i], (ranges = []));
        ranges.push([edges[i + 1], edges[i + 2]]);
      }
    }
    // Within each block, group those states by that code-point set.
    const groups = new Map<number, Map<string, number[]>>();
    for (const [s, ranges] of into) {
      let byKey = groups.get(blockOf[s]);
      if (byKey === undefined) groups.set(blockOf[s], (byKey = new Map()));
      const key = rangesKey(ranges);
      const group = byKey.get(key);
      if (group === undefined) byKey.set(key, [s]);
      else group.push(s);
    }
    for (const [b, byKey] of groups) {
      const parts = [...byKey.values()];
      const touched = parts.reduce((sum, part) => sum + part.length, 0);
      if (touched < blocks[b].length) parts.push(blocks[b].filter((s) => !into.has(s)));
      if (parts.length === 1) continue;
      // The largest part keeps the block's id (and its place in the queue, if any); queueing the others is
      // Hopcroft's rule whether or not the block was still waiting.
      parts.sort((x, y) => y.length - x.length);
      blocks[b] = parts[0];
      for (const part of parts.slice(1)) {
        const id = blocks.length;
        blocks.push(part);
        for (const s of part) blockOf[s] = id;
        work.push(id);
      }
    }
  }

  const dead = blockOf[sink];
  if (blockOf[0] === dead) return new RangeDfa([false], [[]]);
  const number = new Map<number, number>([[blockOf[0], 0]]);
  const order = [blockOf[0]];
  const accept: boolean[] = [];
  const table: Transition[][] = [];
  for (let i = 0; i < order.length; i++) {
    const representative = blocks[order[i]][0];
    const transitions: Transition[] = [];
    for (const [lo, hi, t] of dfa.transitions(representative)) {
      const b = blockOf[t];
      if (b === dead) continue;
      let id = number.get(b);
      if (id === undefined) {
        id = order.length;
        number.set(b, id);
        order.push(b);
      }
      pushTransition(transitions, lo, hi, id);
    }
    table.push(transitions);
    accept.push(dfa.accepting(representative));
  }
  return new RangeDfa(accept, table);
}

/** A canonical string for a set of disjoint ranges given in any order. */
function rangesKey(ranges: [number, number][]): string {
  ranges.sort((a, b) => a[0] - b[0]);
  let key = "";
  let lo = ranges[0][0];
  let hi = ranges[0][1];
  for (let i = 1; i < ranges.length; i++) {
    if (ranges[i][0] === hi + 1) {
      hi = ranges[i][1];
    } else {
      key += `${lo}-${hi},`;
      lo = ranges[i][0];
      hi = ranges[i][1];
    }
  }
  return key + `${lo}-${hi}`;
}
