// Why a JSON Schema cannot be compiled: the keyword at fault and where it is, so the HTTP layer can answer 400 with
// both instead of generating something the schema did not ask for.

/** A schema keyword that is not supported, malformed, or admits no value; `path` is a JSON pointer into the schema. */
export class SchemaError extends Error {
  override readonly name = "SchemaError";
  constructor(
    /** The keyword, e.g. "uniqueItems", or keyword=value for unsupported values ("format=iri"). */
    readonly keyword: string,
    /** JSON pointer of the schema object holding the keyword ("" for the root), e.g. "/properties/tags". */
    readonly path: string,
    /** What is wrong, without the path. */
    readonly reason: string,
  ) {
    super(`${reason} (at ${path === "" ? "the schema root" : path.length > 200 ? `${path.slice(0, 197)}...` : path})`);
  }

  /** The same error for a schema embedded at `prefix` (a JSON pointer) in a larger document. */
  under(prefix: string): SchemaError {
    return new SchemaError(this.keyword, prefix + this.path, this.reason);
  }
}

/** `path` extended by one JSON pointer token. */
export function pointer(path: string, token: string | number): string {
  return `${path}/${String(token).replace(/~/g, "~0").replace(/\//g, "~1")}`;
}

/** A value quoted for an error message, cut to a readable length (schemas come from clients and may be huge). */
export function quoted(value: unknown): string {
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 80 ? `${text.slice(0, 77)}...` : text;
}
