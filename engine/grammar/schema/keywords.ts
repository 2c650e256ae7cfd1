// The JSON Schema keywords the compiler implements, the annotations it accepts and ignores, and the formats it
// generates. Anything else is refused with a SchemaError naming it.

/** Keywords that constrain generation. */
export const SUPPORTED_KEYWORDS = new Set([
  "type", "properties", "required", "additionalProperties", "items", "prefixItems", "minItems", "maxItems", "enum",
  "const", "anyOf", "oneOf", "allOf", "$ref", "$defs", "definitions", "minLength", "maxLength", "pattern", "format",
  "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf",
]);

/** Keywords that do not constrain values: accepted and ignored. */
export const ANNOTATION_KEYWORDS = new Set([
  "title", "description", "default", "examples", "$schema", "$id", "$comment", "$anchor", "deprecated", "readOnly",
  "writeOnly", "contentEncoding", "contentMediaType", "strict",
]);

/** JSON Schema type names. */
export const TYPES = ["object", "array", "string", "number", "integer", "boolean", "null"] as const;
export type JsonType = (typeof TYPES)[number];

/** The largest count the compiler expands into grammar rules (maxItems, minItems, prefixItems). */
export const MAX_EXPANDED_ITEMS = 256;
/** The largest minLength / maxLength taken together with a pattern or format (length tables grow with it). */
export const MAX_PATTERN_LENGTH = 4096;
