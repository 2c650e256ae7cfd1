// JSON Schema to grammar: every value a schema admits (within the documented subset) becomes rules over lexemes, so
// that generation can only produce documents that validate. This file walks the schema (references, allOf, anyOf,
// oneOf, constants, types); objects, arrays, strings, numbers and whitespace have files of their own. $ref becomes a
// rule reference, so recursion works.
import type { GrammarBuilder, GrammarSymbol } from "../grammar.js";
import type { LiteralLexeme } from "../lexemes/literal.js";
import { NumberLexeme } from "../lexemes/number.js";
import { StringLexeme } from "../lexemes/string.js";
import { arrayRule } from "./array.js";
import { CompileBudget } from "./budget.js";
import { provablyDisjoint } from "./disjoint.js";
import { fromDraft07Tuple } from "./draft07.js";
import { SchemaError, pointer, quoted } from "./errors.js";
import { formatKind } from "./formats.js";
import { ANNOTATION_KEYWORDS, type JsonType, jsonType, MAX_ENUM_VALUES, MAX_EXPANDED_ITEMS, MAX_SCHEMA_DEPTH, SUPPORTED_KEYWORDS, TYPES } from "./keywords.js";
import { JsonLayout, type JsonWhitespace } from "./layout.js";
import { isObject, mergeSchemas } from "./merge.js";
import { NumberCompiler } from "./numbers.js";
import { type ObjectMember, objectRule } from "./object.js";
import { readPropertyNames } from "./property-names.js";
import { resolveRef } from "./refs.js";
import { StringCompiler, count } from "./strings.js";

type SchemaObject = Record<string, unknown>;

/**
 * Compiles JSON Schemas into rules of one GrammarBuilder (shared by every schema of an answer: tools, formats), with one
 * whitespace layout and one compile budget for them all.
 */
export class SchemaCompiler {
  /** Rules of schema objects already compiled (or being compiled), by object and layout level: $ref and recursion. */
  private readonly compiled = new Map<unknown, Map<number, number>>();
  private readonly anyValueRules = new Map<number, number>();
  readonly layout: JsonLayout;
  readonly budget = new CompileBudget();
  readonly strings: StringCompiler;
  readonly numbers = new NumberCompiler();

  constructor(readonly builder: GrammarBuilder, whitespace: JsonWhitespace = "compact") {
    this.layout = new JsonLayout(builder, whitespace);
    this.strings = new StringCompiler(this.budget);
  }

  /**
   * The rule for values of `schema` (the root of its document: `$ref`s resolve against it), written at nesting `level`
   * (0 for a whole document).
   * @throws SchemaError naming the keyword and path of anything unsupported, malformed, unsatisfiable or over a limit.
   */
  compile(schema: unknown, name = "root", level = 0): GrammarSymbol {
    try {
      return new DocumentCompiler(this, schema, name).value(schema, "", level);
    } catch (error) {
      // A pattern nested thousands of groups deep can still exhaust the stack: a schema error, not a crash.
      if (error instanceof RangeError && /call stack/i.test(error.message)) throw new SchemaError("nesting", "", "the schema (or a pattern in it) is nested too deeply");
      throw error;
    }
  }

  /** Any JSON value (the `true` schema, JSON mode) at nesting `level`. */
  anyValue(level: number): GrammarSymbol {
    const b = this.builder;
    const key = this.layout.levelKey(level);
    let rule = this.anyValueRules.get(key);
    if (rule === undefined) {
      rule = b.declare(`any-value@${key}`);
      this.anyValueRules.set(key, rule);
      const inner = this.anyValue(level + 1);
      const string = b.lexeme(new StringLexeme({}));
      const extra: ObjectMember = { key: [string, b.literal(":")], value: inner, required: false };
      b.define(rule, [
        [objectRule(b, `any-value@${key}`, [], extra, this.layout.gaps(level + 1))],
        [arrayRule(b, `any-value@${key}`, { item: () => inner, minItems: 0, maxItems: Infinity, fixed: 0 }, this.layout.gaps(level + 1))],
        [string],
        [b.lexeme(new NumberLexeme({ integer: false }))],
        [b.literal("true")], [b.literal("false")], [b.literal("null")],
      ]);
    }
    return b.ref(rule);
  }

  /** A member of a fixed object (the tool-call envelope): the key literal with its colon, and the value. */
  member(name: string, value: GrammarSymbol): ObjectMember {
    return { key: [this.builder.literal(`${JSON.stringify(name)}:`)], value, required: true };
  }

  /** The rule of a schema object compiled at a layout level, if compiled (or being compiled). */
  cached(schema: unknown, levelKey: number): number | undefined {
    return this.compiled.get(schema)?.get(levelKey);
  }

  remember(schema: unknown, levelKey: number, rule: number): void {
    let byLevel = this.compiled.get(schema);
    if (!byLevel) this.compiled.set(schema, (byLevel = new Map()));
    byLevel.set(levelKey, rule);
  }
}

/** Compiles one schema document (one root for its $refs). */
class DocumentCompiler {
  /** Schemas being compiled, innermost last: merged schemas (allOf) are new objects, so only depth bounds them. */
  private depth = 0;
  private readonly b: GrammarBuilder;

  constructor(private readonly shared: SchemaCompiler, private readonly root: unknown, private readonly name: string) {
    this.b = shared.builder;
  }

  /** The symbol for values of `schema` at `path`, written at nesting `level`. */
  value(schema: unknown, path: string, level: number): GrammarSymbol {
    if (schema === true) return this.shared.anyValue(level);
    if (schema === false) throw new SchemaError("false", path, "the schema false admits no value");
    if (!isObject(schema)) throw new SchemaError("type", path, "a schema must be an object or a boolean");
    const levelKey = this.shared.layout.levelKey(level);
    const cached = this.shared.cached(schema, levelKey);
    if (cached !== undefined) return this.b.ref(cached);
    if (this.depth >= MAX_SCHEMA_DEPTH) throw new SchemaError("nesting", path, `schemas nested more than ${MAX_SCHEMA_DEPTH} deep (or recursion through allOf) are not supported`);
    this.shared.budget.subschema(path);
    const rule = this.b.declare(`${this.name}${path || "/"}${levelKey ? `@${levelKey}` : ""}`);
    this.shared.remember(schema, levelKey, rule);
    this.depth++;
    try {
      this.b.define(rule, this.alternatives(schema, path, level));
    } finally {
      this.depth--;
    }
    return this.b.ref(rule);
  }

  private alternatives(raw: SchemaObject, path: string, level: number): GrammarSymbol[][] {
    checkKeywords(raw, path);
    const schema = fromDraft07Tuple(raw, path);
    if (path !== "" && "$id" in schema) throw new SchemaError("$id", path, "a nested $id (a new base for $ref) is not supported");
    if ("$ref" in schema) {
      const { $ref, ...rest } = schema;
      const target = resolveRef(this.root, $ref, path);
      if (!Object.keys(rest).some((key) => !ANNOTATION_KEYWORDS.has(key) && key !== "$defs" && key !== "definitions")) {
        return [[this.value(target.schema, target.path, level)]];
      }
      return this.alternatives({ allOf: [target.schema, rest] }, path, level);
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
      return this.alternatives(merged, path, level);
    }
    for (const keyword of ["anyOf", "oneOf"] as const) {
      if (keyword in schema) return this.branches(keyword, schema, path, level);
    }
    if ("const" in schema || "enum" in schema) return this.constants(schema, path);
    const types = declaredTypes(schema, path) ?? inferredTypes(schema);
    if (!types) return [[this.shared.anyValue(level)]];
    return types.filter((type) => !(type === "integer" && types.includes("number"))).map((type) => [this.typed(type, schema, path, level)]);
  }

  /** anyOf, or oneOf when its branches provably cannot overlap (generated as anyOf). */
  private branches(keyword: "anyOf" | "oneOf", schema: SchemaObject, path: string, level: number): GrammarSymbol[][] {
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
      alternatives.push([this.value(branch, at, level)]);
    }
    if (alternatives.length === 0) throw new SchemaError(keyword, path, `every ${keyword} branch admits no value`);
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
    return values.map((value) => {
      // JSON.stringify writes a lone surrogate as an escape (\ud800): valid JSON with bytes to write.
      return [this.literal(JSON.stringify(value), keyword, path)];
    });
  }

  /** A literal symbol, counted against the budget (`keyword` and `path` say where it comes from). */
  private literal(text: string, keyword: string, path: string): GrammarSymbol {
    const symbol = this.b.literal(text);
    this.shared.budget.literal((symbol as { lexeme: LiteralLexeme }).lexeme.bytes.length, keyword, path);
    return symbol;
  }

  private typed(type: JsonType, schema: SchemaObject, path: string, level: number): GrammarSymbol {
    switch (type) {
      case "object": return this.object(schema, path, level);
      case "array": return this.array(schema, path, level);
      case "string": return this.b.lexeme(this.shared.strings.lexeme(schema, path));
      case "number": case "integer": return this.b.lexeme(this.shared.numbers.lexeme(type === "integer", schema, path));
      case "boolean": return this.b.ref(this.b.rule("boolean", [[this.b.literal("true")], [this.b.literal("false")]]));
      case "null": return this.b.literal("null");
    }
  }

  private object(schema: SchemaObject, path: string, level: number): GrammarSymbol {
    const b = this.b;
    const budget = this.shared.budget;
    const properties = schema.properties ?? {};
    if (!isObject(properties)) throw new SchemaError("properties", path, "properties must be an object of schemas");
    const requiredList = schema.required ?? [];
    if (!Array.isArray(requiredList) || requiredList.some((name) => typeof name !== "string")) throw new SchemaError("required", path, "required must be an array of strings");
    const required = new Set(requiredList as string[]);
    const additional = schema.additionalProperties;
    const names = readPropertyNames(schema, path, this.shared.strings, budget);
    const declared = Object.keys(properties);
    budget.properties(new Set([...declared, ...required]).size, path);
    // Every name in writing order: declared ones, then required ones that are not declared (valued by
    // additionalProperties, since they are extra properties as far as the schema is concerned).
    const entries: Array<{ name: string; schema: unknown; at: string }> = declared.map((name) => ({ name, schema: properties[name], at: pointer(pointer(path, "properties"), name) }));
    for (const name of required) {
      if (Object.hasOwn(properties, name)) continue;
      if (additional === false) throw new SchemaError("required", path, `property ${quoted(name)} is required but additionalProperties is false and it is not declared`);
      entries.push({ name, schema: additional ?? true, at: pointer(path, "additionalProperties") });
    }
    const members: ObjectMember[] = [];
    for (const { name, schema: value, at } of entries) {
      const isRequired = required.has(name);
      // A property whose schema is false, or whose name propertyNames refuses, is never written.
      if (value === false || (names && !names.allows(name))) {
        if (isRequired) throw new SchemaError(value === false ? "required" : "propertyNames", path, `property ${quoted(name)} is required but ${value === false ? "its schema is false" : "propertyNames does not allow its name"}`);
        continue;
      }
      const key = this.literal(`${JSON.stringify(name)}:`, isRequired ? "required" : "properties", path);
      members.push({ key: [key], value: this.value(value, at, level + 1), required: isRequired });
    }
    // Extra properties only where the schema asks for them (absent additionalProperties writes none: still valid),
    // never under a name declared or required.
    let extra: ObjectMember | undefined;
    if (additional !== undefined && additional !== false) {
      const taken = entries.map((entry) => entry.name);
      const key = names ? names.keys(b, taken) : b.lexeme(new StringLexeme({ exclude: taken }));
      if (key) extra = { key: [key, b.literal(":")], value: this.value(additional, pointer(path, "additionalProperties"), level + 1), required: false };
    }
    return objectRule(b, `${this.name}${path}`, members, extra, this.shared.layout.gaps(level + 1));
  }

  private array(schema: SchemaObject, path: string, level: number): GrammarSymbol {
    const prefix = schema.prefixItems ?? [];
    if (!Array.isArray(prefix)) throw new SchemaError("prefixItems", path, "prefixItems must be an array of schemas");
    const items = schema.items;
    const minItems = count(schema, "minItems", path) ?? 0;
    let maxItems = count(schema, "maxItems", path) ?? Infinity;
    if (items === false) maxItems = Math.min(maxItems, prefix.length);
    if (minItems > maxItems) throw new SchemaError("minItems", path, `minItems ${minItems} is above the most items allowed (${maxItems})`);
    const fixed = Math.max(prefix.length, minItems);
    if (fixed > MAX_EXPANDED_ITEMS || (Number.isFinite(maxItems) && maxItems > MAX_EXPANDED_ITEMS)) {
      throw new SchemaError(Number.isFinite(maxItems) && maxItems > MAX_EXPANDED_ITEMS ? "maxItems" : prefix.length > MAX_EXPANDED_ITEMS ? "prefixItems" : "minItems", path, `item counts above ${MAX_EXPANDED_ITEMS} are not supported`);
    }
    const item = (i: number): GrammarSymbol => i < prefix.length ? this.value(prefix[i], pointer(pointer(path, "prefixItems"), i), level + 1)
      : items === undefined ? this.shared.anyValue(level + 1) : this.value(items, pointer(path, "items"), level + 1);
    return arrayRule(this.b, `${this.name}${path}`, { item, minItems, maxItems, fixed }, this.shared.layout.gaps(level + 1));
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
  const numberFormat = typeof schema.format === "string" && formatKind(schema.format).kind === "number";
  const types: JsonType[] = [];
  if (has("properties", "required", "additionalProperties", "propertyNames")) types.push("object");
  if (has("items", "prefixItems", "minItems", "maxItems")) types.push("array");
  if (has("minLength", "maxLength", "pattern") || (schema.format !== undefined && !numberFormat)) types.push("string");
  if (has("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf") || numberFormat) types.push(schema.multipleOf !== undefined ? "integer" : "number");
  return types.length > 0 ? types : undefined;
}
