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
