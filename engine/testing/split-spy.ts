// For tests of bounded tokenization: counts the UTF-16 units a tokenizer's word splitter is given while a piece of
// work runs, which is what a prompt past the token limit must not cost in full.
import type { WordSplitter } from "../tokenizer/pre-tokenizers.js";
import type { Tokenizer } from "../tokenizer/tokenizer.js";

/** The units `tokenizer`'s word splitter split during `run` (the splitter is restored afterwards). */
export async function splitUnitsDuring(tokenizer: Tokenizer, run: () => void | Promise<void>): Promise<number> {
  const splitter = (tokenizer as unknown as { wordSplitter: WordSplitter }).wordSplitter;
  const split = splitter.split.bind(splitter);
  let units = 0;
  splitter.split = (piece: string) => {
    units += piece.length;
    return split(piece);
  };
  try {
    await run();
  } finally {
    splitter.split = split;
  }
  return units;
}
