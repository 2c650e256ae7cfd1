// The model manifest: which file a model release is (slug, file name, size, SHA-256), signed in a DSSE envelope of
// its own payload type so that a release manifest can never pass for a model's or the other way round. Parsing
// checks every field, so a malformed manifest is refused by name before anything trusts it.

/** The manifest's format marker and version (bumped on an incompatible change). */
export const MODEL_MANIFEST_FORMAT = "loom-model-manifest";
export const MODEL_MANIFEST_FORMAT_VERSION = 1;

/** A signed model release's manifest (the DSSE payload). */
export interface ModelManifest {
  format: typeof MODEL_MANIFEST_FORMAT;
  formatVersion: typeof MODEL_MANIFEST_FORMAT_VERSION;
  slug: string;
  /** The one model file: its name (also its name once fetched), size in bytes and hash. */
  file: { name: string; size: number; sha256: string };
  /** When it was released, ISO 8601. */
  date: string;
  notes: string;
}

/** A malformed model manifest; the message names the file and the field. */
export class ModelManifestError extends Error {
  override readonly name = "ModelManifestError";
}

const SHA256 = /^[0-9a-f]{64}$/;
// One lower-case path segment: it names a feed folder, and lower case keeps two slugs from sharing one folder on a
// case-insensitive file system.
const SLUG = /^[a-z0-9][a-z0-9._-]{0,99}$/;

/** Whether `value` is a model slug: lower-case letters, digits, ".", "_" and "-", starting with a letter or digit, at most 100. */
export function isModelSlug(value: unknown): value is string {
  return typeof value === "string" && SLUG.test(value);
}

/** Whether `value` is a 64-hex-digit lower-case SHA-256. */
export function isSha256(value: unknown): value is string {
  return typeof value === "string" && SHA256.test(value);
}

/**
 * Whether `value` is a plain file name that is safe to create in a models folder: no separators, no NUL, not hidden
 * (so never "." or ".."), at most 255 bytes.
 */
export function isModelFileName(value: unknown): value is string {
  return typeof value === "string" && value !== "" && !value.startsWith(".") && !/[/\\\0]/.test(value) && Buffer.byteLength(value) <= 255;
}

/** Checks a decoded model manifest field by field. @throws ModelManifestError naming `where` and the field. */
export function parseModelManifest(value: unknown, where: string): ModelManifest {
  const fail = (message: string): never => {
    throw new ModelManifestError(`${where}: malformed model manifest: ${message}`);
  };
  const m = value as Record<string, unknown>;
  if (typeof value !== "object" || value === null || Array.isArray(value)) return fail("must be a JSON object");
  if (m.format !== MODEL_MANIFEST_FORMAT) fail(`format must be "${MODEL_MANIFEST_FORMAT}"`);
  if (m.formatVersion !== MODEL_MANIFEST_FORMAT_VERSION) fail(`formatVersion ${JSON.stringify(m.formatVersion)} is not supported (this loom reads ${MODEL_MANIFEST_FORMAT_VERSION})`);
  if (!isModelSlug(m.slug)) fail(`slug ${JSON.stringify(m.slug)} must be lower-case letters, digits, ".", "_" or "-"`);
  const file = (m.file ?? {}) as Record<string, unknown>;
  if (typeof m.file !== "object" || !isModelFileName(file.name) || !Number.isSafeInteger(file.size) || (file.size as number) < 0 || !isSha256(file.sha256)) {
    fail("file must be { name: a plain file name, size: integer, sha256: 64 hex digits }");
  }
  if (typeof m.date !== "string" || Number.isNaN(Date.parse(m.date))) fail("date must be an ISO 8601 date");
  if (typeof m.notes !== "string") fail("notes must be a string");
  return value as ModelManifest;
}
