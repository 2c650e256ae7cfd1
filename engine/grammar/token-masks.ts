// Token masks: which tokens keep the output a valid prefix of the grammar from a given automaton state. Computed by
// one walk of the vocabulary trie through the automaton's cached transitions, and kept on the state, so that a state
// seen before (inside a string, between properties) costs nothing.
import type { GrammarAutomaton, MatchState } from "./automaton.js";
import type { TokenTrie } from "./token-trie.js";

/** A set of token ids as bits: bit (id & 31) of word (id >> 5). */
export type TokenMask = Uint32Array;

/** Computes and caches masks of one automaton for one vocabulary. */
export class TokenMasks {
  private readonly path: Array<MatchState | null>;
  /** Masks computed (cache misses), for statistics. */
  computed = 0;

  constructor(
    readonly automaton: GrammarAutomaton,
    readonly trie: TokenTrie,
    /** Tokens allowed wherever the output may end (end of generation). */
    readonly endTokens: readonly number[],
  ) {
    this.path = new Array(trie.maxDepth + 1).fill(null);
    // Masks are cached on the automaton's states, so one automaton serves one vocabulary.
    if (automaton.vocabulary !== undefined && automaton.vocabulary !== trie) throw new Error("this grammar automaton already computes masks for another vocabulary");
    automaton.vocabulary = trie;
  }

  /** The tokens allowed in `state` (cached on the state). */
  mask(state: MatchState): TokenMask {
    if (state.mask) return state.mask;
    const trie = this.trie;
    const automaton = this.automaton;
    const mask = new Uint32Array((trie.vocabularySize + 31) >>> 5);
    const { byte, depth, subtreeEnd, tokenStart, tokenIds } = trie;
    const path = this.path;
    path[0] = state;
    const nodes = trie.nodeCount;
    for (let node = 1; node < nodes;) {
      const parent = path[depth[node]! - 1]!;
      let next = parent.transitions[byte[node]!];
      if (next === undefined) next = automaton.step(parent, byte[node]!);
      if (next === null) {
        node = subtreeEnd[node]!;
        continue;
      }
      path[depth[node]!] = next;
      for (let t = tokenStart[node]!; t < tokenStart[node + 1]!; t++) {
        const id = tokenIds[t]!;
        mask[id >>> 5]! |= 1 << (id & 31);
      }
      node++;
    }
    if (state.accepting) for (const id of this.endTokens) mask[id >>> 5]! |= 1 << (id & 31);
    state.mask = mask;
    this.computed++;
    return mask;
  }
}

/** Whether `token` is in `mask`. */
export function maskHas(mask: TokenMask, token: number): boolean {
  return (mask[token >>> 5]! & (1 << (token & 31))) !== 0;
}

/** Sets the logits of tokens outside `mask` to -Infinity (in place). */
export function applyMask(logits: Float32Array, mask: TokenMask): void {
  const words = Math.min(mask.length, (logits.length + 31) >>> 5);
  for (let w = 0; w < words; w++) {
    const bits = mask[w]!;
    if (bits === 0xffffffff) continue;
    const base = w << 5;
    const end = Math.min(32, logits.length - base);
    for (let b = 0; b < end; b++) if ((bits & (1 << b)) === 0) logits[base + b] = -Infinity;
  }
  for (let i = words << 5; i < logits.length; i++) logits[i] = -Infinity;
}
