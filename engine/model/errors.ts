// Typed errors for model files: every message names the file and what is wrong with it.

/** A model file is truncated, corrupt, inconsistent or uses something loom does not support. */
export class ModelFileError extends Error {
  override readonly name = "ModelFileError";
  constructor(
    /** The file (or directory) that could not be used. */
    readonly path: string,
    /** What is wrong, in words a user can act on. */
    readonly problem: string,
  ) {
    super(`${path}: ${problem}`);
  }
}
