// String schemas to string lexemes: lengths, a pattern, a format, or a pattern and a format together (the product of
// their DFAs, as zod writes for z.uuid() or z.email()). DFAs and lexemes are cached by what defines them, so a schema
// that repeats a string shape pays for it once; every new DFA counts against the compile budget.
import { StringLexeme, UNESCAPED_EXCLUDED } from "../lexemes/string.js";
import { type CharDfa, type PatternWork, UnsupportedPatternError, compilePattern } from "../regex/index.js";
import { intersect } from "../regex/dfa-ops.js";
import type { CompileBudget } from "./budget.js";
import { SchemaError, quoted } from "./errors.js";
import { ENFORCED_FORMATS, type StringFormat, formatKind } from "./formats.js";
import { MAX_PATTERN_LENGTH, MAX_PATTERN_STATES, MAX_PATTERN_TABLE } from "./keywords.js";

type SchemaObject = Record<string, unknown>;

/** Format DFAs and the work they took, by name: the formats are constants, so every constraint shares them. */
const FORMAT_DFAS = new Map<string, { dfa: CharDfa; units: number }>();

/** A string schema's constraints, read and checked: what a string lexeme (or a key of propertyNames) needs. */
export interface StringConstraints {
  minLength?: number;
  maxLength?: number;
  /** The pattern, the format, or both intersected; undefined when neither constrains the content. */
  dfa?: CharDfa;
  /** The keyword to blame when the DFA admits nothing: "pattern" or "format=<name>". */
  dfaKeyword?: string;
}

/** Compiles the string schemas of one constraint, sharing DFAs and lexemes between equal ones. */
export class StringCompiler {
  /** Patterns and pattern-format products of this constraint, by source. */
  private readonly dfas = new Map<string, CharDfa>();
  private readonly lexemes = new Map<string, StringLexeme>();
  private readonly formatsCharged = new Set<string>();

  constructor(private readonly budget: CompileBudget) {}

  /**
   * The lexeme of strings valid against `schema` (its string keywords; others are the caller's).
   * @throws SchemaError for malformed or unsupported keywords and for a schema no string satisfies.
   */
  lexeme(schema: SchemaObject, path: string): StringLexeme {
    const key = JSON.stringify([schema.minLength, schema.maxLength, schema.pattern, schema.format]);
    let lexeme = this.lexemes.get(key);
    if (!lexeme) {
      const constraints = this.constraints(schema, path);
      lexeme = new StringLexeme(constraints);
      if (!lexeme.satisfiable()) {
        throw new SchemaError(constraints.dfaKeyword ?? "minLength", path, "no string satisfies these bounds" + (constraints.dfa ? " and this pattern or format (written without \", \\, control characters or lone surrogates)" : ""));
      }
      this.lexemes.set(key, lexeme);
    }
    return lexeme;
  }

  /** The constraints of a string schema: lengths (a format's own limit included) and the content's DFA. */
  constraints(schema: SchemaObject, path: string): StringConstraints {
    const minLength = count(schema, "minLength", path);
    let maxLength = count(schema, "maxLength", path);
    if (minLength !== undefined && maxLength !== undefined && minLength > maxLength) throw new SchemaError("minLength", path, `minLength ${minLength} is above maxLength ${maxLength}`);
    let formatDfa: CharDfa | undefined;
    const format = schema.format;
    const formatKeyword = `format=${String(format).slice(0, 80)}`;
    if (format !== undefined) {
      if (typeof format !== "string") throw new SchemaError("format", path, "format must be a string");
      const kind = formatKind(format);
      if (kind.kind === "refused") throw new SchemaError(formatKeyword, path, `format ${quoted(format)} is not supported (enforced: ${ENFORCED_FORMATS.join(", ")}; unknown names are ignored)`);
      if (kind.kind === "string") {
        formatDfa = this.format(format, kind.format, formatKeyword, path);
        if (kind.format.maxLength !== undefined) maxLength = Math.min(maxLength ?? Infinity, kind.format.maxLength);
        if (minLength !== undefined && maxLength !== undefined && minLength > maxLength) throw new SchemaError("minLength", path, `minLength ${minLength} is above what format ${quoted(format)} allows (${maxLength})`);
      }
    }
    let patternDfa: CharDfa | undefined;
    if (schema.pattern !== undefined) {
      if (typeof schema.pattern !== "string") throw new SchemaError("pattern", path, "pattern must be a string");
      patternDfa = this.pattern(schema.pattern, path);
    }
    let dfa = patternDfa ?? formatDfa;
    const dfaKeyword = patternDfa ? "pattern" : formatDfa ? formatKeyword : undefined;
    if (patternDfa && formatDfa) dfa = this.product(formatDfa, patternDfa, schema.pattern as string, format as string, path);
    if (dfa && Math.max(minLength ?? 0, maxLength ?? 0) > MAX_PATTERN_LENGTH) {
      throw new SchemaError(schema.maxLength !== undefined ? "maxLength" : "minLength", path, `lengths above ${MAX_PATTERN_LENGTH} together with a pattern or format are not supported`);
    }
    // The length table of a pattern under length bounds has a row per DFA state and a column per length: bounded,
    // since it is built here (without bounds there is none).
    const bounded = (minLength ?? 0) > 0 || maxLength !== undefined;
    if (dfa && bounded && dfa.stateCount * ((maxLength ?? (minLength ?? 0) + dfa.stateCount) + 1) > MAX_PATTERN_TABLE) {
      throw new SchemaError(dfaKeyword!, path, "this pattern is too complex for its length bounds (DFA states times lengths over the limit)");
    }
    return { minLength, maxLength, dfa, dfaKeyword };
  }

  /** The DFA of a pattern (search semantics), compiled once per source and constraint. */
  private pattern(source: string, path: string): CharDfa {
    let dfa = this.dfas.get(source);
    if (!dfa) {
      try {
        dfa = compilePattern(source, { excluded: UNESCAPED_EXCLUDED, maxStates: MAX_PATTERN_STATES, work: this.budget.patternWork });
      } catch (error) {
        if (error instanceof UnsupportedPatternError) {
          if (this.budget.patternsExhausted) throw this.budget.patternError("pattern", path);
          throw new SchemaError("pattern", path, `pattern ${quoted(source)}: ${error.feature} is not supported`);
        }
        throw error;
      }
      this.dfas.set(source, dfa);
    }
    return dfa;
  }

  /**
   * The DFA of a format: compiled once per process (formats are constants), and charged to every constraint that uses
   * it as if compiled there, so that what a schema may hold does not depend on what came before it.
   */
  private format(name: string, format: StringFormat, keyword: string, path: string): CharDfa {
    let compiled = FORMAT_DFAS.get(name);
    if (!compiled) {
      const work: PatternWork = { units: 0, limit: Infinity };
      const dfa = compilePattern(format.source, { search: false, ignoreCase: format.ignoreCase ?? false, excluded: UNESCAPED_EXCLUDED, maxStates: MAX_PATTERN_STATES, work });
      FORMAT_DFAS.set(name, (compiled = { dfa, units: work.units }));
    }
    if (!this.formatsCharged.has(name)) {
      this.formatsCharged.add(name);
      this.budget.chargePatternWork(compiled.units, keyword, path);
    }
    return compiled.dfa;
  }

  /** Strings that match both the format and the pattern: the product of their DFAs, within the state limit. */
  private product(format: CharDfa, pattern: CharDfa, patternSource: string, formatName: string, path: string): CharDfa {
    const key = `product:${formatName}\u0000${patternSource}`;
    let dfa = this.dfas.get(key);
    if (!dfa) {
      try {
        dfa = intersect(format, pattern, MAX_PATTERN_STATES, patternSource, this.budget.patternWork);
      } catch (error) {
        if (error instanceof UnsupportedPatternError) {
          if (this.budget.patternsExhausted) throw this.budget.patternError("pattern", path);
          throw new SchemaError("pattern", path, `pattern ${quoted(patternSource)} together with format ${quoted(formatName)} needs more than ${MAX_PATTERN_STATES} DFA states`);
        }
        throw error;
      }
      this.dfas.set(key, dfa);
    }
    return dfa;
  }
}

/** A non-negative integer keyword (minLength, minItems, ...), or undefined when absent. */
export function count(schema: SchemaObject, keyword: string, path: string): number | undefined {
  const value = schema[keyword];
  if (value === undefined) return undefined;
  if (typeof value !== "number" || !Number.isInteger(value) || value < 0) throw new SchemaError(keyword, path, `${keyword} must be a non-negative integer`);
  return value;
}
