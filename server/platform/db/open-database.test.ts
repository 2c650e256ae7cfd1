// Opening the database on PGlite and PostgreSQL: migrations applied once, a newer schema refused by name, the data
// dir lock, and unreachable or closed databases reported as DatabaseUnavailableError.
import { spawn } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { failIfMissing, skipOutsideCi, titled } from "../../../engine/testing/fixtures.js";
import { DatabaseUnavailableError, type PreparedStatement } from "../contract.js";
import { TEST_BACKENDS, TEST_POSTGRES_URL, dropSchema, migratedDataDir, temporaryDataDir, testSchemaName, unmigratedDataDir } from "../testing/test-databases.js";
import { DataDirLockedError, LOCK_FILE_NAME, acquireDataDirLock, liveLockOwner } from "./data-dir-lock.js";
import { migrate, SchemaTooNewError } from "./migrate.js";
import { LATEST_SCHEMA_VERSION, MIGRATIONS } from "./migrations/index.js";
import { type OpenDatabaseOptions, openDatabase } from "./open-database.js";
import { builtModule, raceProcesses } from "./testing/race-processes.js";

const cleanups: Array<() => Promise<void> | void> = [];
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
});

/**
 * Where a fresh database of `backend` lives, removed after the file's tests. A PGlite data dir starts as a copy of a
 * test template (pglite-template.ts): an initialized cluster without loom's tables, or with `migrated` the migrated
 * database, for tests whose subject is not the first migration.
 */
async function freshLocation(backend: (typeof TEST_BACKENDS)[number], { migrated = false } = {}): Promise<{ options: OpenDatabaseOptions; location: string }> {
  if (backend.name === "PGlite") {
    const dataDir = migrated ? await migratedDataDir() : await unmigratedDataDir();
    cleanups.push(() => rmSync(dataDir, { recursive: true, force: true }));
    return { options: { dataDir }, location: dataDir };
  }
  const url = TEST_POSTGRES_URL!;
  const schema = testSchemaName();
  cleanups.push(() => dropSchema(url, schema));
  return { options: { url, schema }, location: url };
}

for (const backend of TEST_BACKENDS) {
  describe.skipIf(skipOutsideCi(backend.reason))(titled(`openDatabase on ${backend.name}`, backend.reason), () => {
    it("applies every migration once; opening again applies none and leaves the record as it was", async () => {
      failIfMissing(backend.reason);
      const { options } = await freshLocation(backend);
      const first = await openDatabase(options);
      const applied = await first.query<{ version: number; applied_at: Date }>("SELECT version, applied_at FROM schema_migrations ORDER BY version");
      expect(applied.map((row) => row.version)).toEqual(MIGRATIONS.map((migration) => migration.version));
      const tables = await first.query<{ name: string }>(
        "SELECT table_name AS name FROM information_schema.tables WHERE table_schema = current_schema() ORDER BY table_name",
      );
      expect(tables.map((row) => row.name)).toEqual(["api_keys", "callback_attempts", "chat_completions", "credit_holds", "dashboard_sessions", "operator_tokens", "organizations", "payments", "responses", "run_callbacks", "run_steps", "runs", "schema_migrations", "search_documents", "service_settings", "update_approvals", "update_events", "usage_by_organization", "usage_daily"]);
      expect(await migrate(first, "here")).toEqual([]);
      await first.close();

      const second = await openDatabase(options);
      const again = await second.query<{ version: number; applied_at: Date }>("SELECT version, applied_at FROM schema_migrations ORDER BY version");
      expect(again).toEqual(applied);
      await second.close();
    });

    it("refuses a database migrated by a newer loom, naming both versions, and changes nothing", async () => {
      failIfMissing(backend.reason);
      const { options, location } = await freshLocation(backend, { migrated: true });
      const database = await openDatabase(options);
      await database.query("INSERT INTO schema_migrations (version) VALUES ($1)", [LATEST_SCHEMA_VERSION + 1]);
      await database.close();
      const refusal = await openDatabase(options).then(() => undefined, (error: unknown) => error);
      expect(refusal).toBeInstanceOf(SchemaTooNewError);
      expect((refusal as Error).message).toBe(
        `the database at ${location} has schema version ${LATEST_SCHEMA_VERSION + 1}; this loom understands up to ${LATEST_SCHEMA_VERSION}: upgrade loom`,
      );
      // The refused open closed its database (and, on PGlite, gave the lock back): the next open is not locked out.
      if ("dataDir" in options) expect(existsSync(join(options.dataDir, LOCK_FILE_NAME))).toBe(false);
    });

    it("opens a database a newer loom migrated when every newer migration kept the previous loom working", async () => {
      failIfMissing(backend.reason);
      const { options, location } = await freshLocation(backend, { migrated: true });
      const database = await openDatabase(options);
      const expand = { version: LATEST_SCHEMA_VERSION + 1, description: "expand", keepsPrevious: true, statements: ["CREATE TABLE test_expand (x int)"] };
      expect(await migrate(database, "here", [...MIGRATIONS, expand])).toEqual([LATEST_SCHEMA_VERSION + 1]);
      // This loom (without the newer migration) opens it and changes nothing.
      expect(await migrate(database, "here")).toEqual([]);
      const contract = { version: LATEST_SCHEMA_VERSION + 2, description: "contract", statements: ["DROP TABLE test_expand"] };
      expect(await migrate(database, "here", [...MIGRATIONS, expand, contract])).toEqual([LATEST_SCHEMA_VERSION + 2]);
      await database.close();
      await expect(openDatabase(options)).rejects.toThrow(`the database at ${location} has schema version ${LATEST_SCHEMA_VERSION + 2}; this loom understands up to ${LATEST_SCHEMA_VERSION}: upgrade loom`);
    });

    it("applies only the migrations a database lacks, all or none", async () => {
      failIfMissing(backend.reason);
      const { options } = await freshLocation(backend);
      const database = await openDatabase(options);
      const extra = { version: LATEST_SCHEMA_VERSION + 1, description: "test", statements: ["CREATE TABLE test_extra (x int)"] };
      expect(await migrate(database, "here", [...MIGRATIONS, extra])).toEqual([LATEST_SCHEMA_VERSION + 1]);
      const broken = { version: LATEST_SCHEMA_VERSION + 2, description: "broken", statements: ["CREATE TABLE test_half (x int)", "SELECT * FROM missing_table"] };
      await expect(migrate(database, "here", [...MIGRATIONS, extra, broken])).rejects.toThrow(`migration ${LATEST_SCHEMA_VERSION + 2} (broken) failed on the database at here: `);
      const tables = await database.query("SELECT 1 FROM information_schema.tables WHERE table_schema = current_schema() AND table_name = 'test_half'");
      expect(tables).toEqual([]);
      const [newest] = await database.query<{ version: number }>("SELECT max(version) AS version FROM schema_migrations");
      expect(newest!.version).toBe(LATEST_SCHEMA_VERSION + 1);
      await database.close();
    });

    it("migration 9 sums the usage already recorded into usage_by_organization", async () => {
      failIfMissing(backend.reason);
      const { options } = await freshLocation(backend);
      const database = await openDatabase(options);
      // Back to version 8, with per-key usage recorded before migration 9 existed.
      for (const table of ["usage_by_organization", "update_approvals", "update_events", "chat_completions"]) await database.query(`DROP TABLE ${table}`);
      await database.query("DELETE FROM schema_migrations WHERE version >= 9");
      await database.query("INSERT INTO organizations (id, name) VALUES ('org_a', 'a')");
      for (const key of ["key_1", "key_2"]) await database.query("INSERT INTO api_keys (id, organization_id, kind, name, key_prefix, key_digest) VALUES ($1, 'org_a', 'inference', $1, 'sk-gw-x', md5($1) || md5($1))", [key]);
      const row = "INSERT INTO usage_daily (organization_id, key_id, model, day, requests, input_tokens, cached_input_tokens, output_tokens, spend) VALUES ('org_a', $1, $2, $3::date, $4, $5, $6, $7, $8)";
      await database.query(row, ["key_1", "m", "2026-11-01", 2, 100, 10, 50, "0.25"]);
      await database.query(row, ["key_2", "m", "2026-11-01", 3, 200, 20, 70, "0.5"]);
      await database.query(row, ["key_2", "n", "2026-11-02", 1, 5, 0, 6, "0"]);
      expect(await migrate(database, "here")).toEqual(MIGRATIONS.filter((migration) => migration.version >= 9).map((migration) => migration.version));
      const read = () => database.query("SELECT day::text AS day, model, requests::int, input_tokens::int, cached_input_tokens::int, output_tokens::int, spend::float8 AS spend FROM usage_by_organization ORDER BY day, model");
      expect(await read()).toEqual([
        { day: "2026-11-01", model: "m", requests: 5, input_tokens: 300, cached_input_tokens: 30, output_tokens: 120, spend: 0.75 },
        { day: "2026-11-02", model: "n", requests: 1, input_tokens: 5, cached_input_tokens: 0, output_tokens: 6, spend: 0 },
      ]);
      await database.close();
    });

    it("turns statements on a closed database into DatabaseUnavailableError, keeping the driver's error as cause", async () => {
      failIfMissing(backend.reason);
      const { options } = await freshLocation(backend, { migrated: true });
      const database = await openDatabase(options);
      await database.close();
      const error = await database.query("SELECT 1").then(() => undefined, (e: unknown) => e);
      expect(error).toBeInstanceOf(DatabaseUnavailableError);
      expect((error as Error).cause).toBeInstanceOf(Error);
      await expect(database.transaction((tx) => tx.query("SELECT 1"))).rejects.toBeInstanceOf(DatabaseUnavailableError);
    });

    it("runs prepared statements with query()'s rows, outside other callers' transactions, and recovers from a failed one", async () => {
      failIfMissing(backend.reason);
      const { options } = await freshLocation(backend, { migrated: true });
      const database = await openDatabase(options);
      const count: PreparedStatement = { name: "test_count_named", text: "SELECT count(*)::int AS n, $1::text AS echo FROM organizations WHERE name = $1" };
      const plain = await database.query("SELECT count(*)::int AS n, $1::text AS echo FROM organizations WHERE name = $1", ["a"]);
      expect(await database.queryPrepared(count, ["a"])).toEqual(plain);
      expect(plain).toEqual([{ n: 0, echo: "a" }]);

      // A transaction that inserts and then rolls back: a prepared statement run meanwhile never sees its row.
      let inserted!: () => void;
      const insertedYet = new Promise<void>((resolve) => (inserted = resolve));
      let release!: () => void;
      const released = new Promise<void>((resolve) => (release = resolve));
      const rolledBack = database.transaction(async (tx) => {
        await tx.query("INSERT INTO organizations (id, name) VALUES ('org_uncommitted', 'a')");
        inserted();
        await released;
        throw new Error("roll back");
      });
      await insertedYet;
      const during = database.queryPrepared<{ n: number }>(count, ["a"]);
      release();
      await expect(rolledBack).rejects.toThrow("roll back");
      expect((await during)[0]!.n).toBe(0);

      // A statement that fails to bind (bad input for its cast) leaves the session ready for the next one.
      const json: PreparedStatement = { name: "test_json_named", text: "SELECT ($1::jsonb ->> 'a') AS a" };
      const bad = await database.queryPrepared(json, ["{not json"]).then(() => undefined, (e: unknown) => e);
      expect((bad as { code: string }).code).toBe("22P02");
      expect(bad).not.toBeInstanceOf(DatabaseUnavailableError);
      expect(await database.queryPrepared(json, ['{"a": "b"}'])).toEqual([{ a: "b" }]);
      expect(await database.queryPrepared(json, [null])).toEqual([{ a: null }]);
      // A statement that fails to parse is not remembered as parsed.
      const broken: PreparedStatement = { name: "test_broken_named", text: "SELEC 1" };
      await expect(database.queryPrepared(broken, [])).rejects.toMatchObject({ code: "42601" });
      await expect(database.queryPrepared(broken, [])).rejects.toMatchObject({ code: "42601" });
      await expect(database.queryPrepared({ name: count.name, text: "SELECT 2" }, [])).rejects.toThrow("two different texts");
      expect(await database.query("SELECT 1 AS one")).toEqual([{ one: 1 }]);

      await database.close();
      await expect(database.queryPrepared(count, ["a"])).rejects.toBeInstanceOf(DatabaseUnavailableError);
    });

    it.skipIf(backend.name !== "PostgreSQL")("runs prepared statements on a kept connection, and takes another when the server drops it", async () => {
      failIfMissing(backend.reason);
      const { options } = await freshLocation(backend, { migrated: true });
      const database = await openDatabase(options);
      const backendPid: PreparedStatement = { name: "test_backend_pid", text: "SELECT pg_backend_pid() AS pid, $1::text AS echo" };
      const pidOf = async () => (await database.queryPrepared<{ pid: number }>(backendPid, ["x"]))[0]!.pid;
      const first = await pidOf();
      expect(await pidOf()).toBe(first); // the same connection each time
      await database.query("SELECT pg_terminate_backend($1)", [first]);
      // The dropped connection is noticed (its 'error' event must not end the process) and replaced: at most the
      // statement already on it fails, as DatabaseUnavailableError.
      let failures = 0;
      let next: number | undefined;
      for (let attempt = 0; attempt < 20 && next === undefined; attempt++) {
        next = await pidOf().catch((error: unknown) => {
          expect(error).toBeInstanceOf(DatabaseUnavailableError);
          failures += 1;
          return undefined;
        });
      }
      expect(failures).toBeLessThanOrEqual(1);
      expect(next).not.toBe(first);
      expect(await pidOf()).toBe(next);
      await database.close();
      await expect(pidOf()).rejects.toBeInstanceOf(DatabaseUnavailableError);

      // A pool of one connection keeps none: a transaction after a prepared statement still gets the connection.
      const single = await openDatabase({ ...options, poolSize: 1 } as OpenDatabaseOptions);
      await single.queryPrepared(backendPid, ["x"]);
      expect(await single.transaction((tx) => tx.query("SELECT 1 AS one"))).toEqual([{ one: 1 }]);
      await single.close();
    });

    it("rolls a transaction back when its work throws, passing the work's own error through", async () => {
      failIfMissing(backend.reason);
      const { options } = await freshLocation(backend, { migrated: true });
      const database = await openDatabase(options);
      const mine = new RangeError("mine");
      await expect(
        database.transaction(async (tx) => {
          await tx.query("INSERT INTO organizations (id, name) VALUES ('org_rolled_back', 'x')");
          throw mine;
        }),
      ).rejects.toBe(mine);
      expect(await database.query("SELECT id FROM organizations")).toEqual([]);
      // A statement's own error (not the database being down) is not a DatabaseUnavailableError.
      const syntax = await database.query("SELECT * FROM no_such_table").then(() => undefined, (e: unknown) => e);
      expect(syntax).not.toBeInstanceOf(DatabaseUnavailableError);
      expect((syntax as { code: string }).code).toBe("42P01");
      await database.close();
    });
  });
}

const postgresBackend = TEST_BACKENDS.find((backend) => backend.name === "PostgreSQL")!;
describe.skipIf(skipOutsideCi(postgresBackend.reason))(titled("openDatabase on PostgreSQL only", postgresBackend.reason), () => {
  it("migrates once: concurrent openers wait on the advisory lock instead of racing", async () => {
    failIfMissing(postgresBackend.reason);
    const { options } = await freshLocation(postgresBackend);
    // Separate pools stand for separate loom processes starting together on one fresh schema.
    const databases = await Promise.all(Array.from({ length: 4 }, () => openDatabase(options)));
    const rows = await databases[0]!.query<{ version: number }>("SELECT version FROM schema_migrations ORDER BY version");
    expect(rows.map((row) => row.version)).toEqual(MIGRATIONS.map((migration) => migration.version));
    await Promise.all(databases.map((database) => database.close()));
  });

  it("says so when the URL's search_path names no schema that exists", async () => {
    failIfMissing(postgresBackend.reason);
    const url = `${TEST_POSTGRES_URL}?options=${encodeURIComponent(`-c search_path=${testSchemaName()}`)}`;
    await expect(openDatabase({ url })).rejects.toThrow("has no schema to create loom's tables in (its search_path names none that exists)");
  });
});

describe("openDatabase on an unreachable PostgreSQL", () => {
  it("fails with DatabaseUnavailableError naming the URL without its password", async () => {
    // Port 1 on loopback: nothing listens there, the connection is refused at once.
    const error = await openDatabase({ url: "postgres://someone:hunter2@127.0.0.1:1/test" }).then(() => undefined, (e: unknown) => e);
    expect(error).toBeInstanceOf(DatabaseUnavailableError);
    expect((error as Error).message).toMatch(/^the database at postgres:\/\/someone:\*\*\*@127\.0\.0\.1:1\/test is unavailable: .*ECONNREFUSED/);
    expect((error as Error).message).not.toContain("hunter2");
    expect((error as Error).cause).toMatchObject({ code: "ECONNREFUSED" });
  });

  it("refuses a URL of another scheme", async () => {
    await expect(openDatabase({ url: "mysql://127.0.0.1/test" })).rejects.toThrow("a database URL must start with postgres:// or postgresql://");
  });
});

/** A child process that lives until killed, and its pid. */
function sleeper(): { pid: number; stop: () => Promise<void> } {
  const child = spawn(process.execPath, ["-e", "setTimeout(() => {}, 60_000)"], { stdio: "ignore" });
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  return { pid: child.pid!, stop: async () => { child.kill("SIGKILL"); await exited; } };
}

describe("the data dir lock", () => {
  it("refuses a second opener of the same data dir, naming the holder's pid, and frees the dir on close", async () => {
    const dataDir = await migratedDataDir();
    cleanups.push(() => rmSync(dataDir, { recursive: true, force: true }));
    const database = await openDatabase({ dataDir });
    expect(readFileSync(join(dataDir, LOCK_FILE_NAME), "utf8").trim()).toBe(String(process.pid));
    expect(liveLockOwner(dataDir)).toBe(process.pid);
    const refusal = await openDatabase({ dataDir }).then(() => undefined, (e: unknown) => e);
    expect(refusal).toBeInstanceOf(DataDirLockedError);
    expect((refusal as DataDirLockedError).pid).toBe(process.pid);
    expect((refusal as Error).message).toContain(`the data dir ${dataDir} is in use by process ${process.pid}`);
    await database.close();
    expect(existsSync(join(dataDir, LOCK_FILE_NAME))).toBe(false);
    const again = await openDatabase({ dataDir });
    await again.close();
  });

  it("refuses while another live process holds the lock, and takes over a lock whose process is dead", async () => {
    const dataDir = await migratedDataDir();
    cleanups.push(() => rmSync(dataDir, { recursive: true, force: true }));
    const other = sleeper();
    try {
      writeFileSync(join(dataDir, LOCK_FILE_NAME), `${other.pid}\n`);
      expect(() => acquireDataDirLock(dataDir)).toThrow(`is in use by process ${other.pid}`);
    } finally {
      await other.stop();
    }
    // The holder died without removing its lock (kill -9): the lock is stale and the next opener takes it.
    expect(liveLockOwner(dataDir)).toBeUndefined();
    const database = await openDatabase({ dataDir });
    expect(readFileSync(join(dataDir, LOCK_FILE_NAME), "utf8").trim()).toBe(String(process.pid));
    await database.close();
  });

  it.runIf(process.platform === "linux")("takes a lock whose pid now runs a process started after it (a reboot, a reused pid) for stale", async () => {
    const dataDir = temporaryDataDir();
    cleanups.push(() => rmSync(dataDir, { recursive: true, force: true }));
    mkdirSync(dataDir, { recursive: true });
    const reused = sleeper();
    try {
      const path = join(dataDir, LOCK_FILE_NAME);
      writeFileSync(path, `${reused.pid}\n`);
      expect(liveLockOwner(dataDir)).toBe(reused.pid); // made after that process started: its lock
      const anHourAgo = new Date(Date.now() - 3_600_000);
      utimesSync(path, anHourAgo, anHourAgo);
      expect(liveLockOwner(dataDir)).toBeUndefined();
      acquireDataDirLock(dataDir).release();
    } finally {
      await reused.stop();
    }
  });

  it("lets exactly one of many processes that find the same stale lock take it", { timeout: 30_000 }, async () => {
    const dataDir = temporaryDataDir();
    cleanups.push(() => rmSync(dataDir, { recursive: true, force: true }));
    mkdirSync(dataDir, { recursive: true });
    writeFileSync(join(dataDir, LOCK_FILE_NAME), "999999999\n"); // no such process
    const outcomes = await raceProcesses(8, `const { acquireDataDirLock } = await import(${builtModule("server", "platform", "db", "data-dir-lock.js")});`, `
      try { const lock = acquireDataDirLock(${JSON.stringify(dataDir)}); console.log("won"); await new Promise((r) => setTimeout(r, 4000)); lock.release(); }
      catch (error) { console.log(error.name); }`);
    expect(outcomes.filter((outcome) => outcome === "won")).toHaveLength(1);
    expect(outcomes.filter((outcome) => outcome === "DataDirLockedError")).toHaveLength(7);
  });

  it("takes over an empty lock file (a holder killed between creating and writing it)", () => {
    const dataDir = temporaryDataDir();
    cleanups.push(() => rmSync(dataDir, { recursive: true, force: true }));
    mkdirSync(dataDir, { recursive: true });
    writeFileSync(join(dataDir, LOCK_FILE_NAME), "");
    const lock = acquireDataDirLock(dataDir);
    expect(readFileSync(lock.path, "utf8").trim()).toBe(String(process.pid));
    lock.release();
    expect(existsSync(lock.path)).toBe(false);
  });
});
