// JSON Schema to grammar: every value a schema admits (within the documented subset) becomes rules over lexemes, so
// that generation can only produce documents that validate. Objects are written with their declared properties in
// order (optional ones may be left out) and extra properties only where additionalProperties allows them; strings,
// numbers and formats become lexemes with their bounds; $ref becomes a rule reference, so recursion works.
import { type GrammarBuilder, type GrammarSymbol } from "../grammar.js";
import { NumberLexeme, type NumberBounds } from "../lexemes/number.js";
import { StringLexeme, UNESCAPED_EXCLUDED } from "../lexemes/string.js";
import { WhitespaceLexeme } from "../lexemes/whitespace.js";
import { type CharDfa, UnsupportedPatternError, compilePattern } from "../regex/index.js";
import { provablyDisjoint } from "./disjoint.js";
import { SchemaError, pointer, quoted } from "./errors.js";
import { FORMAT_PATTERNS } from "./formats.js";
import { ANNOTATION_KEYWORDS, type JsonType, jsonType, MAX_ENUM_VALUES, MAX_EXPANDED_ITEMS, MAX_PATTERN_LENGTH, MAX_PATTERN_TABLE, MAX_SCHEMA_DEPTH, SUPPORTED_KEYWORDS, TYPES } from "./keywords.js";
import { isObject, mergeSchemas } from "./merge.js";
import { resolveRef } from "./refs.js";

type SchemaObject = Record<string, unknown>;

/** Whitespace between JSON tokens: a space, or a line break and up to 20 blanks of indentation. */
export const JSON_WHITESPACE = new WhitespaceLexeme(21, 1);

/** Compiles JSON Schemas into rules of one GrammarBuilder (shared by every schema of an answer: tools, formats). */
export class SchemaCompiler {
  /** Rules of schema objects already compiled, by object (and path for messages): $ref targets and recursion. */
  private readonly compiled = new Map<unknown, number>();
  private anyValueRule: number | undefined;
  private readonly ws: GrammarSymbol;

  constructor(private readonly builder: GrammarBuilder) {
    this.ws = builder.optional("ws", [builder.lexeme(JSON_WHITESPACE)]);
  }

  /**
   * The rule for values of `schema` (the root of its document: `$ref`s resolve against it).
   * @throws SchemaError naming the keyword and path of anything unsupported, malformed or unsatisfiable.
   */
  compile(schema: unknown, name = "root"): GrammarSymbol {
    try {
      return new DocumentCompiler(this, this.builder, schema, name).value(schema, "");
    } catch (error) {
      // A pattern nested thousands of groups deep can still exhaust the stack: a schema error, not a crash.
      if (error instanceof RangeError && /call stack/i.test(error.message)) throw new SchemaError("nesting", "", "the schema (or a pattern in it) is nested too deeply");
      throw error;
    }
  }

  /** Whitespace between JSON tokens (optional). */
  get whitespace(): GrammarSymbol {
    return this.ws;
  }

  /** Any JSON value (the `true` schema, JSON mode). */
  anyValue(): GrammarSymbol {
    if (this.anyValueRule === undefined) {
      const b = this.builder;
      const value = b.declare("any-value");
      this.anyValueRule = value;
      const member = [b.lexeme(new StringLexeme({})), this.ws, b.literal(":"), this.ws, b.ref(value)];
      b.define(value, [
        [this.objectOf(member, "any-object")],
        [this.arrayOf(b.ref(value), "any-array")],
        [b.lexeme(new StringLexeme({}))],
        [b.lexeme(new NumberLexeme({ integer: false }))],
        [b.literal("true")], [b.literal("false")], [b.literal("null")],
      ]);
    }
    return this.builder.ref(this.anyValueRule);
  }

  /** `{` members `}` with any number of `member`s (all optional). */
  objectOf(member: GrammarSymbol[], name: string): GrammarSymbol {
    const b = this.builder;
    const more = b.declare(`${name}-more`);
    b.define(more, [[], [this.ws, b.literal(","), this.ws, ...member, b.ref(more)]]);
    return b.ref(b.rule(name, [[b.literal("{"), this.ws, b.literal("}")], [b.literal("{"), this.ws, ...member, b.ref(more), this.ws, b.literal("}")]]));
  }

  /** `[` items `]` with any number of `item`s. */
  arrayOf(item: GrammarSymbol, name: string): GrammarSymbol {
    const b = this.builder;
    const more = b.declare(`${name}-more`);
    b.define(more, [[], [this.ws, b.literal(","), this.ws, item, b.ref(more)]]);
    return b.ref(b.rule(name, [[b.literal("["), this.ws, b.literal("]")], [b.literal("["), this.ws, item, b.ref(more), this.ws, b.literal("]")]]));
  }

  /** The cached rule of a schema object, if compiled (or being compiled). */
  cached(schema: unknown): number | undefined {
    return this.compiled.get(schema);
  }

  remember(schema: unknown, rule: number): void {
    this.compiled.set(schema, rule);
  }
}

/** Compiles one schema document (one root for its $refs). */
class DocumentCompiler {
  /** Schemas being compiled, innermost last: merged schemas (allOf) are new objects, so only depth bounds them. */
  private depth = 0;

  constructor(
    private readonly shared: SchemaCompiler,
    private readonly b: GrammarBuilder,
    private readonly root: unknown,
    private readonly name: string,
  ) {}

  /** The symbol for values of `schema` at `path`. */
  value(schema: unknown, path: string): GrammarSymbol {
    if (schema === true) return this.shared.anyValue();
    if (schema === false) throw new SchemaError("false", path, "the schema false admits no value");
    if (!isObject(schema)) throw new SchemaError("type", path, "a schema must be an object or a boolean");
    const cached = this.shared.cached(schema);
    if (cached !== undefined) return this.b.ref(cached);
    if (this.depth >= MAX_SCHEMA_DEPTH) throw new SchemaError("nesting", path, `schemas nested more than ${MAX_SCHEMA_DEPTH} deep (or recursion through allOf) are not supported`);
    const rule = this.b.declare(`${this.name}${path || "/"}`);
    this.shared.remember(schema, rule);
    this.depth++;
    try {
      this.b.define(rule, this.alternatives(schema, path));
    } finally {
      this.depth--;
    }
    return this.b.ref(rule);
  }

  private alternatives(schema: SchemaObject, path: string): GrammarSymbol[][] {
    checkKeywords(schema, path);
    if (path !== "" && "$id" in schema) throw new SchemaError("$id", path, "a nested $id (a new base for $ref) is not supported");
    if ("$ref" in schema) {
      const { $ref, ...rest } = schema;
      const target = resolveRef(this.root, $ref, path);
      if (!Object.keys(rest).some((key) => !ANNOTATION_KEYWORDS.has(key) && key !== "$defs" && key !== "definitions")) {
        return [[this.value(target.schema, target.path)]];
      }
      return this.alternatives({ allOf: [target.schema, rest] }, path);
    }
    if ("allOf" in schema) {
      const { allOf, ...rest } = schema;
      if (!Array.isArray(allOf) || allOf.length === 0) throw new SchemaError("allOf", path, "allOf must be a non-empty array of schemas");
      let merged: SchemaObject | false;
      try {
        merged = mergeSchemas(this.root, [...allOf, rest], pointer(path, "allOf"));
      } catch (error) {
        // Reported at the allOf that could not be merged, whichever part or nested property the conflict is in.
        if (error instanceof SchemaError && error.keyword === "allOf") throw new SchemaError("allOf", pointer(path, "allOf"), error.reason);
        throw error;
      }
      if (merged === false) throw new SchemaError("allOf", path, "allOf contains the schema false, which admits no value");
      return this.alternatives(merged, path);
    }
    for (const keyword of ["anyOf", "oneOf"] as const) {
      if (!(keyword in schema)) continue;
      const { [keyword]: branches, ...rest } = schema;
      if (!Array.isArray(branches) || branches.length === 0) throw new SchemaError(keyword, path, `${keyword} must be a non-empty array of schemas`);
      const constrained = Object.keys(rest).some((key) => !ANNOTATION_KEYWORDS.has(key) && key !== "$defs" && key !== "definitions");
      const resolved = branches.map((branch, index) => {
        const at = pointer(pointer(path, keyword), index);
        const merged = constrained ? mergeSchemas(this.root, [rest, branch], at) : branch;
        return { schema: merged, at };
      });
      if (keyword === "oneOf") {
        const objects = resolved.map(({ schema: s, at }) => {
          const flat = s === false || s === true ? s : mergeSchemas(this.root, [s], at);
          return isObject(flat) ? flat : {};
        });
        if (!provablyDisjoint(objects)) {
          throw new SchemaError("oneOf", path, "oneOf branches may overlap; only branches of different types or objects told apart by a required constant are supported (use anyOf if overlap is fine)");
        }
      }
      const alternatives: GrammarSymbol[][] = [];
      for (const { schema: branch, at } of resolved) {
        if (branch === false) continue;
        alternatives.push([this.value(branch, at)]);
      }
      if (alternatives.length === 0) throw new SchemaError(keyword, path, `every ${keyword} branch admits no value`);
      return alternatives;
    }
    if ("const" in schema || "enum" in schema) return this.constants(schema, path);
    const types = declaredTypes(schema, path) ?? inferredTypes(schema);
    if (!types) return [[this.shared.anyValue()]];
    if (schema.format !== undefined && types.some((type) => type === "number" || type === "integer")) {
      throw new SchemaError(`format=${String(schema.format).slice(0, 80)}`, path, `format on a number or integer is not supported (use minimum and maximum)`);
    }
    const alternatives = types.filter((type) => !(type === "integer" && types.includes("number"))).map((type) => [this.typed(type, schema, path)]);
    return alternatives;
  }

  /**
   * `const` or `enum`: the values written as they are, those of the schema's `type`. Other constraints beside them
   * would have to be checked value by value, so they are refused instead of ignored.
   */
  private constants(schema: SchemaObject, path: string): GrammarSymbol[][] {
    const keyword = "const" in schema ? "const" : "enum";
    const sibling = Object.keys(schema).find((key) => key !== "const" && key !== "enum" && key !== "type" && key !== "$defs" && key !== "definitions" && !ANNOTATION_KEYWORDS.has(key));
    if (sibling) throw new SchemaError(sibling, path, `${sibling} beside ${keyword} is not supported (list only the values that satisfy it)`);
    let values: unknown[];
    if (keyword === "const") values = [schema.const];
    else {
      if (!Array.isArray(schema.enum) || schema.enum.length === 0) throw new SchemaError("enum", path, "enum must be a non-empty array");
      if (schema.enum.length > MAX_ENUM_VALUES) throw new SchemaError("enum", path, `enums of more than ${MAX_ENUM_VALUES} values are not supported`);
      values = schema.enum;
    }
    const types = declaredTypes(schema, path);
    values = values.filter((value) => !types || types.includes(jsonType(value)) || (jsonType(value) === "integer" && types.includes("number")));
    if (values.length === 0) throw new SchemaError(keyword, path, `no ${keyword} value has the schema's type`);
    return values.map((value) => [this.b.literal(JSON.stringify(value))]);
  }

  private typed(type: JsonType, schema: SchemaObject, path: string): GrammarSymbol {
    switch (type) {
      case "object": return this.object(schema, path);
      case "array": return this.array(schema, path);
      case "string": return this.string(schema, path);
      case "number": case "integer": return this.number(type === "integer", schema, path);
      case "boolean": return this.b.ref(this.b.rule("boolean", [[this.b.literal("true")], [this.b.literal("false")]]));
      case "null": return this.b.literal("null");
    }
  }

  private object(schema: SchemaObject, path: string): GrammarSymbol {
    const b = this.b;
    const ws = this.shared.whitespace;
    const properties = schema.properties ?? {};
    if (!isObject(properties)) throw new SchemaError("properties", path, "properties must be an object of schemas");
    const required = schema.required ?? [];
    if (!Array.isArray(required) || required.some((name) => typeof name !== "string")) throw new SchemaError("required", path, "required must be an array of strings");
    const additional = schema.additionalProperties;
    const declared = Object.keys(properties);
    const members: Array<{ name: string; schema: unknown; required: boolean }> = [];
    for (const name of declared) {
      if (properties[name] === false) {
        if (required.includes(name)) throw new SchemaError("required", path, `property ${quoted(name)} is required but its schema is false`);
        continue; // never written
      }
      members.push({ name, schema: properties[name], required: required.includes(name) });
    }
    for (const name of required as string[]) {
      if (Object.hasOwn(properties, name)) continue;
      if (additional === false) throw new SchemaError("required", path, `property ${quoted(name)} is required but additionalProperties is false and it is not declared`);
      members.push({ name, schema: additional === undefined ? true : additional, required: true });
    }
    const kv = members.map(({ name, schema: value }) => [b.literal(JSON.stringify(name)), ws, b.literal(":"), ws,
      this.value(value, pointer(pointer(path, "properties"), name))]);
    // Extra properties only where the schema asks for them (absent additionalProperties writes none: still valid).
    let extra: GrammarSymbol[] | undefined;
    if (additional !== undefined && additional !== false) {
      const key = b.lexeme(new StringLexeme({ exclude: [...declared, ...members.map((member) => member.name).filter((name) => !declared.includes(name))] }));
      extra = [key, ws, b.literal(":"), ws, this.value(additional, pointer(path, "additionalProperties"))];
    }
    // rest[i]: what may follow once members before i are settled and at least one member was written.
    const n = members.length;
    const rest: number[] = [];
    for (let i = 0; i <= n; i++) rest.push(b.declare(`${this.name}${path}/members@${i}`));
    const comma = [ws, b.literal(","), ws];
    const choices = (i: number, lead: GrammarSymbol[]): GrammarSymbol[][] => {
      const out: GrammarSymbol[][] = [];
      for (let j = i; j < n; j++) {
        out.push([...lead, ...kv[j]!, b.ref(rest[j + 1]!)]);
        if (members[j]!.required) return out;
      }
      if (extra) out.push([...lead, ...extra, b.ref(rest[n]!)]);
      return out;
    };
    for (let i = 0; i <= n; i++) {
      const anyRequired = members.slice(i).some((member) => member.required);
      b.define(rest[i]!, [...(anyRequired ? [] : [[]]), ...choices(i, comma)]);
    }
    const open = b.literal("{");
    const close = b.literal("}");
    const alternatives: GrammarSymbol[][] = choices(0, []).map((first) => [open, ws, ...first, ws, close]);
    if (!members.some((member) => member.required)) alternatives.push([open, ws, close]);
    return b.ref(b.rule(`${this.name}${path}/object`, alternatives));
  }

  private array(schema: SchemaObject, path: string): GrammarSymbol {
    const b = this.b;
    const ws = this.shared.whitespace;
    const prefix = schema.prefixItems ?? [];
    if (!Array.isArray(prefix)) throw new SchemaError("prefixItems", path, "prefixItems must be an array of schemas");
    const items = schema.items;
    const minItems = count(schema, "minItems", path) ?? 0;
    let maxItems = count(schema, "maxItems", path) ?? Infinity;
    if (items === false) maxItems = Math.min(maxItems, prefix.length);
    if (minItems > maxItems) throw new SchemaError("minItems", path, `minItems ${minItems} is above the most items allowed (${maxItems})`);
    const fixed = Math.max(prefix.length, minItems);
    if (fixed > MAX_EXPANDED_ITEMS || (Number.isFinite(maxItems) && maxItems > MAX_EXPANDED_ITEMS && maxItems !== Infinity)) {
      throw new SchemaError(Number.isFinite(maxItems) && maxItems > MAX_EXPANDED_ITEMS ? "maxItems" : "minItems", path, `item counts above ${MAX_EXPANDED_ITEMS} are not supported`);
    }
    const item = (i: number): GrammarSymbol => i < prefix.length ? this.value(prefix[i], pointer(pointer(path, "prefixItems"), i))
      : items === undefined ? this.shared.anyValue() : this.value(items, pointer(path, "items"));
    const comma = [ws, b.literal(","), ws];
    // after[i]: what may follow the first i items.
    const after: number[] = [];
    const last = Number.isFinite(maxItems) ? maxItems : Math.max(fixed, 1);
    for (let i = 0; i <= last; i++) after.push(b.declare(`${this.name}${path}/items@${i}`));
    for (let i = 1; i <= last; i++) {
      const alternatives: GrammarSymbol[][] = [];
      if (i >= minItems) alternatives.push([]);
      if (i < maxItems) alternatives.push([...comma, item(i), b.ref(after[i === last ? last : i + 1]!)]);
      b.define(after[i]!, alternatives);
    }
    b.define(after[0]!, []); // unused: the first item has no comma
    const open = b.literal("[");
    const close = b.literal("]");
    const alternatives: GrammarSymbol[][] = [];
    if (minItems === 0) alternatives.push([open, ws, close]);
    if (maxItems > 0) alternatives.push([open, ws, item(0), b.ref(after[Math.min(1, last)]!), ws, close]);
    return b.ref(b.rule(`${this.name}${path}/array`, alternatives));
  }

  private string(schema: SchemaObject, path: string): GrammarSymbol {
    const minLength = count(schema, "minLength", path);
    const maxLength = count(schema, "maxLength", path);
    if (minLength !== undefined && maxLength !== undefined && minLength > maxLength) throw new SchemaError("minLength", path, `minLength ${minLength} is above maxLength ${maxLength}`);
    if (schema.pattern !== undefined && schema.format !== undefined) throw new SchemaError("pattern", path, "pattern together with format is not supported");
    let dfa: CharDfa | undefined;
    if (schema.pattern !== undefined) {
      if (typeof schema.pattern !== "string") throw new SchemaError("pattern", path, "pattern must be a string");
      dfa = this.pattern(schema.pattern, true, "pattern", path);
    } else if (schema.format !== undefined) {
      const source = typeof schema.format === "string" && Object.hasOwn(FORMAT_PATTERNS, schema.format) ? FORMAT_PATTERNS[schema.format] : undefined;
      if (!source) throw new SchemaError(`format=${String(schema.format).slice(0, 80)}`, path, `format ${quoted(schema.format)} is not supported (supported: ${Object.keys(FORMAT_PATTERNS).join(", ")})`);
      dfa = this.pattern(source, false, `format=${schema.format}`, path);
    }
    if (dfa && Math.max(minLength ?? 0, maxLength ?? 0) > MAX_PATTERN_LENGTH) {
      throw new SchemaError("maxLength", path, `lengths above ${MAX_PATTERN_LENGTH} together with a pattern or format are not supported`);
    }
    // The length table of a pattern has a row per DFA state and a column per length: bounded, since it is built here.
    if (dfa && dfa.stateCount * ((maxLength ?? (minLength ?? 0) + dfa.stateCount) + 1) > MAX_PATTERN_TABLE) {
      throw new SchemaError(schema.pattern !== undefined ? "pattern" : `format=${schema.format}`, path, "this pattern is too complex for its length bounds (DFA states times lengths over the limit)");
    }
    const lexeme = new StringLexeme({ minLength, maxLength, dfa });
    if (!lexeme.satisfiable()) {
      throw new SchemaError(dfa ? (schema.pattern !== undefined ? "pattern" : `format=${schema.format}`) : "minLength", path,
        "no string satisfies these bounds" + (dfa ? " and this pattern (without \", \\ or control characters)" : ""));
    }
    return this.b.lexeme(lexeme);
  }

  private pattern(source: string, search: boolean, keyword: string, path: string): CharDfa {
    try {
      return compilePattern(source, { search, excluded: UNESCAPED_EXCLUDED });
    } catch (error) {
      if (error instanceof UnsupportedPatternError) throw new SchemaError(keyword, path, `pattern ${quoted(source)}: ${error.feature} is not supported`);
      throw error;
    }
  }

  private number(integer: boolean, schema: SchemaObject, path: string): GrammarSymbol {
    const bounds: NumberBounds = { integer };
    for (const keyword of ["minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf"] as const) {
      const value = schema[keyword];
      if (value === undefined) continue;
      if (typeof value !== "number" || !Number.isFinite(value)) throw new SchemaError(keyword, path, `${keyword} must be a finite number${keyword.startsWith("exclusive") ? " (draft 2020-12; the boolean form of draft 4 is not supported)" : ""}`);
      bounds[keyword] = value;
    }
    if (bounds.multipleOf !== undefined && (!integer || !Number.isInteger(bounds.multipleOf) || bounds.multipleOf <= 0)) {
      throw new SchemaError("multipleOf", path, "multipleOf is supported for integers only, as a positive integer");
    }
    const lexeme = new NumberLexeme(bounds);
    if (!lexeme.satisfiable()) throw new SchemaError("minimum", path, `no ${integer ? "integer" : "number"} satisfies these bounds (or it needs more than 15 digits)`);
    return this.b.lexeme(lexeme);
  }
}

/** Refuses keywords outside the subset, naming the first. */
function checkKeywords(schema: SchemaObject, path: string): void {
  for (const key of Object.keys(schema)) {
    if (!SUPPORTED_KEYWORDS.has(key) && !ANNOTATION_KEYWORDS.has(key)) {
      throw new SchemaError(key === "then" || key === "else" ? "if" : key.slice(0, 80), path, `the keyword ${quoted(key)} is not supported`);
    }
  }
}

function declaredTypes(schema: SchemaObject, path: string): JsonType[] | undefined {
  if (schema.type === undefined) return undefined;
  const types = Array.isArray(schema.type) ? schema.type : [schema.type];
  for (const type of types) if (!TYPES.includes(type as JsonType)) throw new SchemaError("type", path, `unknown type ${quoted(type)}`);
  if (types.length === 0) throw new SchemaError("type", path, "type must name at least one type");
  return types as JsonType[];
}

/** A schema without `type` takes its type from its keywords; none at all means any value. */
function inferredTypes(schema: SchemaObject): JsonType[] | undefined {
  const has = (...keys: string[]) => keys.some((key) => key in schema);
  const types: JsonType[] = [];
  if (has("properties", "required", "additionalProperties")) types.push("object");
  if (has("items", "prefixItems", "minItems", "maxItems")) types.push("array");
  if (has("minLength", "maxLength", "pattern", "format")) types.push("string");
  if (has("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf")) types.push(schema.multipleOf !== undefined ? "integer" : "number");
  return types.length > 0 ? types : undefined;
}

function count(schema: SchemaObject, keyword: string, path: string): number | undefined {
  const value = schema[keyword];
  if (value === undefined) return undefined;
  if (typeof value !== "number" || !Number.isInteger(value) || value < 0) throw new SchemaError(keyword, path, `${keyword} must be a non-negative integer`);
  return value;
}
