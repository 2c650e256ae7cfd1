// The one error the pattern compiler throws, for unsupported features and malformed patterns alike.

/**
 * A pattern feature the compiler does not support; `feature` names it (e.g. "backreference \\1",
 * "lookahead (?=", "word boundary \\b", "unicode property \\p"), `pattern` is the source.
 * Malformed patterns use a feature starting with "syntax: ".
 */
export class UnsupportedPatternError extends Error {
  readonly feature: string;
  readonly pattern: string;

  constructor(feature: string, pattern: string) {
    super(`${feature} in pattern ${JSON.stringify(pattern)}`);
    this.name = "UnsupportedPatternError";
    this.feature = feature;
    this.pattern = pattern;
  }
}
