// The run queue on one PostgreSQL database shared by two workers (two RunStores, each with its own connection pool, as
// two loom processes have): every queued run is claimed exactly once however their claims interleave, and a run that
// another transaction holds is skipped, never waited for (FOR UPDATE SKIP LOCKED).
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { failIfMissing, skipOutsideCi, titled } from "../../engine/testing/fixtures.js";
import type { Database } from "../platform/contract.js";
import { openDatabase } from "../platform/db/open-database.js";
import { TEST_BACKENDS, TEST_POSTGRES_URL, type TestPostgresDatabase, createTestPostgresDatabase } from "../platform/testing/test-databases.js";
import type { RunSpec } from "./contract.js";
import { RunStore } from "./run-store.js";

const POSTGRES = TEST_BACKENDS.find((backend) => backend.name === "PostgreSQL")!;
const SPEC: RunSpec = { engine: "tim", content: ["What is loom?"], resources: [], skills: [], tools: [], timeoutSeconds: 60 };
const LEASE_MS = 60_000;

describe.skipIf(skipOutsideCi(POSTGRES.reason))(titled("run claiming by two workers on one PostgreSQL", POSTGRES.reason), () => {
  let created: TestPostgresDatabase | undefined;
  const databases: Database[] = [];
  let workers: Array<{ owner: string; store: RunStore }> = [];

  beforeAll(async () => {
    failIfMissing(POSTGRES.reason);
    created = await createTestPostgresDatabase(TEST_POSTGRES_URL!);
    for (const owner of ["worker-a", "worker-b"]) {
      const database = await openDatabase({ url: created.url, poolSize: 8 });
      databases.push(database);
      workers.push({ owner, store: new RunStore(database) });
    }
  }, 60_000);
  afterAll(async () => {
    for (const database of databases) await database.close();
    await created?.drop();
    workers = [];
  });

  /** `count` new queued runs (made 50 at a time), oldest first (claims take them in that order; runs made within
   * one millisecond come back from a claim in any order). */
  async function queue(count: number): Promise<string[]> {
    const ids: string[] = [];
    for (let start = 0; start < count; start += 50) {
      const batch = await Promise.all(Array.from({ length: Math.min(50, count - start) }, () => workers[0]!.store.create({ kind: "machine_search", spec: SPEC })));
      ids.push(...batch.map((run) => run!.id));
    }
    const rows = await databases[0]!.query<{ id: string }>("SELECT id FROM runs WHERE id = ANY($1::text[]) ORDER BY created_order", [ids]);
    return rows.map((row) => row.id);
  }

  it("claims each of many queued runs exactly once while both workers claim at once, round after round", async () => {
    const ROUNDS = 8;
    const RUNS = 120;
    for (let round = 0; round < ROUNDS; round++) {
      const ids = await queue(RUNS);
      const claims: Array<{ owner: string; id: string; attempts: number }> = [];
      // Four claim loops a worker (eight claims in flight on two pools), each taking 1 to 3 runs at a time until the
      // queue is empty.
      await Promise.all(workers.flatMap(({ owner, store }) => [1, 2, 3, 1].map(async (limit) => {
        for (;;) {
          const taken = await store.claim(owner, limit, LEASE_MS);
          if (taken.length === 0) return;
          expect(taken.length).toBeLessThanOrEqual(limit);
          claims.push(...taken.map((run) => ({ owner, id: run.id, attempts: run.attempts })));
        }
      })));
      const where = `round ${round}`;
      expect(claims.map((claim) => claim.id).sort(), where).toEqual([...ids].sort());
      expect(claims.filter((claim) => claim.attempts !== 1), where).toEqual([]);
      // The database agrees: each run processing, taken once, by the worker whose claim returned it.
      const rows = await databases[1]!.query<{ id: string; status: string; attempts: number; lease_owner: string }>(
        "SELECT id, status, attempts, lease_owner FROM runs WHERE id = ANY($1::text[]) ORDER BY id", [ids],
      );
      const ownerOf = new Map(claims.map((claim) => [claim.id, claim.owner]));
      expect(rows.map((row) => [row.id, row.status, row.attempts, row.lease_owner]), where).toEqual([...ids].sort().map((id) => [id, "processing", 1, ownerOf.get(id)]));
    }
  }, 120_000);

  it("skips runs another transaction holds instead of waiting for them, and takes them once they are free", async () => {
    const ids = await queue(6);
    // Another worker's transaction holds the two oldest runs (locked, not yet updated).
    const holder = new pg.Client({ connectionString: created!.url });
    await holder.connect();
    try {
      await holder.query("BEGIN");
      await holder.query("SELECT id FROM runs WHERE id = ANY($1::text[]) FOR UPDATE", [ids.slice(0, 2)]);
      // A claim that waited on that lock would show in pg_stat_activity as waiting for a Lock (this database is this
      // test's alone): watch for that until the claim answers.
      let answered = false;
      const claim = workers[1]!.store.claim("worker-b", 3, LEASE_MS).finally(() => {
        answered = true;
      });
      const waitedForLock = (async () => {
        while (!answered) {
          const { rows } = await holder.query<{ waiting: number }>(
            "SELECT count(*)::int AS waiting FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'",
          );
          if (rows[0]!.waiting > 0) return true;
          await new Promise((resolve) => setTimeout(resolve, 10));
        }
        return false;
      })();
      expect(await waitedForLock, "the claim waited for the held runs' lock").toBe(false);
      expect((await claim).map((run) => run.id).sort()).toEqual(ids.slice(2, 5).sort());
    } finally {
      await holder.query("ROLLBACK").catch(() => undefined);
      await holder.end();
    }
    // Released: the two held runs are the oldest queued, and are taken next; then the last.
    expect((await workers[0]!.store.claim("worker-a", 2, LEASE_MS)).map((run) => run.id).sort()).toEqual(ids.slice(0, 2).sort());
    expect((await workers[1]!.store.claim("worker-b", 5, LEASE_MS)).map((run) => run.id)).toEqual(ids.slice(5));
  }, 30_000);
});
