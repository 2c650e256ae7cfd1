// Runs and their step logs in the platform database, and the queue over them: the `FOR UPDATE SKIP LOCKED` design of
// pg-boss and graphile-worker, written here in a few statements because both of those need things the embedded
// PGlite does not give (pg-boss 12 wants Node 22.12; graphile-worker LISTEN/NOTIFY and its own pool). A worker takes
// runs with a lease it renews; a run whose lease ran out (its worker died) is taken again once, then failed.
import { randomBytes } from "node:crypto";
import type { Database, Sql } from "../platform/contract.js";
import { storableJson } from "../platform/db/storable-text.js";
import { toNumber } from "../platform/store/numbers.js";
import { recordUsageIn, type UsageRecord } from "../platform/store/usage-writer.js";
import { type Page, checkedLimit, pageOf } from "../platform/store/page.js";
import type { RunError, RunKind, RunRecord, RunResult, RunSpec, RunStatus, RunStep } from "./contract.js";

/** Called inside the transaction that ends a run (any way it ends): the callback delivery is enqueued there. */
export type RunEndHook = (tx: Sql, run: RunRecord) => Promise<void>;

/** How a run ends. */
export type RunOutcome = { result: RunResult } | { error: RunError };

/** A new run's id: `run_` and 32 hex digits (128 random bits: unguessable, and the only key to a machine run). */
export function newRunId(): string {
  return `run_${randomBytes(16).toString("hex")}`;
}

/** What a take of the run may not exceed: taken at most this many times (the first, and one retry). */
export const MAX_TAKES = 2;

const RUN_COLUMNS = `id, kind, organization_id, key_id, engine, request, status, attempts, cancel_requested, result, error,
  input_tokens, output_tokens, duration_ms, created_at, started_at, finished_at`;

/** A run without its request (what polling shows), for listings: a request can be megabytes. */
export type RunSummary = Omit<RunRecord, "spec">;

/**
 * A run in an organization's listing: its summary and the first 200 characters of its first content part, or of its
 * instructions when it has no content (a run may be given as input.instructions alone).
 */
export interface ListedRun {
  run: RunSummary;
  question: string | null;
}

/** RUN_COLUMNS but the request. */
const SUMMARY_COLUMNS = RUN_COLUMNS.replace(" request,", "");

/**
 * Stores a new queued run under `run.id` in `sql` (the database, or a caller's transaction: a paid run is created in
 * the transaction that records its settlement), unless its organization already has `maxActive` runs queued or
 * processing (then undefined: concurrent creations may pass the bound by their number, never more).
 */
export async function createRunIn(sql: Sql, run: { id: string; kind: RunKind; organizationId?: string; keyId?: string; spec: RunSpec }, maxActive = Number.MAX_SAFE_INTEGER): Promise<RunRecord | undefined> {
  const rows = await sql.query(
    `INSERT INTO runs (id, kind, organization_id, key_id, engine, request)
     SELECT $1, $2, $3, $4, $5, $6::jsonb
     WHERE $3::text IS NULL OR (SELECT count(*) FROM runs WHERE organization_id = $3 AND status IN ('queued', 'processing')) < $7
     RETURNING ${RUN_COLUMNS}`,
    [run.id, run.kind, run.organizationId ?? null, run.keyId ?? null, run.spec.engine, JSON.stringify(run.spec), maxActive],
  );
  return rows[0] ? runFromRow(rows[0]) : undefined;
}

/** The runs table and its step log. */
export class RunStore {
  /**
   * @param onEnd runs in the transaction that ends each run (enqueues its callback).
   * @param afterEnd runs after that transaction commits (wakes the callback deliverer).
   */
  constructor(private readonly database: Database, private readonly onEnd: RunEndHook = async () => {}, private readonly afterEnd: () => void = () => {}) {}

  /** Stores a new queued run under a new id: createRunIn on the database. */
  async create(run: { kind: RunKind; organizationId?: string; keyId?: string; spec: RunSpec }, maxActive = Number.MAX_SAFE_INTEGER): Promise<RunRecord | undefined> {
    return createRunIn(this.database, { id: newRunId(), ...run }, maxActive);
  }

  /** A run by id; with `organizationId`, only that organization's (others read as absent). */
  async get(id: string, organizationId?: string): Promise<RunRecord | undefined> {
    const rows = await this.database.query(
      `SELECT ${RUN_COLUMNS} FROM runs WHERE id = $1 AND ($2::text IS NULL OR organization_id = $2)`,
      [id, organizationId ?? null],
    );
    return rows[0] ? runFromRow(rows[0]) : undefined;
  }

  /**
   * One page of the organization's runs (of `status`, when given), newest first, before `before` (the previous page's
   * `next`: a creation order number as decimal text). Reads the index on (organization_id, created_order).
   */
  async pageOfOrganization(organizationId: string, options: { status?: RunStatus; limit: number; before?: string }): Promise<Page<ListedRun, string>> {
    const limit = checkedLimit(options.limit);
    const params: unknown[] = [organizationId, limit + 1];
    const conditions = ["organization_id = $1"];
    if (options.status !== undefined) conditions.push(`status = $${params.push(options.status)}`);
    if (options.before !== undefined) conditions.push(`created_order < $${params.push(options.before)}::bigint`);
    const rows = await this.database.query(
      `SELECT ${SUMMARY_COLUMNS}, created_order::text AS keyset, left(coalesce(request->'content'->>0, request->>'instructions'), 200) AS question
       FROM runs WHERE ${conditions.join(" AND ")} ORDER BY created_order DESC LIMIT $2`,
      params,
    );
    return pageOf(rows, limit, (row) => ({ run: summaryFromRow(row), question: (row.question as string | null) ?? null }), (row) => row.keyset as string);
  }

  /** A run's step log, in order. */
  async steps(runId: string): Promise<RunStep[]> {
    const rows = await this.database.query(
      `SELECT index, attempt, kind, status, detail, input_tokens, output_tokens, started_at, duration_ms FROM run_steps WHERE run_id = $1 ORDER BY index`,
      [runId],
    );
    return rows.map(stepFromRow);
  }

  /**
   * Takes up to `limit` queued runs, oldest first, for `owner` with a lease of `leaseMs`. Runs another worker holds
   * are skipped, never waited for.
   */
  async claim(owner: string, limit: number, leaseMs: number): Promise<RunRecord[]> {
    if (limit <= 0) return [];
    const rows = await this.database.query(
      `UPDATE runs SET status = 'processing', attempts = attempts + 1, lease_owner = $1,
         lease_expires_at = now() + $3 * interval '1 millisecond', started_at = COALESCE(started_at, now())
       WHERE id IN (SELECT id FROM runs WHERE status = 'queued' ORDER BY created_order LIMIT $2 FOR UPDATE SKIP LOCKED)
       RETURNING ${RUN_COLUMNS}`,
      [owner, limit, leaseMs],
    );
    return rows.map(runFromRow).sort((a, b) => a.createdAt.getTime() - b.createdAt.getTime());
  }

  /**
   * Renews `owner`'s leases on `ids`. Returns the runs it still holds, each with whether a cancel was asked for; a run
   * missing from the answer was lost (its lease expired and another worker took it, or it was ended).
   */
  async renew(owner: string, ids: readonly string[], leaseMs: number): Promise<Map<string, { cancelRequested: boolean }>> {
    if (ids.length === 0) return new Map();
    const rows = await this.database.query<{ id: string; cancel_requested: boolean }>(
      `UPDATE runs SET lease_expires_at = now() + $3 * interval '1 millisecond'
       WHERE id = ANY($2::text[]) AND lease_owner = $1 AND status = 'processing' RETURNING id, cancel_requested`,
      [owner, ids, leaseMs],
    );
    return new Map(rows.map((row) => [row.id, { cancelRequested: row.cancel_requested }]));
  }

  /**
   * Runs whose lease expired (their worker died or stalled): queued again if they have a take left, else failed with
   * `worker_lost`. Each gets a note in its step log.
   * @returns how many were queued again and how many failed.
   */
  async recoverExpired(): Promise<{ requeued: number; failed: number }> {
    let requeued = 0;
    let failed = 0;
    for (;;) {
      const done = await this.database.transaction(async (tx) => {
        const rows = await tx.query(
          `SELECT ${RUN_COLUMNS}, lease_owner FROM runs WHERE status = 'processing' AND lease_expires_at < now()
           ORDER BY lease_expires_at LIMIT 1 FOR UPDATE SKIP LOCKED`,
        );
        if (!rows[0]) return true;
        const run = runFromRow(rows[0]);
        const lostOwner = String(rows[0].lease_owner);
        if (run.attempts < MAX_TAKES && !run.cancelRequested) {
          await tx.query(`UPDATE runs SET status = 'queued', lease_owner = NULL, lease_expires_at = NULL WHERE id = $1`, [run.id]);
          await appendNote(tx, run, { event: "worker_lost", action: "queued again", lostOwner });
          requeued += 1;
        } else {
          const error: RunError = run.cancelRequested
            ? { code: "cancelled", message: "the run was cancelled (its worker was lost before it stopped)" }
            : { code: "worker_lost", message: `the worker processing the run stopped answering ${run.attempts} times; the run was not retried again` };
          await appendNote(tx, run, { event: "worker_lost", action: "failed", lostOwner });
          await this.end(tx, run.id, { error });
          failed += 1;
        }
        return false;
      });
      if (done) {
        if (failed > 0) this.afterEnd();
        return { requeued, failed };
      }
    }
  }

  /**
   * Appends a step while `owner` holds the run, adding its tokens to the run's usage and `usage` (a model turn's, for
   * the organization) to the platform's, in one transaction.
   * @returns false when the run is no longer `owner`'s (lost lease or ended): the caller stops working on it.
   */
  async appendStep(runId: string, owner: string, step: Omit<RunStep, "index" | "startedAt">, usage?: UsageRecord): Promise<number | undefined> {
    return this.database.transaction(async (tx) => {
      const held = await tx.query<{ next: unknown }>(
        `SELECT (SELECT COALESCE(max(index) + 1, 0) FROM run_steps WHERE run_id = $1) AS next FROM runs
         WHERE id = $1 AND lease_owner = $2 AND status = 'processing' FOR UPDATE`,
        [runId, owner],
      );
      if (!held[0]) return undefined;
      const index = toNumber(held[0].next);
      await tx.query(
        `INSERT INTO run_steps (run_id, index, attempt, kind, status, detail, input_tokens, output_tokens, duration_ms)
         VALUES ($1, $2, $3, $4, $5, $6::jsonb, $7, $8, $9)`,
        [runId, index, step.attempt, step.kind, step.status, jsonOf(step.detail), step.inputTokens, step.outputTokens, step.durationMs ?? null],
      );
      if (step.inputTokens > 0 || step.outputTokens > 0) {
        await tx.query(`UPDATE runs SET input_tokens = input_tokens + $2, output_tokens = output_tokens + $3 WHERE id = $1`, [runId, step.inputTokens, step.outputTokens]);
      }
      // The organization's usage commits with the step: a turn is counted once, whatever happens to its worker.
      if (usage) await recordUsageIn(tx, [usage]);
      return index;
    });
  }

  /**
   * Gives `owner`'s runs back to the queue without spending a take (a worker shutting down cleanly): another process,
   * or this one after its restart, resumes them from their step logs.
   */
  async release(owner: string, ids: readonly string[]): Promise<void> {
    for (const id of ids) {
      await this.database.transaction(async (tx) => {
        const rows = await tx.query(
          `UPDATE runs SET status = 'queued', lease_owner = NULL, lease_expires_at = NULL, attempts = GREATEST(0, attempts - 1)
           WHERE id = $1 AND lease_owner = $2 AND status = 'processing' RETURNING ${RUN_COLUMNS}`,
          [id, owner],
        );
        if (rows[0]) await appendNote(tx, runFromRow(rows[0]), { event: "released", action: "queued again: its worker shut down" });
      });
    }
  }

  /** Ends a `started` step (a tool's) while `owner` holds the run; false when the run is no longer its. */
  async finishStep(runId: string, owner: string, index: number, status: "finished" | "failed", detail: Record<string, unknown>, durationMs: number): Promise<boolean> {
    const rows = await this.database.query(
      `UPDATE run_steps SET status = $4, detail = $5::jsonb, duration_ms = $6
       WHERE run_id = $1 AND index = $3 AND EXISTS (SELECT 1 FROM runs WHERE id = $1 AND lease_owner = $2 AND status = 'processing')
       RETURNING index`,
      [runId, owner, index, status, jsonOf(detail), durationMs],
    );
    return rows.length > 0;
  }

  /** Ends a run `owner` holds; false when it no longer holds it (then nothing changes). */
  async finish(runId: string, owner: string, outcome: RunOutcome): Promise<boolean> {
    const ended = await this.database.transaction(async (tx) => {
      const held = await tx.query(`SELECT id FROM runs WHERE id = $1 AND lease_owner = $2 AND status = 'processing' FOR UPDATE`, [runId, owner]);
      if (!held[0]) return false;
      await this.end(tx, runId, outcome);
      return true;
    });
    if (ended) this.afterEnd();
    return ended;
  }

  /**
   * Cancels a run of `organizationId`: a queued one fails with `cancelled` at once; a processing one is flagged, and
   * its worker stops it (within one engine step when it runs in this process, else at its next lease renewal).
   * @returns the run after the change, or undefined when the organization has no such run.
   */
  async cancel(runId: string, organizationId: string): Promise<RunRecord | undefined> {
    const run = await this.database.transaction(async (tx) => {
      const rows = await tx.query(`SELECT status FROM runs WHERE id = $1 AND organization_id = $2 FOR UPDATE`, [runId, organizationId]);
      if (!rows[0]) return undefined;
      if (rows[0].status === "queued") await this.end(tx, runId, { error: { code: "cancelled", message: "the run was cancelled before it started" } });
      else if (rows[0].status === "processing") await tx.query(`UPDATE runs SET cancel_requested = true WHERE id = $1`, [runId]);
      const after = await tx.query(`SELECT ${RUN_COLUMNS} FROM runs WHERE id = $1`, [runId]);
      return runFromRow(after[0]!);
    });
    if (run?.status === "failed") this.afterEnd();
    return run;
  }

  /** Counts of runs by status (for the bench and the start banner). */
  async counts(): Promise<Record<string, number>> {
    const rows = await this.database.query<{ status: string; n: unknown }>(`SELECT status, count(*) AS n FROM runs GROUP BY status`);
    return Object.fromEntries(rows.map((row) => [row.status, toNumber(row.n)]));
  }

  /** Ends a run in `tx` (locked by the caller) and runs the end hook there. */
  private async end(tx: Sql, runId: string, outcome: RunOutcome): Promise<void> {
    const rows = await tx.query(
      `UPDATE runs SET status = $2, result = $3::jsonb, error = $4::jsonb, lease_owner = NULL, lease_expires_at = NULL, finished_at = now(),
         duration_ms = CASE WHEN started_at IS NULL THEN 0 ELSE GREATEST(0, (extract(epoch FROM now() - started_at) * 1000)::bigint) END
       WHERE id = $1 RETURNING ${RUN_COLUMNS}`,
      "result" in outcome ? [runId, "succeeded", jsonOf(outcome.result), null] : [runId, "failed", null, jsonOf(outcome.error)],
    );
    await this.onEnd(tx, runFromRow(rows[0]!));
  }
}

/** Appends a note to a run's step log in `tx`. */
async function appendNote(tx: Sql, run: RunRecord, detail: Record<string, unknown>): Promise<void> {
  await tx.query(
    `INSERT INTO run_steps (run_id, index, attempt, kind, status, detail)
     SELECT $1, COALESCE(max(index) + 1, 0), $2, 'note', 'finished', $3::jsonb FROM run_steps WHERE run_id = $1`,
    [run.id, Math.max(1, run.attempts), jsonOf(detail)],
  );
}

/**
 * What a run writes of its own (steps, result, error: a model's text, a tool's result), as jsonb can hold it: U+0000
 * and lone surrogates become U+FFFD, since no client can be asked to remove them (its request's were refused).
 */
function jsonOf(value: unknown): string {
  return JSON.stringify(storableJson(value));
}

function runFromRow(row: Record<string, unknown>): RunRecord {
  return { ...summaryFromRow(row), spec: row.request as RunSpec };
}

function summaryFromRow(row: Record<string, unknown>): RunSummary {
  const run: RunSummary = {
    id: String(row.id),
    kind: row.kind as RunKind,
    engine: String(row.engine),
    status: row.status as RunRecord["status"],
    attempts: toNumber(row.attempts),
    cancelRequested: row.cancel_requested === true,
    usage: { inputTokens: toNumber(row.input_tokens), outputTokens: toNumber(row.output_tokens), durationMs: row.duration_ms == null ? 0 : toNumber(row.duration_ms) },
    createdAt: row.created_at as Date,
  };
  if (row.organization_id != null) run.organizationId = String(row.organization_id);
  if (row.key_id != null) run.keyId = String(row.key_id);
  if (row.result != null) run.result = row.result as RunResult;
  if (row.error != null) run.error = row.error as RunError;
  if (row.started_at != null) run.startedAt = row.started_at as Date;
  if (row.finished_at != null) run.finishedAt = row.finished_at as Date;
  return run;
}

function stepFromRow(row: Record<string, unknown>): RunStep {
  return {
    index: toNumber(row.index),
    attempt: toNumber(row.attempt),
    kind: row.kind as RunStep["kind"],
    status: row.status as RunStep["status"],
    detail: row.detail as Record<string, unknown>,
    inputTokens: toNumber(row.input_tokens),
    outputTokens: toNumber(row.output_tokens),
    startedAt: row.started_at as Date,
    ...(row.duration_ms != null ? { durationMs: toNumber(row.duration_ms) } : {}),
  };
}
