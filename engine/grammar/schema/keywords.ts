// The JSON Schema keywords the compiler implements, the annotations it accepts and ignores, and the limits on single
// keywords. Anything else is refused with a SchemaError naming it.

/** Keywords that constrain generation. */
export const SUPPORTED_KEYWORDS = new Set([
  "type", "properties", "required", "additionalProperties", "propertyNames", "items", "prefixItems", "additionalItems",
  "minItems", "maxItems", "enum", "const", "anyOf", "oneOf", "allOf", "$ref", "$defs", "definitions", "minLength",
  "maxLength", "pattern", "format", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf",
]);

/** Keywords that do not constrain values: accepted and ignored. */
export const ANNOTATION_KEYWORDS = new Set([
  "title", "description", "default", "examples", "$schema", "$id", "$comment", "$anchor", "deprecated", "readOnly",
  "writeOnly", "contentEncoding", "contentMediaType", "strict",
  // OpenAPI's hint for a oneOf told apart by a property (pydantic writes it); the oneOf itself is what constrains.
  "discriminator",
]);

/** JSON Schema type names. */
export const TYPES = ["object", "array", "string", "number", "integer", "boolean", "null"] as const;
export type JsonType = (typeof TYPES)[number];

/** The JSON type of a value, "integer" for whole numbers. */
export function jsonType(value: unknown): JsonType {
  if (value === null) return "null";
  if (Array.isArray(value)) return "array";
  if (typeof value === "number") return Number.isInteger(value) ? "integer" : "number";
  return typeof value as JsonType;
}

/** The largest count the compiler expands into grammar rules (maxItems, minItems, prefixItems). */
export const MAX_EXPANDED_ITEMS = 256;
/** The largest minLength / maxLength taken together with a pattern or format (length tables grow with it). */
export const MAX_PATTERN_LENGTH = 4096;
/** The most values an `enum` may list (each is an alternative the automaton follows). */
export const MAX_ENUM_VALUES = 1024;
/** The most DFA states of one pattern, format, lookahead or intersection of a pattern and a format. */
export const MAX_PATTERN_STATES = 5000;
/** The most cells (DFA states x lengths) of one pattern's length table. */
export const MAX_PATTERN_TABLE = 1_000_000;
/** The most schemas nested inside one another while compiling (literal nesting, references and merged allOf parts). */
export const MAX_SCHEMA_DEPTH = 128;
