// Release manifests: a well-formed one passes as it is, and each malformed field is refused by name (file and field)
// before anything trusts the manifest.
import { describe, expect, it } from "vitest";
import { ManifestError, parseManifest } from "./manifest.js";

const SHA = "a".repeat(64);
const valid = () => ({
  format: "loom-release-manifest", formatVersion: 1, name: "loom", version: "0.2.0", date: "2026-11-27T10:00:00.000Z",
  git: { commit: "fb4f04", dirty: false },
  package: { file: "loom-0.2.0.tgz", size: 2_388_544, sha256: SHA },
  files: [{ path: "dist/server/cli/main.js", size: 2794, sha256: SHA }],
  schema: { version: 9, migrations: [{ version: 1, description: "initial" }, { version: 2, description: "second", keepsPrevious: true }] },
  notes: "Notes.",
});

describe("parseManifest", () => {
  it("returns a well-formed manifest as it is (git may be null, files and migrations empty)", () => {
    const manifest = valid();
    expect(parseManifest(manifest, "m.json")).toBe(manifest);
    const bare = { ...valid(), git: null, files: [], schema: { version: 0, migrations: [] }, notes: "" };
    expect(parseManifest(bare, "m.json")).toBe(bare);
  });

  it("refuses each malformed field, naming the file and the field", () => {
    const cases: Array<[unknown, string]> = [
      [null, "must be a JSON object"],
      [[valid()], "must be a JSON object"],
      ["manifest", "must be a JSON object"],
      [{ ...valid(), format: "loom-model-manifest" }, 'format must be "loom-release-manifest"'],
      [{ ...valid(), formatVersion: 2 }, "formatVersion 2 is not supported (this loom reads 1)"],
      [{ ...valid(), name: "" }, "name must be a non-empty string"],
      [{ ...valid(), name: 5 }, "name must be a non-empty string"],
      [{ ...valid(), version: "0.2" }, 'version "0.2" must be a semantic version'],
      [{ ...valid(), version: 2 }, "version 2 must be a semantic version"],
      // Text in disguise: an array whose text would parse is still no string.
      [{ ...valid(), version: ["0.2.0"] }, 'version ["0.2.0"] must be a semantic version'],
      [{ ...valid(), date: "yesterday" }, "date must be an ISO 8601 date"],
      [{ ...valid(), date: 1_700_000_000_000 }, "date must be an ISO 8601 date"],
      [{ ...valid(), date: 2026 }, "date must be an ISO 8601 date"],
      [{ ...valid(), git: "fb4f04" }, "git must be { commit, dirty } or null"],
      [{ ...valid(), git: { commit: 1, dirty: false } }, "git must be { commit, dirty } or null"],
      [{ ...valid(), git: { commit: "fb4f04", dirty: "no" } }, "git must be { commit, dirty } or null"],
      [{ ...valid(), package: undefined }, "package must be { file, size: integer, sha256: 64 hex digits }"],
      [{ ...valid(), package: { ...valid().package, file: "" } }, "package must be { file, size: integer, sha256: 64 hex digits }"],
      [{ ...valid(), package: { ...valid().package, file: 7 } }, "package must be { file, size: integer, sha256: 64 hex digits }"],
      [{ ...valid(), package: { ...valid().package, size: 1.5 } }, "package must be { file, size: integer, sha256: 64 hex digits }"],
      [{ ...valid(), package: { ...valid().package, sha256: 7 } }, "package must be { file, size: integer, sha256: 64 hex digits }"],
      [{ ...valid(), package: { ...valid().package, sha256: [SHA] } }, "package must be { file, size: integer, sha256: 64 hex digits }"],
      [{ ...valid(), package: { ...valid().package, sha256: "A".repeat(64) } }, "package must be { file, size: integer, sha256: 64 hex digits }"],
      [{ ...valid(), package: { ...valid().package, sha256: `x${SHA}` } }, "package must be { file, size: integer, sha256: 64 hex digits }"],
      [{ ...valid(), package: { ...valid().package, sha256: `${SHA}0` } }, "package must be { file, size: integer, sha256: 64 hex digits }"],
      [{ ...valid(), package: { ...valid().package, file: "../loom-0.2.0.tgz" } }, "package.file must be a file name, not a path"],
      [{ ...valid(), package: { ...valid().package, file: "dir\\loom.tgz" } }, "package.file must be a file name, not a path"],
      [{ ...valid(), files: {} }, "files must be an array"],
      [{ ...valid(), files: [valid().files[0], { path: "", size: 1, sha256: SHA }] }, "files[1] must be { path, size: integer, sha256: 64 hex digits }"],
      [{ ...valid(), files: [null] }, "files[0] must be { path, size: integer, sha256: 64 hex digits }"],
      [{ ...valid(), schema: null }, "schema must be { version: integer, migrations: [...] }"],
      [{ ...valid(), schema: "9" }, "schema must be { version: integer, migrations: [...] }"],
      [{ ...valid(), schema: { version: 9.5, migrations: [] } }, "schema must be { version: integer, migrations: [...] }"],
      [{ ...valid(), schema: { version: 9, migrations: {} } }, "schema must be { version: integer, migrations: [...] }"],
      [{ ...valid(), schema: { version: 9, migrations: [{ version: 1, description: "a" }, { version: "2", description: "b" }] } }, "schema.migrations[1] must be { version: integer, description: string, keepsPrevious?: boolean }"],
      [{ ...valid(), schema: { version: 9, migrations: [{ version: 1, description: 2 }] } }, "schema.migrations[0] must be { version: integer, description: string, keepsPrevious?: boolean }"],
      [{ ...valid(), schema: { version: 9, migrations: [{ version: 1, description: "a", keepsPrevious: "yes" }] } }, "schema.migrations[0] must be { version: integer, description: string, keepsPrevious?: boolean }"],
      [{ ...valid(), schema: { version: 9, migrations: [null] } }, "schema.migrations[0] must be { version: integer, description: string, keepsPrevious?: boolean }"],
      [{ ...valid(), notes: null }, "notes must be a string"],
    ];
    for (const [value, message] of cases) {
      expect(() => parseManifest(value, "feed/m.json"), message).toThrow(new ManifestError(`feed/m.json: malformed release manifest: ${message}`));
      expect(() => parseManifest(value, "feed/m.json")).toThrow(expect.objectContaining({ name: "ManifestError" }));
    }
  });
});
