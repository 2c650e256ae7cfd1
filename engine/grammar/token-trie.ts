// The vocabulary as a byte trie in depth-first order, for computing which tokens a grammar state allows: one walk
// visits each trie node at most once and skips a whole subtree at the first byte the grammar rejects.
import type { Tokenizer } from "../tokenizer/tokenizer.js";
import { PlainTokens } from "./plain-tokens.js";

/** Tokens as a trie of their bytes; node arrays in preorder. */
export class TokenTrie {
  /** Byte on the edge into each node (node 0 is the root). */
  readonly byte: Uint8Array;
  /** Depth of each node (root 0). */
  readonly depth: Uint16Array;
  /** The preorder index just past each node's subtree. */
  readonly subtreeEnd: Int32Array;
  /** Tokens ending at node n: tokenIds[tokenStart[n] .. tokenStart[n + 1]). */
  readonly tokenStart: Int32Array;
  readonly tokenIds: Int32Array;
  /** Most bytes in one token. */
  readonly maxDepth: number;
  /** The split for string content (set on the vocabulary's own trie by {@link tokenTrie}). */
  plain: PlainTokens | undefined;

  /**
   * @param vocabularySize mask width (the model's vocabulary, which may exceed the tokenizer's).
   * @param tokens the tokens that may be generated under a grammar and their bytes.
   */
  constructor(readonly vocabularySize: number, tokens: Array<{ id: number; bytes: Uint8Array }>) {
    tokens.sort((a, b) => compareBytes(a.bytes, b.bytes) || a.id - b.id);
    const bytes: number[] = [0];
    const depths: number[] = [0];
    const ends: number[] = [0];
    const ownerOf: number[] = []; // node of each token, in sorted order
    const path: number[] = [0]; // node at each depth of the current token
    let previous: Uint8Array = new Uint8Array(0);
    for (const token of tokens) {
      let common = 0;
      while (common < previous.length && common < token.bytes.length && previous[common] === token.bytes[common]) common++;
      while (path.length - 1 > common) ends[path.pop()!] = bytes.length;
      for (let i = common; i < token.bytes.length; i++) {
        path.push(bytes.length);
        bytes.push(token.bytes[i]!);
        depths.push(i + 1);
        ends.push(0);
      }
      ownerOf.push(path[path.length - 1]!);
      previous = token.bytes;
    }
    while (path.length > 0) ends[path.pop()!] = bytes.length;
    const nodes = bytes.length;
    this.byte = Uint8Array.from(bytes);
    this.depth = Uint16Array.from(depths);
    this.subtreeEnd = Int32Array.from(ends);
    this.maxDepth = depths.reduce((max, d) => Math.max(max, d), 0);
    // Tokens by node (sorted order already groups each node's tokens).
    this.tokenStart = new Int32Array(nodes + 1);
    for (const node of ownerOf) this.tokenStart[node + 1]!++;
    for (let n = 0; n < nodes; n++) this.tokenStart[n + 1]! += this.tokenStart[n]!;
    this.tokenIds = new Int32Array(tokens.length);
    const fill = this.tokenStart.slice(0, nodes);
    tokens.forEach((token, i) => {
      this.tokenIds[fill[ownerOf[i]!]!++] = token.id;
    });
  }

  get nodeCount(): number {
    return this.byte.length;
  }
}

const tries = new WeakMap<Tokenizer, Map<number, TokenTrie>>();

/**
 * The trie of the tokens a constrained generation may produce with `tokenizer`: every token with bytes except control
 * and unknown tokens (end-of-generation tokens are allowed separately, when the output is complete). Built once per
 * tokenizer and vocabulary size.
 */
export function tokenTrie(tokenizer: Tokenizer, vocabularySize = tokenizer.vocabSize): TokenTrie {
  let bySize = tries.get(tokenizer);
  if (!bySize) tries.set(tokenizer, (bySize = new Map()));
  let trie = bySize.get(vocabularySize);
  if (!trie) {
    const tokens: Array<{ id: number; bytes: Uint8Array }> = [];
    for (let id = 0; id < Math.min(vocabularySize, tokenizer.vocabSize); id++) {
      if (tokenizer.isSpecial(id) || tokenizer.isEndOfGeneration(id)) continue;
      const bytes = tokenizer.tokenBytes(id);
      if (bytes.length > 0) tokens.push({ id, bytes });
    }
    trie = new TokenTrie(vocabularySize, tokens);
    trie.plain = new PlainTokens(vocabularySize, tokens);
    bySize.set(vocabularySize, trie);
  }
  return trie;
}

function compareBytes(a: Uint8Array, b: Uint8Array): number {
  const length = Math.min(a.length, b.length);
  for (let i = 0; i < length; i++) if (a[i] !== b[i]) return a[i]! - b[i]!;
  return a.length - b.length;
}
