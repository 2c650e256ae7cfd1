// Typed tokenizer errors. File problems (GGUF, tokenizer.json, llama2.c tokenizer.bin) are ModelFileError, which
// names the file; TokenizerInputError is for requests a loaded vocabulary cannot serve.
export { ModelFileError } from "../model/errors.js";

/** A tokenizer was asked to do something its vocabulary cannot do (an id out of range, a missing BOS token, ...). */
export class TokenizerInputError extends Error {
  override readonly name = "TokenizerInputError";
  constructor(
    /** Where the vocabulary came from (file or directory), so the message says which tokenizer refused. */
    readonly source: string,
    /** What is wrong, in words a user can act on. */
    readonly problem: string,
  ) {
    super(`${source}: ${problem}`);
  }
}

/**
 * The text has more tokens than {@link EncodeOptions.maxTokens} allows. Thrown as soon as that is certain, so that an
 * oversized prompt costs about `maxTokens` tokens of work, not its whole length.
 */
export class TokenLimitError extends Error {
  override readonly name = "TokenLimitError";
  constructor(
    /** The limit that was passed. */
    readonly limit: number,
  ) {
    super(`the text has more than ${limit} tokens`);
  }
}

/**
 * Under a token limit, a single pre-tokenizer word (a run without a break: one long letter, digit or space run) is
 * longer than can be tokenized without holding up everything else on the thread: BPE over one word cannot stop early.
 */
export class OversizedWordError extends TokenLimitError {
  constructor(
    limit: number,
    /** The word's length in UTF-16 units, as far as it was read. */
    readonly length: number,
    /** The longest word accepted under a limit. */
    readonly maxLength: number,
  ) {
    super(limit);
    this.message = `the text has a run of at least ${length} characters without a break (one pre-tokenizer word); at most ${maxLength} are tokenized under a token limit`;
  }
}
