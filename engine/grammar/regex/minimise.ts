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

  // Blocks are contiguous segments of one array of states, so that splitting moves only the states that leave a block
  // (splitting by filtering whole blocks was quadratic on long chains such as [a-z]{1,800}).
  const elements = new Int32Array(n + 1);
  const position = new Int32Array(n + 1);
  const blockOf = new Int32Array(n + 1);
  const first: number[] = [];
  const end: number[] = [];
  let fill = 0;
  const place = (s: number, block: number) => {
    elements[fill] = s;
    position[s] = fill++;
    blockOf[s] = block;
  };
  first.push(0);
  place(sink, 0);
  for (let s = 0; s < n; s++) if (!dfa.accepting(s)) place(s, 0);
  end.push(fill);
  if (fill <= n) {
    first.push(fill);
    for (let s = 0; s < n; s++) if (dfa.accepting(s)) place(s, 1);
    end.push(fill);
  }
  const work = first.map((_, b) => b);

  while (work.length > 0) {
    const splitter = work.pop()!;
    // For each state with an edge into the splitter: the code points that lead there.
    const into = new Map<number, [number, number][]>();
    for (let k = first[splitter]!; k < end[splitter]!; k++) {
      const edges = inEdges[elements[k]!]!;
      for (let i = 0; i < edges.length; i += 3) {
        let ranges = into.get(edges[i]!);
        if (ranges === undefined) into.set(edges[i]!, (ranges = []));
        ranges.push([edges[i + 1]!, edges[i + 2]!]);
      }
    }
    // Within each block, group those states by that code-point set.
    const groups = new Map<number, Map<string, number[]>>();
    for (const [s, ranges] of into) {
      let byKey = groups.get(blockOf[s]!);
      if (byKey === undefined) groups.set(blockOf[s]!, (byKey = new Map()));
      const key = rangesKey(ranges);
      const group = byKey.get(key);
      if (group === undefined) byKey.set(key, [s]);
      else group.push(s);
    }
    for (const [b, byKey] of groups) {
      const parts = [...byKey.values()];
      const size = end[b]! - first[b]!;
      if (parts.length === 1 && parts[0]!.length === size) continue;
      // Move each group to the back of the segment, one after another: [untouched | group ... | group].
      const segments: Array<[number, number]> = [];
      let cut = end[b]!;
      for (const part of parts) {
        const top = cut;
        for (const s of part) {
          cut--;
          const other = elements[cut]!;
          const at = position[s]!;
          elements[at] = other;
          position[other] = at;
          elements[cut] = s;
          position[s] = cut;
        }
        segments.push([cut, top]);
      }
      if (cut > first[b]!) segments.push([first[b]!, cut]);
      // The largest part keeps the block's id (and its place in the queue, if any); queueing the others is
      // Hopcroft's rule whether or not the block was still waiting. Only the others' states are relabelled.
      let largest = 0;
      for (let i = 1; i < segments.length; i++) if (segments[i]![1] - segments[i]![0] > segments[largest]![1] - segments[largest]![0]) largest = i;
      for (const [i, [from, to]] of segments.entries()) {
        if (i === largest) {
          first[b] = from;
          end[b] = to;
          continue;
        }
        const id = first.length;
        first.push(from);
        end.push(to);
        for (let k = from; k < to; k++) blockOf[elements[k]!] = id;
        work.push(id);
      }
    }
  }

  const dead = blockOf[sink];
  if (blockOf[0] === dead) return new RangeDfa([false], [[]], true);
  const number = new Map<number, number>([[blockOf[0], 0]]);
  const order = [blockOf[0]];
  const accept: boolean[] = [];
  const table: Transition[][] = [];
  for (let i = 0; i < order.length; i++) {
    const representative = elements[first[order[i]!]!]!;
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
  // A block apart from the sink's can reach acceptance (the sink never accepts): the result is trimmed.
  return new RangeDfa(accept, table, true);
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
