// Resolves `$ref` within the one document: "#", "#/$defs/Name", "#/definitions/Name" and other local JSON pointers.
import { SchemaError, quoted } from "./errors.js";

/** The schema `ref` points to inside `root`, with its JSON pointer. */
export function resolveRef(root: unknown, ref: unknown, path: string): { schema: unknown; path: string } {
  if (typeof ref !== "string") throw new SchemaError("$ref", path, "$ref must be a string");
  if (!ref.startsWith("#")) throw new SchemaError("$ref", path, `$ref ${quoted(ref)} points outside this schema; only local references ("#/$defs/Name") are supported`);
  let target: string;
  try {
    target = decodeURIComponent(ref.slice(1));
  } catch {
    throw new SchemaError("$ref", path, `$ref ${quoted(ref)} is not a valid URI fragment`);
  }
  if (target !== "" && !target.startsWith("/")) throw new SchemaError("$ref", path, `$ref ${quoted(ref)}: anchors are not supported, use a JSON pointer ("#/$defs/Name")`);
  let node: unknown = root;
  for (const raw of target === "" ? [] : target.slice(1).split("/")) {
    const token = raw.replace(/~1/g, "/").replace(/~0/g, "~");
    if (node === null || typeof node !== "object" || !Object.hasOwn(node, token)) throw new SchemaError("$ref", path, `$ref ${quoted(ref)} does not resolve`);
    node = (node as Record<string, unknown>)[token];
  }
  return { schema: node, path: target };
}
