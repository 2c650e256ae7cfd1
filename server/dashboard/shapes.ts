// The JSON of the dashboard's objects (README.md in this folder): keys as listed and as created, and the checks of the
// bodies that create them. Organizations are the admin commands' JSON (organizationJson), so both read alike.
import { ProtocolError } from "../protocol/internal.js";
import { type KeyKind, type KeyRecord, PlatformInputError } from "../platform/contract.js";
import { requireChoice, requireName } from "../platform/store/validate.js";

/** An inference key as an organization's dashboard lists it. */
export function organizationKeyJson(record: KeyRecord): Record<string, unknown> {
  return {
    id: record.id,
    name: record.name,
    keyPrefix: record.keyPrefix,
    isActive: record.isActive,
    createdAt: record.createdAt.toISOString(),
    lastUsedAt: record.lastUsedAt?.toISOString() ?? null,
  };
}

/** A key of any kind as the operator lists it. */
export function operatorKeyJson(record: KeyRecord): Record<string, unknown> {
  const { id, ...rest } = organizationKeyJson(record);
  return { id, kind: record.kind, ...rest };
}

/** The body of a key to create: `fields` exactly (`name` always, `kind` for the operator), each checked. */
export function keyBody<F extends "name" | "kind">(body: unknown, fields: readonly F[]): { name: string; kind?: KeyKind } {
  if (typeof body !== "object" || body === null || Array.isArray(body)) {
    throw new ProtocolError("invalid_request", `the body must be a JSON object with ${fields.join(" and ")}`, "body");
  }
  const raw = body as Record<string, unknown>;
  const unknown = Object.keys(raw).find((field) => !(fields as readonly string[]).includes(field));
  if (unknown !== undefined) throw new ProtocolError("invalid_request", `unknown field ${JSON.stringify(unknown.slice(0, 40))}: the body takes ${fields.join(", ")}`, unknown.slice(0, 40));
  try {
    const kind = (fields as readonly string[]).includes("kind") ? requireChoice("kind", raw.kind, ["inference", "management"] as const) : undefined;
    return { name: requireName("name", raw.name), ...(kind ? { kind } : {}) };
  } catch (error) {
    if (error instanceof PlatformInputError) throw new ProtocolError("invalid_request", error.message, error.field);
    throw error;
  }
}
