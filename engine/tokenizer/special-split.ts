// Splits special and added tokens (<|im_start|>, <s>, user-defined tokens) out of raw text before tokenizing, with
// llama.cpp's `tokenizer_st_partition` semantics: tokens are tried longest first, each one splitting every text
// fragment left by the ones before it; a token's LSTRIP/RSTRIP attribute swallows ASCII whitespace beside it.
import { TokenAttribute } from "./vocabulary.js";

/** A piece of the input: text still to tokenize, or a token already decided. */
export type Fragment = { readonly kind: "text"; readonly text: string } | { readonly kind: "token"; readonly id: number };

interface TrieNode {
  children: Map<number, TrieNode>;
  id: number;
}

const isAsciiSpace = (unit: number): boolean => unit === 0x20 || (unit >= 0x09 && unit <= 0x0d);

/** Finds special tokens in text and partitions it around them. Built once per vocabulary. */
export class SpecialTokenSplitter {
  private readonly root: TrieNode = { children: new Map(), id: -1 };
  /** Position of each special token in the longest-first order. */
  private readonly order = new Map<number, number>();

  constructor(
    private readonly tokens: readonly string[],
    private readonly attributes: Uint16Array,
    private readonly longestFirst: readonly number[],
  ) {
    longestFirst.forEach((id, position) => {
      this.order.set(id, position);
      let node = this.root;
      const text = tokens[id];
      for (let i = 0; i < text.length; i++) {
        const unit = text.charCodeAt(i);
        let child = node.children.get(unit);
        if (!child) {
          child = { children: new Map(), id: -1 };
          node.children.set(unit, child);
        }
        node = child;
      }
      node.id = id;
    });
  }

  /** Special tokens whose text occurs somewhere in `text` (only those can split it), in longest-first order. */
  private occurring(text: string, parseSpecial: boolean): number[] {
    const found = new Set<number>();
    const skip = TokenAttribute.CONTROL | TokenAttribute.UNKNOWN;
    for (let start = 0; start < text.length; start++) {
      let node = this.root.children.get(text.charCodeAt(start));
      for (let i = start + 1; node; i++) {
        if (node.id !== -1 && (parseSpecial || !(this.attributes[node.id] & skip))) found.add(node.id);
        if (i >= text.length) break;
        node = node.children.get(text.charCodeAt(i));
      }
    }
    return [...found].sort((a, b) => this.order.get(a)! - this.order.get(b)!);
  }

  /**
   * Partitions `text`. Without `parseSpecial`, control and unknown tokens are left as text; user-defined tokens are
   * split out either way (as in llama.cpp and Hugging Face tokenizers).
   */
  split(text: string, parseSpecial: boolean): Fragment[] {
    if (text.length === 0) return [];
    // Text fragments are ranges of `text`, as in llama.cpp, so that stripping works on the original offsets.
    type Piece = { kind: "text"; offset: number; length: number } | { kind: "token"; id: number };
    let pieces: Piece[] = [{ kind: "text", offset: 0, length: text.length }];
    for (const id of this.occurring(text, parseSpecial)) {
      const tokenText = this.tokens[id];
      const lstrip = (this.attributes[id] & TokenAttribute.LSTRIP) !== 0;
      const rstrip = (this.attributes[id] & TokenAttribute.RSTRIP) !== 0;
      const next: Piece[] = [];
      for (const piece of pieces) {
        if (piece.kind === "token") {
          next.push(piece);
          continue;
        }
        let offset = piece.offset;
        let length = piece.length;
        let matchedOnce = false;
        for (;;) {
          const match = text.indexOf(tokenText, offset);
          if (match === -1 || match + tokenText.length > offset + length) {
            if (!matchedOnce) next.push(piece);
            else if (length > 0) next.push({ kind: "text", offset, length });
            break;
          }
          matchedOnce = true;
          if (match > offset) {
            let leftLength = match - offset;
            if (lstrip) while (leftLength > 0 && isAsciiSpace(text.charCodeAt(offset + leftLength - 1))) leftLength--;
            if (leftLength > 0) next.push({ kind: "text", offset, length: leftLength });
          }
          next.push({ kind: "token", id });
          const rightStart = match + tokenText.length;
          if (rightStart >= offset + length) break;
          let rightOffset = rightStart;
          let rightLength = offset + length - rightStart;
          if (rstrip) {
            while (rightLength > 0 && isAsciiSpace(text.charCodeAt(rightOffset))) {
              rightOffset++;
              rightLength--;
            }
          }
          offset = rightOffset;
          length = rightLength;
        }
      }
      pieces = next;
    }
    return pieces.map((piece) =>
      piece.kind === "token" ? piece : { kind: "text", text: text.slice(piece.offset, piece.offset + piece.length) },
    );
  }
}
