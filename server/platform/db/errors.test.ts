// Which driver errors make the database unavailable (then a 502 or 503 for the client, never a 500): the SQLSTATE
// classes and codes a database that will not serve answers with, on a real PostgreSQL that stops accepting connections.
import pg from "pg";
import { describe, expect, it } from "vitest";
import { failIfMissing, skipOutsideCi, titled } from "../../../engine/testing/fixtures.js";
import { DatabaseUnavailableError } from "../contract.js";
import { TEST_BACKENDS, TEST_POSTGRES_URL, createTestPostgresDatabase } from "../testing/test-databases.js";
import { translateDriverError } from "./errors.js";
import { PostgresDatabase } from "./postgres-database.js";

/** A driver error with a SQLSTATE, as pg and PGlite make them. */
const driverError = (code: string) => Object.assign(new Error(`error ${code}`), { code });

describe("translateDriverError", () => {
  it("makes refused connections and a database that will not serve unavailable, and leaves a statement's own errors", () => {
    // 08006 connection failure, 28P01 wrong password, 28000 no such role, 3D000 no such database, 55000 not accepting
    // connections, 57P01 shutdown, 53300 too many connections; no SQLSTATE at all: a refused or closed connection.
    for (const code of ["08006", "28P01", "28000", "3D000", "55000", "57P01", "53300"]) {
      expect(translateDriverError(driverError(code), "here"), code).toBeInstanceOf(DatabaseUnavailableError);
    }
    expect(translateDriverError(new Error("connect ECONNREFUSED"), "here")).toBeInstanceOf(DatabaseUnavailableError);
    // A unique violation, a syntax error, a lock timeout and an object in use are the statement's.
    for (const code of ["23505", "42601", "55P03", "55006"]) expect(translateDriverError(driverError(code), "here"), code).not.toBeInstanceOf(DatabaseUnavailableError);
  });
});

const postgres = TEST_BACKENDS.find((backend) => backend.name === "PostgreSQL")!;
describe.skipIf(skipOutsideCi(postgres.reason))(titled("a PostgreSQL database that stops accepting connections", postgres.reason), () => {
  it("is unavailable to the next query, not a statement error", async () => {
    failIfMissing(postgres.reason);
    const created = await createTestPostgresDatabase(TEST_POSTGRES_URL!);
    const name = new URL(created.url).pathname.slice(1);
    const database = await PostgresDatabase.open({ url: created.url, poolSize: 1 });
    const admin = new pg.Client({ connectionString: TEST_POSTGRES_URL });
    await admin.connect();
    try {
      await database.query("SELECT 1");
      await admin.query(`ALTER DATABASE "${name}" ALLOW_CONNECTIONS false`);
      await admin.query("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()", [name]);
      // The pool's connection is gone; the next one is refused with 55000 (then the first query may see the dead one).
      let error: unknown;
      for (let attempt = 0; attempt < 3 && error === undefined; attempt++) error = await database.query("SELECT 1").then(() => undefined, (e: unknown) => e);
      expect(error).toBeInstanceOf(DatabaseUnavailableError);
      const second = await database.query("SELECT 1").then(() => undefined, (e: unknown) => e);
      expect(second).toBeInstanceOf(DatabaseUnavailableError);
      expect(String((second as Error & { cause?: { code?: string } }).cause?.code)).toBe("55000");
    } finally {
      await database.close().catch(() => {});
      await admin.query(`ALTER DATABASE "${name}" ALLOW_CONNECTIONS true`).catch(() => {});
      await admin.end();
      await created.drop();
    }
  });
});
