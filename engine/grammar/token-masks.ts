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

  /**
   * The tokens allowed in `state` (cached on the state). Inside plain string content the plain tokens that fit are
   * one precomputed mask, and only the other tokens are walked.
   */
  mask(state: MatchState): TokenMask {
    if (state.mask) return state.mask;
    const only = state.threads.length === 1 ? state.threads[0]! : undefined;
    const room = only?.lexeme.plainRoom?.(only.lexemeState);
    const plain = this.trie.plain;
    let mask: TokenMask;
    if (room !== undefined && plain) {
      mask = plain.mask(room).slice();
      this.walk(state, plain.others, mask);
    } else {
      mask = new Uint32Array((this.trie.vocabularySize + 31) >>> 5);
      this.walk(state, this.trie, mask);
    }
    if (state.accepting) for (const id of this.endTokens) mask[id >>> 5]! |= 1 << (id & 31);
    state.mask = mask;
    this.computed++;
    return mask;
  }

  /** Adds to `mask` the tokens of `trie` that `state` allows: one depth-first walk, skipping rejected subtrees. */
  private walk(state: MatchState, trie: TokenTrie, mask: TokenMask): void {
    const automaton = this.automaton;
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
  }
}

/** Whether `token` is in `mask`. */
export function maskHas(mask: TokenMask, token: number): boolean {
  return (mask[token >>> 5]! & (1 << (token & 31))) !== 0;
}

/**
 * Writes into `out` (another array than `logits`) the logits of the tokens in `mask` and -Infinity for every other
 * token. Iterates over whichever
 * is fewer: a sparse mask (between JSON tokens) copies its few allowed logits into a row of -Infinity; a dense one
 * (inside a string) copies the row and clears its few disallowed tokens.
 */
export function maskLogits(logits: Float32Array, mask: TokenMask, out: Float32Array): void {
  const length = logits.length;
  const words = Math.min(mask.length, (length + 31) >>> 5);
  let allowed = 0;
  for (let w = 0; w < words; w++) allowed += popcount(mask[w]!);
  if (allowed * 2 < length) {
    out.fill(-Infinity);
    for (let w = 0; w < words; w++) {
      for (let bits = mask[w]!; bits !== 0; bits &= bits - 1) {
        const id = (w << 5) | (31 - Math.clz32(bits & -bits));
        if (id < length) out[id] = logits[id]!;
      }
    }
    return;
  }
  out.set(logits);
  for (let w = 0; w < words; w++) {
    for (let zeros = ~mask[w]!; zeros !== 0; zeros &= zeros - 1) {
      const id = (w << 5) | (31 - Math.clz32(zeros & -zeros));
      if (id < length) out[id] = -Infinity;
    }
  }
  out.fill(-Infinity, words << 5);
}

function popcount(x: number): number {
  x -= (x >>> 1) & 0x55555555;
  x = (x & 0x33333333) + ((x >>> 2) & 0x33333333);
  return (((x + (x >>> 4)) & 0x0f0f0f0f) * 0x01010101) >>> 24;
}
