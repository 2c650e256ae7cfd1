// Number and integer schemas to number lexemes: bounds, multipleOf for integers, and the number formats (int32 and
// int64 make a number whole, int32 within 32 bits). Lexemes are cached by their bounds, since each one works out its
// own satisfiability: a schema of ten thousand `{"type": "integer"}` properties builds one.
import { NumberLexeme, type NumberBounds } from "../lexemes/number.js";
import { SchemaError } from "./errors.js";
import { formatKind } from "./formats.js";

type SchemaObject = Record<string, unknown>;

/** Compiles the number schemas of one constraint, one lexeme per distinct set of bounds. */
export class NumberCompiler {
  private readonly lexemes = new Map<string, NumberLexeme>();

  /**
   * The lexeme of numbers (integers with `integer`) valid against `schema`'s numeric keywords and number format.
   * @throws SchemaError for malformed keywords, multipleOf on non-integers, and bounds no number satisfies.
   */
  lexeme(integer: boolean, schema: SchemaObject, path: string): NumberLexeme {
    const bounds: NumberBounds = { integer };
    for (const keyword of ["minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf"] as const) {
      const value = schema[keyword];
      if (value === undefined) continue;
      if (typeof value !== "number" || !Number.isFinite(value)) throw new SchemaError(keyword, path, `${keyword} must be a finite number${keyword.startsWith("exclusive") ? " (draft 2020-12; the boolean form of draft 4 is not supported)" : ""}`);
      bounds[keyword] = value;
    }
    if (schema.format !== undefined && typeof schema.format !== "string") throw new SchemaError("format", path, "format must be a string");
    // A string format (or an unknown name) does not apply to numbers, as validators read it.
    const format = schema.format !== undefined ? formatKind(schema.format as string) : undefined;
    if (format?.kind === "number") {
      bounds.integer ||= format.integer;
      if (format.minimum !== undefined) bounds.minimum = Math.max(bounds.minimum ?? -Infinity, format.minimum);
      if (format.maximum !== undefined) bounds.maximum = Math.min(bounds.maximum ?? Infinity, format.maximum);
    }
    if (bounds.multipleOf !== undefined && (!bounds.integer || !Number.isInteger(bounds.multipleOf) || bounds.multipleOf <= 0)) {
      throw new SchemaError("multipleOf", path, "multipleOf is supported for integers only, as a positive integer");
    }
    const key = JSON.stringify(bounds);
    let lexeme = this.lexemes.get(key);
    if (!lexeme) {
      lexeme = new NumberLexeme(bounds);
      if (!lexeme.satisfiable()) throw new SchemaError("minimum", path, `no ${bounds.integer ? "integer" : "number"} satisfies these bounds (or it needs more than 15 digits)`);
      this.lexemes.set(key, lexeme);
    }
    return lexeme;
  }
}
