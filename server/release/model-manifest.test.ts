// Model manifests and the names they carry: slugs, SHA-256 digests and file names safe to create, and each malformed
// field refused by name (file and field) before anything trusts the manifest.
import { describe, expect, it } from "vitest";
import { isModelFileName, isModelSlug, isSha256, ModelManifestError, parseModelManifest } from "./model-manifest.js";

const SHA = "0123456789abcdef".repeat(4);
const valid = () => ({
  format: "loom-model-manifest", formatVersion: 1, slug: "smollm2-135m", date: "2026-11-27T10:00:00.000Z", notes: "",
  file: { name: "SmolLM2-135M.Q8_0.gguf", size: 145_000_000, sha256: SHA },
});

describe("model manifest names", () => {
  it("take slugs of lower-case letters, digits, '.', '_' and '-', starting with a letter or digit, at most 100", () => {
    for (const slug of ["a", "0", "smollm2-135m", "qwen3_0.6b", "a".repeat(100)]) expect(isModelSlug(slug), slug).toBe(true);
    for (const slug of ["", "-a", ".a", "_a", "A", "smolLM", "a/b", "a b", "a".repeat(101), " a", "a\n", 7, null]) expect(isModelSlug(slug), String(slug)).toBe(false);
  });

  it("take SHA-256 digests as 64 lower-case hex digits only", () => {
    expect(isSha256(SHA)).toBe(true);
    for (const value of [SHA.toUpperCase(), SHA.slice(1), `${SHA}0`, `g${SHA.slice(1)}`, ` ${SHA}`, 42, [SHA]]) expect(isSha256(value), String(value)).toBe(false);
  });

  it("take plain, visible file names of at most 255 bytes", () => {
    for (const name of ["model.gguf", "a", "é".repeat(127), "x".repeat(255), "a..b"]) expect(isModelFileName(name), name).toBe(true);
    for (const name of ["", ".", "..", ".hidden", "a/b", "a\\b", "a\0b", "x".repeat(256), "é".repeat(128), 5]) expect(isModelFileName(name), String(name)).toBe(false);
  });
});

describe("parseModelManifest", () => {
  it("returns a well-formed manifest as it is", () => {
    const manifest = valid();
    expect(parseModelManifest(manifest, "m.json")).toBe(manifest);
    const empty = { ...valid(), file: { ...valid().file, size: 0 } };
    expect(parseModelManifest(empty, "m.json")).toBe(empty);
  });

  it("refuses each malformed field, naming the file and the field", () => {
    const fileMessage = "file must be { name: a plain file name, size: integer, sha256: 64 hex digits }";
    const cases: Array<[unknown, string]> = [
      [null, "must be a JSON object"],
      [[valid()], "must be a JSON object"],
      ["manifest", "must be a JSON object"],
      [{ ...valid(), format: "loom-release-manifest" }, 'format must be "loom-model-manifest"'],
      [{ ...valid(), formatVersion: "1" }, 'formatVersion "1" is not supported (this loom reads 1)'],
      [{ ...valid(), slug: "Smol" }, 'slug "Smol" must be lower-case letters, digits, ".", "_" or "-"'],
      [{ ...valid(), file: "model.gguf" }, fileMessage],
      [{ ...valid(), file: undefined }, fileMessage],
      [{ ...valid(), file: { ...valid().file, name: "../model.gguf" } }, fileMessage],
      [{ ...valid(), file: { ...valid().file, size: -1 } }, fileMessage],
      [{ ...valid(), file: { ...valid().file, size: 1.5 } }, fileMessage],
      [{ ...valid(), file: { ...valid().file, sha256: SHA.toUpperCase() } }, fileMessage],
      [{ ...valid(), date: "soon" }, "date must be an ISO 8601 date"],
      [{ ...valid(), date: 0 }, "date must be an ISO 8601 date"],
      [{ ...valid(), notes: undefined }, "notes must be a string"],
    ];
    for (const [value, message] of cases) {
      expect(() => parseModelManifest(value, "feed/m.json"), message).toThrow(new ModelManifestError(`feed/m.json: malformed model manifest: ${message}`));
      expect(() => parseModelManifest(value, "feed/m.json")).toThrow(expect.objectContaining({ name: "ModelManifestError" }));
    }
  });
});
