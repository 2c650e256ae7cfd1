// Where `loom admin` and `loom update` find the platform's data: a --data-dir typed relative to the working folder is
// resolved at once, so that what `loom update` writes down (its journal) names the same folder from anywhere.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { databaseLocationOf } from "./admin-command.js";

const folder = mkdtempSync(join(tmpdir(), "loom-location-"));
afterAll(() => rmSync(folder, { recursive: true, force: true }));

describe("databaseLocationOf", () => {
  it("resolves a relative --data-dir against the working folder it was typed in", () => {
    const before = process.cwd();
    process.chdir(folder);
    try {
      expect(databaseLocationOf({ "data-dir": "data" })).toEqual({ dataDir: join(process.cwd(), "data") });
      expect(databaseLocationOf({ "data-dir": "./a/../data/" })).toEqual({ dataDir: join(process.cwd(), "data") });
    } finally {
      process.chdir(before);
    }
  });

  it("keeps a URL as given and refuses two databases", () => {
    expect(databaseLocationOf({ "database-url": "postgres://db/loom" })).toEqual({ url: "postgres://db/loom" });
    expect(() => databaseLocationOf({ "data-dir": "data", "database-url": "postgres://db/loom" })).toThrow("--data-dir and --database-url name two databases");
  });
});
