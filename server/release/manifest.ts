// The release manifest: what a release is (version, commit, every file's hash, the schema it needs), signed in a
// DSSE envelope. Parsing checks every field, so a malformed manifest is refused by name before anything trusts it.
import { parseSemVer } from "./semver.js";

/** The manifest's format marker and version (bumped on an incompatible change). */
export const MANIFEST_FORMAT = "loom-release-manifest";
export const MANIFEST_FORMAT_VERSION = 1;

/** One file of the package, its path inside the package (without npm's "package/" folder). */
export interface ManifestFile {
  path: string;
  size: number;
  sha256: string;
}

/** A signed release's manifest (the DSSE payload). */
export interface ReleaseManifest {
  format: typeof MANIFEST_FORMAT;
  formatVersion: typeof MANIFEST_FORMAT_VERSION;
  name: string;
  version: string;
  /** When it was built, ISO 8601. */
  date: string;
  /** The git commit built, and whether the work tree had changes; null outside a git checkout. */
  git: { commit: string; dirty: boolean } | null;
  /** The package tarball: its file name in the release folder, size and hash. */
  package: { file: string; size: number; sha256: string };
  /** Every file inside the package. */
  files: ManifestFile[];
  /** The database schema this release needs, and the migrations it carries to get there. */
  schema: { version: number; migrations: { version: number; description: string; keepsPrevious?: boolean }[] };
  notes: string;
}

/** A malformed manifest; the message names the file and the field. */
export class ManifestError extends Error {
  override readonly name = "ManifestError";
}

const SHA256 = /^[0-9a-f]{64}$/;

/** Checks a decoded manifest field by field. @throws ManifestError naming `where` and the field. */
export function parseManifest(value: unknown, where: string): ReleaseManifest {
  const fail = (message: string): never => {
    throw new ManifestError(`${where}: malformed release manifest: ${message}`);
  };
  const m = value as Record<string, unknown>;
  if (typeof value !== "object" || value === null || Array.isArray(value)) return fail("must be a JSON object");
  if (m.format !== MANIFEST_FORMAT) fail(`format must be "${MANIFEST_FORMAT}"`);
  if (m.formatVersion !== MANIFEST_FORMAT_VERSION) fail(`formatVersion ${JSON.stringify(m.formatVersion)} is not supported (this loom reads ${MANIFEST_FORMAT_VERSION})`);
  if (typeof m.name !== "string" || m.name === "") fail("name must be a non-empty string");
  if (typeof m.version !== "string" || parseSemVer(m.version) === undefined) fail(`version ${JSON.stringify(m.version)} must be a semantic version`);
  if (typeof m.date !== "string" || Number.isNaN(Date.parse(m.date))) fail("date must be an ISO 8601 date");
  const git = m.git as Record<string, unknown> | null;
  if (git !== null && (typeof git !== "object" || typeof git.commit !== "string" || typeof git.dirty !== "boolean")) fail("git must be { commit, dirty } or null");
  checkFile(m.package, "package", fail, "file");
  if (/[/\\]/.test((m.package as { file: string }).file)) fail("package.file must be a file name, not a path");
  if (!Array.isArray(m.files)) fail("files must be an array");
  (m.files as unknown[]).forEach((file, index) => checkFile(file, `files[${index}]`, fail, "path"));
  const schema = m.schema as Record<string, unknown>;
  if (typeof schema !== "object" || schema === null || !Number.isSafeInteger(schema.version) || !Array.isArray(schema.migrations)) fail("schema must be { version: integer, migrations: [...] }");
  (schema.migrations as unknown[]).forEach((migration, index) => {
    const { version, description, keepsPrevious } = (migration ?? {}) as Record<string, unknown>;
    if (!Number.isSafeInteger(version) || typeof description !== "string" || (keepsPrevious !== undefined && typeof keepsPrevious !== "boolean")) {
      fail(`schema.migrations[${index}] must be { version: integer, description: string, keepsPrevious?: boolean }`);
    }
  });
  if (typeof m.notes !== "string") fail("notes must be a string");
  return value as ReleaseManifest;
}

function checkFile(value: unknown, field: string, fail: (message: string) => never, nameField: "file" | "path"): void {
  const file = (value ?? {}) as Record<string, unknown>;
  if (typeof file[nameField] !== "string" || file[nameField] === "" || !Number.isSafeInteger(file.size) || typeof file.sha256 !== "string" || !SHA256.test(file.sha256)) {
    fail(`${field} must be { ${nameField}, size: integer, sha256: 64 hex digits }`);
  }
}
