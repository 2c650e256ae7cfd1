// allOf: merges subschemas into one where that is exact (properties, required, bounds, types, enums), and refuses
// what it cannot merge exactly, so that the generated value satisfies every part.
import { fromDraft07Tuple } from "./draft07.js";
import { SchemaError, pointer, quoted } from "./errors.js";
import { ANNOTATION_KEYWORDS } from "./keywords.js";

/** How deep allOf merging may nest (through references and nested allOf). */
const MAX_MERGE_DEPTH = 32;
import { resolveRef } from "./refs.js";

type SchemaObject = Record<string, unknown>;

/**
 * One schema equivalent to all of `parts` (already free of $ref at the top: callers resolve them), or a SchemaError
 * ("allOf") naming what could not be merged.
 */
export function mergeSchemas(root: unknown, parts: unknown[], path: string, depth = 0): SchemaObject | false {
  // Merging follows references and nested allOf: a schema that refers back into itself would never end.
  if (depth > MAX_MERGE_DEPTH) throw new SchemaError("allOf", path, `allOf nested (through references) more than ${MAX_MERGE_DEPTH} deep; recursion through allOf is not supported`);
  let merged: SchemaObject = {};
  for (const [index, raw] of parts.entries()) {
    let part = raw;
    // A part that is a reference merges as its target; recursion through allOf is refused rather than unrolled.
    for (let hops = 0; isObject(part) && "$ref" in part; hops++) {
      if (hops > 32) throw new SchemaError("allOf", pointer(path, index), "allOf through more than 32 references");
      const { $ref, ...rest } = part;
      const target = resolveRef(root, $ref, pointer(path, index)).schema;
      part = Object.keys(rest).some((key) => !ANNOTATION_KEYWORDS.has(key)) ? { allOf: [target, rest] } : target;
    }
    if (part === true) continue;
    if (part === false) return false;
    if (!isObject(part)) throw new SchemaError("allOf", pointer(path, index), "allOf items must be schemas");
    let object = fromDraft07Tuple(part, pointer(path, index));
    if (Array.isArray(object.allOf)) {
      const { allOf, ...rest } = object;
      const inner = mergeSchemas(root, [...(allOf as unknown[]), rest], pointer(path, index), depth + 1);
      if (inner === false) return false;
      object = inner;
    }
    merged = mergeTwo(root, merged, object, pointer(path, index), depth);
  }
  return merged;
}

function mergeTwo(root: unknown, a: SchemaObject, b: SchemaObject, path: string, depth: number): SchemaObject {
  const out: SchemaObject = { ...a }; // spread defines own properties, "__proto__" included
  const fail = (keyword: string, why: string): never => {
    throw new SchemaError("allOf", path, `allOf cannot be merged: ${keyword} ${why}`);
  };
  for (const [key, value] of Object.entries(b)) {
    if (!Object.hasOwn(out, key) || ANNOTATION_KEYWORDS.has(key)) {
      setOwn(out, key, value);
      continue;
    }
    const current = out[key];
    switch (key) {
      case "type": {
        const left = typeList(current);
        const right = typeList(value);
        const both = left.filter((type) => right.includes(type) || (type === "integer" && right.includes("number")))
          .concat(right.filter((type) => type === "integer" && left.includes("number")));
        if (both.length === 0) fail("type", `${quoted(current)} and ${quoted(value)} share no type`);
        out.type = [...new Set(both)];
        break;
      }
      case "properties": {
        const properties = { ...(current as SchemaObject) };
        for (const [name, schema] of Object.entries(value as SchemaObject)) {
          if (!Object.hasOwn(properties, name)) {
            setOwn(properties, name, schema);
            continue;
          }
          // Merged now (unless through references) so that a conflict is reported at this allOf.
          if (!hasRef(properties[name]) && !hasRef(schema)) mergeSchemas(root, [properties[name], schema], pointer(pointer(path, "properties"), name), depth + 1);
          setOwn(properties, name, { allOf: [properties[name], schema] });
        }
        out.properties = properties;
        break;
      }
      case "required":
        out.required = [...new Set([...(current as string[]), ...(value as string[])])];
        break;
      case "minimum": case "exclusiveMinimum": case "minLength": case "minItems":
        out[key] = Math.max(current as number, value as number);
        break;
      case "maximum": case "exclusiveMaximum": case "maxLength": case "maxItems":
        out[key] = Math.min(current as number, value as number);
        break;
      case "multipleOf": {
        const x = current as number;
        const y = value as number;
        if (!Number.isInteger(x) || !Number.isInteger(y)) fail("multipleOf", "is only merged for integers");
        out.multipleOf = (x / gcd(x, y)) * y;
        break;
      }
      case "enum": case "const": {
        const left = key === "enum" ? (current as unknown[]) : [current];
        const right = key === "enum" ? (value as unknown[]) : [value];
        out[key] = key === "enum" ? left.filter((x) => right.some((y) => sameJson(x, y))) : current;
        if (key === "const" && !sameJson(current, value)) fail("const", "values differ");
        break;
      }
      case "items": case "additionalProperties":
        if (current === false || value === false) out[key] = false;
        else out[key] = { allOf: [current, value] };
        break;
      default:
        if (!sameJson(current, value)) fail(key, "appears in two parts with different values");
    }
  }
  // additionalProperties in one part governs the other part's extra names, and items its positional ones: merged
  // naively they would escape it, so such parts are refused (false: forbidden; a schema: would have to apply).
  for (const [left, right] of [[a, b], [b, a]] as const) {
    if (left.additionalProperties !== undefined && left.additionalProperties !== true && isObject(right.properties)) {
      const allowed = isObject(left.properties) ? Object.keys(left.properties) : [];
      const extra = Object.keys(right.properties).filter((name) => !allowed.includes(name));
      if (extra.length > 0) fail("additionalProperties", `of one part also governs properties ${quoted(extra.join(", "))} of another`);
    }
    if (left.items !== undefined && left.items !== true && Array.isArray(right.prefixItems) && !Array.isArray(left.prefixItems)) {
      fail("items", "of one part also governs the prefixItems of another");
    }
  }
  if ("enum" in out && "const" in out) {
    if (!(out.enum as unknown[]).some((x) => sameJson(x, out.const))) fail("enum", "and const have no value in common");
    delete out.enum;
  }
  return out;
}

/** Sets an own property, even one named "__proto__" (plain assignment would set the prototype instead). */
function setOwn(object: SchemaObject, key: string, value: unknown): void {
  Object.defineProperty(object, key, { value, enumerable: true, writable: true, configurable: true });
}

function hasRef(schema: unknown): boolean {
  return isObject(schema) && "$ref" in schema;
}

function typeList(type: unknown): string[] {
  return Array.isArray(type) ? (type as string[]) : [type as string];
}

function gcd(a: number, b: number): number {
  return b === 0 ? Math.abs(a) : gcd(b, a % b);
}

/** Deep JSON equality (key order ignored), as the validator compares enum and const values. */
export function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a)) return a.length === (b as unknown[]).length && a.every((x, i) => sameJson(x, (b as unknown[])[i]));
  const keys = Object.keys(a);
  return keys.length === Object.keys(b).length && keys.every((key) => Object.hasOwn(b, key) && sameJson((a as SchemaObject)[key], (b as SchemaObject)[key]));
}

export function isObject(value: unknown): value is SchemaObject {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
