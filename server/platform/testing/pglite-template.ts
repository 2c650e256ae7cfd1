// PGlite data dirs for tests, copied from templates instead of created: creating and migrating a PGlite database
// costs about 10 CPU-seconds, copying one a few milliseconds, and the suite opens dozens. The templates are built in a
// child process running the build (npm test builds first): PGlite's start and the migrations run synchronously in
// WebAssembly, and on a crowded machine that would stall a test process's event loop past vitest's 60 s RPC timeout.
// Plain code, no test-runner imports.
import { execFile } from "node:child_process";
import { createHash } from "node:crypto";
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join, relative } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { PGlite } from "@electric-sql/pglite";
import { openDatabase } from "../db/open-database.js";
import { MIGRATIONS } from "../db/migrations/index.js";

function pgliteVersion(): string {
  const require = createRequire(import.meta.url);
  const pglitePackage = join(dirname(require.resolve("@electric-sql/pglite")), "..", "package.json");
  return existsSync(pglitePackage) ? (JSON.parse(readFileSync(pglitePackage, "utf8")) as { version: string }).version : "unknown";
}

/** What the migrated template depends on: the PGlite version (its on-disk format) and every migration's statements. */
function migratedTemplateKey(): string {
  const hash = createHash("sha256").update(pgliteVersion());
  for (const migration of MIGRATIONS) hash.update(`\0${migration.version}\0${migration.statements.join("\0")}`);
  return hash.digest("hex").slice(0, 16);
}

/**
 * Builds the migrated template's contents in `dataDir`; the child process calls this from the build. `expectedKey`
 * is the test process's key: a build whose migrations differ from the sources under test is refused.
 */
export async function buildMigratedTemplate(dataDir: string, expectedKey: string): Promise<void> {
  const key = migratedTemplateKey();
  if (key !== expectedKey) throw new Error(`the build's migrations differ from the sources (template ${key}, expected ${expectedKey}): run npm run build`);
  const database = await openDatabase({ dataDir });
  await database.close();
}

/** Builds an initialized PGlite cluster with none of loom's tables in `dataDir`; the child process calls this. */
export async function buildClusterTemplate(dataDir: string): Promise<void> {
  const database = new PGlite(dataDir);
  await database.waitReady;
  await database.close();
}

/** This module's counterpart in the build, for the child's import. */
function builtSelf(): string {
  const source = fileURLToPath(import.meta.url);
  if (source.includes(`${join("dist", "server")}`)) return import.meta.url;
  const root = join(dirname(source), "..", "..", "..");
  return pathToFileURL(join(root, "dist", relative(root, source).replace(/\.ts$/, ".js"))).href;
}

/** Runs `builder(folder, ...args)` of the built copy of this module in a child process. */
function buildInChild(builder: "buildMigratedTemplate" | "buildClusterTemplate", args: string[]): Promise<void> {
  const script = `const module = await import(${JSON.stringify(builtSelf())}); await module.${builder}(...process.argv.slice(1));`;
  return new Promise((resolve, reject) => {
    execFile(process.execPath, ["--input-type=module", "-e", script, ...args], (error, _stdout, stderr) => {
      if (error) reject(new Error(`building a PGlite test template failed: ${stderr.trim() || error.message}`));
      else resolve();
    });
  });
}

/**
 * The template at `path`, made once per machine: built in a folder of its own, then renamed into place, so that test
 * files making it at the same time each end with a whole one.
 */
async function templateAt(path: string, build: (folder: string) => Promise<void>): Promise<string> {
  if (existsSync(path)) return path;
  mkdirSync(dirname(path), { recursive: true });
  const building = mkdtempSync(`${path}.building-`);
  try {
    await build(building);
    renameSync(building, path);
  } catch (error) {
    // Another process renamed its copy first: use that one.
    rmSync(building, { recursive: true, force: true });
    if (!existsSync(path)) throw error;
  }
  return path;
}

let migratedTemplate: Promise<string> | undefined;
let clusterTemplate: Promise<string> | undefined;

function migrated(): Promise<string> {
  const key = migratedTemplateKey();
  migratedTemplate ??= templateAt(join(tmpdir(), "loom-test-pglite", key), (folder) => buildInChild("buildMigratedTemplate", [folder, key]));
  return migratedTemplate;
}

function cluster(): Promise<string> {
  clusterTemplate ??= templateAt(join(tmpdir(), "loom-test-pglite", `cluster-${pgliteVersion()}`), (folder) => buildInChild("buildClusterTemplate", [folder]));
  return clusterTemplate;
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
  cpSync(await migrated(), dataDir, { recursive: true });
}

/**
 * A fresh temporary data dir holding an initialized PGlite cluster without loom's tables, for tests of the first
 * migration: what `openDatabase` finds in a data dir it has just created. The caller removes it.
 */
export async function unmigratedDataDir(): Promise<string> {
  const dataDir = mkdtempSync(join(tmpdir(), "loom-platform-"));
  cpSync(await cluster(), dataDir, { recursive: true });
  return dataDir;
}
