// Tokens that are plain string content: whole UTF-8 characters, none of them `"`, `\` or a control character. Inside
// a JSON string without a pattern such a token only adds characters, so whether it is allowed depends on nothing but
// its length and the room left (maxLength): the masks for every room are unions of tokens by length, computed once
// per vocabulary. The other tokens (quotes, escapes, partial characters: a few percent) get a trie of their own, which
// is all a string state still has to walk.
import { utf8Lead } from "./lexemes/utf8.js";
import { TokenTrie } from "./token-trie.js";

/** The vocabulary split for string content. */
export class PlainTokens {
  /** upTo[k]: the plain tokens of at most k characters (k up to the longest plain token). */
  private readonly upTo: Uint32Array[];
  /** The tokens that are not plain, as a trie to walk. */
  readonly others: TokenTrie;

  constructor(vocabularySize: number, tokens: ReadonlyArray<{ id: number; bytes: Uint8Array }>) {
    const byLength: number[][] = [];
    const others: Array<{ id: number; bytes: Uint8Array }> = [];
    for (const token of tokens) {
      const length = plainLength(token.bytes);
      if (length < 0) others.push(token);
      else (byLength[length] ??= []).push(token.id);
    }
    const words = (vocabularySize + 31) >>> 5;
    this.upTo = [];
    let mask = new Uint32Array(words);
    for (let k = 0; k < byLength.length; k++) {
      mask = mask.slice();
      for (const id of byLength[k] ?? []) mask[id >>> 5]! |= 1 << (id & 31);
      this.upTo.push(mask);
    }
    this.others = new TokenTrie(vocabularySize, others);
  }

  /** The plain tokens of at most `room` characters (Infinity: all). Do not modify. */
  mask(room: number): Uint32Array {
    return this.upTo[Math.min(room, this.upTo.length - 1)]!;
  }
}

/** Characters in `bytes` when they are plain string content (see the file comment), else -1. */
export function plainLength(bytes: Uint8Array): number {
  let characters = 0;
  for (let i = 0; i < bytes.length; characters++) {
    const byte = bytes[i]!;
    if (byte < 0x80) {
      if (byte < 0x20 || byte === 0x22 || byte === 0x5c) return -1;
      i++;
      continue;
    }
    const lead = utf8Lead(byte);
    if (!lead || i + lead.length > bytes.length) return -1;
    const second = bytes[i + 1]!;
    if (second < lead.low || second > lead.high) return -1;
    for (let j = 2; j < lead.length; j++) if ((bytes[i + j]! & 0xc0) !== 0x80) return -1;
    i += lead.length;
  }
  return characters;
}
