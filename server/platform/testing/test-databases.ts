// Databases for the platform's tests: a PGlite data dir in a temporary folder, and a schema of its own on the
// machine's PostgreSQL (127.0.0.1:5432, database `test`), each removed after. Plain code, no test-runner imports.
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import type { Database } from "../contract.js";
import { openDatabase } from "../db/open-database.js";
import type { PlatformOptions } from "../platform.js";
import { migratedDataDir } from "./pglite-template.js";

/** A database for one test group, and how to remove it. */
export interface TestDatabase {
  database: Database;
  /** The PGlite data dir, or the PostgreSQL URL and schema. */
  where: { dataDir: string } | { url: string; schema: string };
  /** Closes the database and removes its data dir or schema. */
  dispose(): Promise<void>;
}

/** A back end the platform tests run on: `reason` says why it cannot run here (undefined: it can). */
export interface TestBackend {
  name: "PGlite" | "PostgreSQL";
  reason: string | undefined;
  open(): Promise<TestDatabase>;
}

/** The PostgreSQL URLs tried, in order: LOOM_TEST_DATABASE_URL alone when set; else $USER, postgres and root. */
function candidateUrls(): string[] {
  if (process.env.LOOM_TEST_DATABASE_URL) return [process.env.LOOM_TEST_DATABASE_URL];
  const users = [process.env.USER, "postgres", "root"].filter((user): user is string => Boolean(user));
  return [...new Set(users)].map((user) => `postgres://${user}@127.0.0.1:5432/test`);
}

/** The first candidate URL that connects, or why none does. */
async function findPostgres(): Promise<{ url: string; reason?: undefined } | { url?: undefined; reason: string }> {
  const failures: string[] = [];
  for (const url of candidateUrls()) {
    const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 3000 });
    try {
      await client.connect();
      await client.query("SELECT 1");
      return { url };
    } catch (error) {
      const e = error as Error & { errors?: Error[] };
      failures.push(`${url}: ${e.message || e.errors?.[0]?.message || e.name}`);
    } finally {
      await client.end().catch(() => {});
    }
  }
  return { reason: `no PostgreSQL to test against (${failures.join("; ")}; LOOM_TEST_DATABASE_URL names another)` };
}

const postgres = await findPostgres();

/** The PostgreSQL URL the tests use, when one connects. */
export const TEST_POSTGRES_URL = postgres.url;

/** A fresh, unique schema name for one test group. */
export function testSchemaName(): string {
  return `loom_test_${randomBytes(6).toString("hex")}`;
}

/** The URL of `schema` on the server at `url`, for a loom process: libpq's `options` sets its search_path. */
export function schemaUrl(url: string, schema: string): string {
  return `${url}${url.includes("?") ? "&" : "?"}options=${encodeURIComponent(`-c search_path=${schema}`)}`;
}

/** A database of its own on the PostgreSQL server at `serverUrl` (for a loom process, which takes no schema flag). */
export interface TestPostgresDatabase {
  /** Its URL: `serverUrl` with the new database's name. */
  url: string;
  /** Drops it, ending any connection still open to it. */
  drop(): Promise<void>;
}

/** Creates a fresh, uniquely named database on the server at `serverUrl`. */
export async function createTestPostgresDatabase(serverUrl: string): Promise<TestPostgresDatabase> {
  const name = testSchemaName();
  await runOnServer(serverUrl, `CREATE DATABASE "${name}"`);
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return { url: url.toString(), drop: () => runOnServer(serverUrl, `DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`) };
}

/** Runs one statement on its own connection (CREATE and DROP DATABASE cannot run in a transaction or pool). */
async function runOnServer(serverUrl: string, statement: string): Promise<void> {
  const client = new pg.Client({ connectionString: serverUrl });
  await client.connect();
  try {
    await client.query(statement);
  } finally {
    await client.end();
  }
}

/** Drops a test schema and everything in it. */
export async function dropSchema(url: string, schema: string): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  } finally {
    await client.end();
  }
}

export { migratedDataDir, unmigratedDataDir } from "./pglite-template.js";

/** A fresh, empty temporary folder for a data dir (migratedDataDir() gives one with a migrated database in it). */
export function temporaryDataDir(): string {
  return mkdtempSync(join(tmpdir(), "loom-platform-"));
}

/** A migrated PGlite database in a temporary data dir (a copy of a migrated template: pglite-template.ts). */
export async function openTestPglite(): Promise<TestDatabase> {
  const dataDir = await migratedDataDir();
  let database: Database;
  try {
    database = await openDatabase({ dataDir });
  } catch (error) {
    rmSync(dataDir, { recursive: true, force: true });
    throw error;
  }
  return {
    database,
    where: { dataDir },
    async dispose() {
      await database.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** A migrated PostgreSQL database in a schema of its own. */
export async function openTestPostgres(): Promise<TestDatabase> {
  const url = TEST_POSTGRES_URL;
  if (url === undefined) throw new Error(postgres.reason);
  const schema = testSchemaName();
  const database = await openDatabase({ url, schema, poolSize: 8 });
  return {
    database,
    where: { url, schema },
    async dispose() {
      await database.close();
      await dropSchema(url, schema);
    },
  };
}

/** Both back ends, for `for (const backend of TEST_BACKENDS) describe.skipIf(...)(...)`. */
export const TEST_BACKENDS: readonly TestBackend[] = [
  { name: "PGlite", reason: undefined, open: openTestPglite },
  { name: "PostgreSQL", reason: postgres.reason, open: openTestPostgres },
];

/** Platform options on a fresh database, and how to remove it. */
export interface FreshPlatform {
  options: PlatformOptions;
  remove(): Promise<void>;
}

/**
 * Platform options on a fresh database of the back end (a temporary data dir holding a migrated copy of the template,
 * or a new schema), and how to remove it.
 */
export async function freshPlatform(backend: TestBackend, extra: Partial<PlatformOptions> = {}): Promise<FreshPlatform> {
  if (backend.name === "PGlite") {
    const dataDir = await migratedDataDir();
    return { options: { dataDir, ...extra }, remove: async () => rmSync(dataDir, { recursive: true, force: true }) };
  }
  const schema = testSchemaName();
  return { options: { databaseUrl: TEST_POSTGRES_URL!, schema, ...extra }, remove: () => dropSchema(TEST_POSTGRES_URL!, schema) };
}
