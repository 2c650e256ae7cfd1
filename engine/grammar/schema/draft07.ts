// Draft-07 tuples, as the AI SDK and zod-to-json-schema write them: `items` as an array is what 2020-12 calls
// `prefixItems`, and `additionalItems` what it calls `items`. Read that way whatever `$schema` says, since in 2020-12
// an array under `items` is invalid, so the reading is never ambiguous.
import { SchemaError } from "./errors.js";

type SchemaObject = Record<string, unknown>;

/** `schema` with a draft-07 tuple rewritten as 2020-12 (the same object when there is none). */
export function fromDraft07Tuple(schema: SchemaObject, path: string): SchemaObject {
  if (!Array.isArray(schema.items)) {
    // additionalItems means nothing without an array under items (draft-07 ignores it then); 2020-12 has no such word.
    if (!("additionalItems" in schema)) return schema;
    const { additionalItems: _ignored, ...rest } = schema;
    return rest;
  }
  if ("prefixItems" in schema) throw new SchemaError("items", path, "items as an array (draft-07) together with prefixItems (2020-12) is ambiguous");
  const { items, additionalItems, ...rest } = schema;
  const out: SchemaObject = { ...rest, prefixItems: items };
  if (additionalItems !== undefined) out.items = additionalItems;
  return out;
}
