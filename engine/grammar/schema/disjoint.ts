// oneOf is generated as anyOf, which is exact only when no value matches two branches. This check proves that the
// branches cannot overlap (different types, or objects told apart by a required property's distinct constants); a
// oneOf it cannot prove disjoint is refused rather than risk a value that matches two branches.
import { isObject, sameJson } from "./merge.js";
import { TYPES, jsonType } from "./keywords.js";

/** Whether no value can match two of `branches` (already resolved and merged with their siblings). */
export function provablyDisjoint(branches: Array<Record<string, unknown>>): boolean {
  for (let i = 0; i < branches.length; i++) {
    for (let j = i + 1; j < branches.length; j++) if (!pairDisjoint(branches[i]!, branches[j]!)) return false;
  }
  return true;
}

function pairDisjoint(a: Record<string, unknown>, b: Record<string, unknown>): boolean {
  const left = possibleTypes(a);
  const right = possibleTypes(b);
  if (!left.some((type) => right.includes(type))) return true;
  const leftValues = constants(a);
  const rightValues = constants(b);
  if (leftValues && rightValues && !leftValues.some((x) => rightValues.some((y) => sameJson(x, y)))) return true;
  // Objects: a property both require, whose allowed constants do not meet.
  if (left.length === 1 && left[0] === "object" && right.length === 1 && right[0] === "object") {
    const required = (a.required as string[] | undefined ?? []).filter((name) => (b.required as string[] | undefined ?? []).includes(name));
    for (const name of required) {
      const x = isObject(a.properties) ? a.properties[name] : undefined;
      const y = isObject(b.properties) ? b.properties[name] : undefined;
      const xs = isObject(x) ? constants(x) : undefined;
      const ys = isObject(y) ? constants(y) : undefined;
      if (xs && ys && !xs.some((p) => ys.some((q) => sameJson(p, q)))) return true;
    }
  }
  return false;
}

/** The JSON types a schema can produce, with integer folded into number. */
function possibleTypes(schema: Record<string, unknown>): string[] {
  let types: string[];
  if (schema.type !== undefined) types = Array.isArray(schema.type) ? (schema.type as string[]) : [schema.type as string];
  else if (constants(schema)) types = constants(schema)!.map(jsonType);
  else types = [...TYPES];
  return [...new Set(types.map((type) => (type === "integer" ? "number" : type)))];
}

function constants(schema: Record<string, unknown>): unknown[] | undefined {
  if ("const" in schema) return [schema.const];
  if (Array.isArray(schema.enum)) return schema.enum;
  return undefined;
}
