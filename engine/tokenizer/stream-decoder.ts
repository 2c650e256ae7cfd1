// Incremental detokenization for streaming output: token ids go in one at a time, and only complete UTF-8 characters
// come out, so a character split across tokens (emoji, CJK, byte-fallback tokens) is never shown broken.

/** Turns a stream of token ids into text, holding back bytes of an unfinished UTF-8 character. */
export interface StreamDecoder {
  /** Adds one token; returns the text it completes (often "", e.g. for the first bytes of an emoji). */
  push(id: number): string;
  /** Ends the stream: returns what is still held back, with U+FFFD for bytes that never formed a character. */
  flush(): string;
}

/** A {@link StreamDecoder} over a function giving each token's bytes. */
export function createStreamDecoderFor(piece: (id: number) => Uint8Array): StreamDecoder {
  // TextDecoder in streaming mode keeps an incomplete trailing sequence for the next call and replaces only bytes
  // that can no longer become a valid character. ignoreBOM keeps a leading U+FEFF as text instead of dropping it.
  const create = () => new TextDecoder("utf-8", { ignoreBOM: true });
  let decoder = create();
  return {
    push(id: number): string {
      return decoder.decode(piece(id), { stream: true });
    },
    flush(): string {
      const rest = decoder.decode();
      decoder = create();
      return rest;
    },
  };
}
