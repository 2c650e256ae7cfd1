// Bounds on how much one constraint (a schema, or every tool schema of a request together) may compile to, so that
// any schema within them compiles in well under a second: past one, a SchemaError names the limit, the keyword that
// crossed it and where.
import type { PatternWork } from "../regex/index.js";
import { SchemaError } from "./errors.js";

/** The limits of one constraint, all schemas together. */
export const COMPILE_LIMITS = {
  /** Schema objects compiled (in pretty layout, once per nesting level they are written at). */
  subschemas: 5_000,
  /** Properties of one object: declared ones and required ones that are not declared. */
  propertiesPerObject: 1_000,
  /** Literals the output may hold: property names (with their colon), enum and const values. */
  literals: 20_000,
  /** Bytes of all those literals. */
  literalBytes: 256 * 1024,
  /**
   * Work building automata for every pattern, lookahead, format, intersection and propertyNames together, in the
   * units of PatternWork (states built, plus NFA states and transitions looked at): about 100 ns each on this
   * machine once warm. A single automaton is also held to MAX_PATTERN_STATES states.
   */
  patternWork: 500_000,
} as const;

/** What one constraint has spent of {@link COMPILE_LIMITS}. */
export class CompileBudget {
  private subschemas = 0;
  private literals = 0;
  private literalBytes = 0;
  /** Pattern work, counted by the regex compiler as it builds automata (it stops at the limit). */
  readonly patternWork: PatternWork = { units: 0, limit: COMPILE_LIMITS.patternWork };

  /** Counts one more compiled schema object. */
  subschema(path: string): void {
    if (++this.subschemas > COMPILE_LIMITS.subschemas) {
      throw new SchemaError("size", path, `the schema compiles to more than ${COMPILE_LIMITS.subschemas} subschemas (limit on schema size)`);
    }
  }

  /** Checks the property count of one object. */
  properties(count: number, path: string): void {
    if (count > COMPILE_LIMITS.propertiesPerObject) {
      throw new SchemaError("properties", path, `objects with more than ${COMPILE_LIMITS.propertiesPerObject} properties are not supported (limit on properties per object)`);
    }
  }

  /** Counts a literal of `bytes` bytes (`keyword` is where it comes from: enum, const, properties, required). */
  literal(bytes: number, keyword: string, path: string): void {
    this.literalBytes += bytes;
    if (++this.literals > COMPILE_LIMITS.literals) {
      throw new SchemaError(keyword, path, `the schema holds more than ${COMPILE_LIMITS.literals} names and values (limit on literals)`);
    }
    if (this.literalBytes > COMPILE_LIMITS.literalBytes) {
      throw new SchemaError(keyword, path, `the schema's names and values add up to more than ${COMPILE_LIMITS.literalBytes} bytes (limit on literal bytes)`);
    }
  }

  /** Counts work done before, outside the regex compiler's count (a format from the cache, a trie of names). */
  chargePatternWork(units: number, keyword: string, path: string): void {
    this.patternWork.units += units;
    if (this.patternsExhausted) throw this.patternError(keyword, path);
  }

  /** Whether the pattern work is past its limit (the regex compiler stopped for the budget, not for one pattern). */
  get patternsExhausted(): boolean {
    return this.patternWork.units > this.patternWork.limit;
  }

  patternError(keyword: string, path: string): SchemaError {
    return new SchemaError(keyword, path, `the schema's patterns and formats need more than ${COMPILE_LIMITS.patternWork} units of automaton work in all (limit on pattern work)`);
  }
}
