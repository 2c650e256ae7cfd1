// A migrated PGlite data dir for tests, copied from a template instead of created: creating and migrating a PGlite
// database costs about 10 CPU-seconds, copying a migrated one a few milliseconds, and the suite opens dozens.
// Plain code, no test-runner imports.
import { createHash } from "node:crypto";
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { openDatabase } from "../db/open-database.js";
import { MIGRATIONS } from "../db/migrations/index.js";

/** What a template depends on: the PGlite version (its on-disk format) and every migration's statements. */
function templateKey(): string {
  const require = createRequire(import.meta.url);
  const pglitePackage = join(dirname(require.resolve("@electric-sql/pglite")), "..", "package.json");
  const pgliteVersion = existsSync(pglitePackage) ? (JSON.parse(readFileSync(pglitePackage, "utf8")) as { version: string }).version : "unknown";
  const hash = createHash("sha256").update(pgliteVersion);
  for (const migration of MIGRATIONS) hash.update(`\0${migration.version}\0${migration.statements.join("\0")}`);
  return hash.digest("hex").slice(0, 16);
}

let templatePromise: Promise<string> | undefined;

/**
 * The template data dir for this code's schema, made once per machine (and per schema): built in a folder of its own,
 * then renamed into place, so that test files making it at the same time each end with a whole one.
 */
function template(): Promise<string> {
  templatePromise ??= (async () => {
    const path = join(tmpdir(), "loom-test-pglite", templateKey());
    if (existsSync(path)) return path;
    mkdirSync(dirname(path), { recursive: true });
    const building = mkdtempSync(`${path}.building-`);
    const database = await openDatabase({ dataDir: building });
    await database.close();
    try {
      renameSync(building, path);
    } catch (error) {
      // Another process renamed its copy first: use that one.
      rmSync(building, { recursive: true, force: true });
      if (!existsSync(path)) throw error;
    }
    return path;
  })();
  return templatePromise;
}

/**
 * A fresh temporary data dir holding a migrated, empty PGlite database (a copy of the template), for a test's
 * `openDatabase({ dataDir })` or a loom process's `--data-dir`. The caller removes it.
 */
export async function migratedDataDir(): Promise<string> {
  const dataDir = mkdtempSync(join(tmpdir(), "loom-platform-"));
  await copyMigratedDatabase(dataDir);
  return dataDir;
}

/** Puts a migrated, empty PGlite database into `dataDir` (created when missing), as `loom serve --data-dir` would. */
export async function copyMigratedDatabase(dataDir: string): Promise<void> {
  cpSync(await template(), dataDir, { recursive: true });
}
