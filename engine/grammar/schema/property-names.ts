// propertyNames: every key of the object must be valid against a string schema (zod writes one for every z.record).
// Declared and required names are checked against it when compiled; the keys of extra properties are generated from
// it, minus the names already taken, as one DFA (or a list of literals for an enum), so a key can never dead-end.
import type { GrammarBuilder, GrammarSymbol } from "../grammar.js";
import type { LiteralLexeme } from "../lexemes/literal.js";
import { StringLexeme, UNESCAPED_EXCLUDED } from "../lexemes/string.js";
import { complement, dfaAccepts, intersect, stringsDfa } from "../regex/dfa-ops.js";
import { RangeDfa } from "../regex/dfa.js";
import { UnsupportedPatternError } from "../regex/index.js";
import { complement as complementRanges, normalise } from "../regex/ranges.js";
import type { CompileBudget } from "./budget.js";
import { SchemaError, pointer } from "./errors.js";
import { ANNOTATION_KEYWORDS, MAX_ENUM_VALUES, MAX_PATTERN_STATES, MAX_PATTERN_TABLE } from "./keywords.js";
import { isObject } from "./merge.js";
import type { StringCompiler, StringConstraints } from "./strings.js";

/** Keywords a propertyNames schema may hold: a key is a string, so only string keywords can constrain it. */
const NAME_KEYWORDS = new Set(["type", "pattern", "format", "minLength", "maxLength", "enum", "const"]);

/** Code points a key may hold when written from a DFA (no escape sequences there). */
const WRITABLE = complementRanges(normalise(UNESCAPED_EXCLUDED));

/** What propertyNames allows. */
export interface PropertyNames {
  /** Whether a property may be named `name`. */
  allows(name: string): boolean;
  /** The symbol of an extra property's key (quotes included) that is allowed and not in `taken`; undefined: none is. */
  keys(b: GrammarBuilder, taken: readonly string[]): GrammarSymbol | undefined;
}

/**
 * Reads `schema.propertyNames` (undefined when absent or `true`).
 * @throws SchemaError("propertyNames") for a form that cannot be enforced (anything but string keywords).
 */
export function readPropertyNames(schema: Record<string, unknown>, path: string, strings: StringCompiler, budget: CompileBudget): PropertyNames | undefined {
  const names = schema.propertyNames;
  if (names === undefined || names === true) return undefined;
  const at = pointer(path, "propertyNames");
  if (names === false) return NO_NAMES;
  if (!isObject(names)) throw new SchemaError("propertyNames", path, "propertyNames must be a schema");
  const other = Object.keys(names).find((key) => !NAME_KEYWORDS.has(key) && !ANNOTATION_KEYWORDS.has(key));
  if (other !== undefined) throw new SchemaError("propertyNames", path, `propertyNames may hold only string keywords (type, pattern, format, minLength, maxLength, enum, const), not ${JSON.stringify(other)}`);
  const types = names.type === undefined ? ["string"] : Array.isArray(names.type) ? names.type : [names.type];
  if (!types.includes("string")) return NO_NAMES; // no key is valid: every key is a string
  if ("enum" in names || "const" in names) return listedNames(names, at, budget);
  const constraints = strings.constraints(names, at);
  return constraints.dfa || constraints.minLength || constraints.maxLength !== undefined ? new ConstrainedNames(constraints, at, budget) : undefined;
}

/** propertyNames false (or of no string type): no key at all. */
const NO_NAMES: PropertyNames = { allows: () => false, keys: () => undefined };

/** propertyNames with `enum` or `const`: exactly the listed strings. */
function listedNames(names: Record<string, unknown>, path: string, budget: CompileBudget): PropertyNames {
  const beside = Object.keys(names).find((key) => key !== "enum" && key !== "const" && key !== "type" && !ANNOTATION_KEYWORDS.has(key));
  if (beside !== undefined) throw new SchemaError(beside, path, `${beside} beside enum or const is not supported (list only the names that satisfy it)`);
  const values = "const" in names ? [names.const] : names.enum;
  if (!Array.isArray(values) || values.length === 0) throw new SchemaError("enum", path, "enum must be a non-empty array");
  if (values.length > MAX_ENUM_VALUES) throw new SchemaError("enum", path, `enums of more than ${MAX_ENUM_VALUES} values are not supported`);
  const allowed = new Set(values.filter((value): value is string => typeof value === "string"));
  return {
    allows: (name) => allowed.has(name),
    keys: (b, taken) => {
      const free = [...allowed].filter((name) => !taken.includes(name));
      if (free.length === 0) return undefined;
      const literals = free.map((name) => {
        const symbol = b.literal(JSON.stringify(name));
        budget.literal((symbol as { lexeme: LiteralLexeme }).lexeme.bytes.length, "enum" in names ? "enum" : "const", path);
        return [symbol];
      });
      return b.ref(b.rule("property-name", literals));
    },
  };
}

/** propertyNames with lengths, a pattern or a format: keys from their DFA, minus the names taken. */
class ConstrainedNames implements PropertyNames {
  constructor(private readonly constraints: StringConstraints, private readonly path: string, private readonly budget: CompileBudget) {}

  allows(name: string): boolean {
    const { minLength = 0, maxLength = Infinity, dfa } = this.constraints;
    const length = [...name].length;
    return length >= minLength && length <= maxLength && (!dfa || dfaAccepts(dfa, name));
  }

  keys(b: GrammarBuilder, taken: readonly string[]): GrammarSymbol | undefined {
    // The taken names as a DFA to leave out: exact, so the key lexeme knows when no allowed name is left. Its trie
    // has a state per character of the names, charged up front.
    this.budget.chargePatternWork(taken.reduce((sum, name) => sum + name.length, 1), "propertyNames", this.path);
    const free = complement(stringsDfa(taken), WRITABLE);
    const names = this.constraints.dfa ?? new RangeDfa([true], [WRITABLE.map(([lo, hi]) => [lo, hi, 0] as const)]);
    let dfa;
    try {
      dfa = intersect(names, free, MAX_PATTERN_STATES + free.stateCount, "propertyNames", this.budget.patternWork);
    } catch (error) {
      if (error instanceof UnsupportedPatternError) {
        if (this.budget.patternsExhausted) throw this.budget.patternError("propertyNames", this.path);
        throw new SchemaError("propertyNames", this.path, `propertyNames without the ${taken.length} declared names needs more than ${MAX_PATTERN_STATES + free.stateCount} DFA states`);
      }
      throw error;
    }
    const { minLength = 0, maxLength } = this.constraints;
    if ((minLength > 0 || maxLength !== undefined) && dfa.stateCount * ((maxLength ?? minLength + dfa.stateCount) + 1) > MAX_PATTERN_TABLE) {
      throw new SchemaError("propertyNames", this.path, "propertyNames is too complex for its length bounds with these declared names (DFA states times lengths over the limit)");
    }
    const lexeme = new StringLexeme({ minLength: this.constraints.minLength, maxLength: this.constraints.maxLength, dfa });
    return lexeme.satisfiable() ? b.lexeme(lexeme) : undefined;
  }
}
