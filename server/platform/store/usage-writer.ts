// Writes usage with group commit: an increment is durable when record() resolves, and increments that arrive while a
// batch commits share the next batch's transaction (no timer, no fixed delay), so accounting never serializes requests.
import { type Database, DatabaseUnavailableError, type KeyRecord, type Organization, type PreparedStatement, type Sql, type UsageIncrement } from "../contract.js";
import { sqlState } from "../db/errors.js";
import { keyRecordFromJson } from "./key-store.js";
import { organizationFromJson } from "./organization-store.js";
import { requireDay, requireDollars, requireId, requireInteger } from "./validate.js";

/** An increment to record, with the prepaid credit hold it settles (dropped in the same transaction). */
export type UsageRecord = UsageIncrement & { creditHoldId?: string };

/**
 * The key and organization records a batch read back as it committed, as of `readAt` (Date.now() when the statement
 * was sent: it read them no earlier), for the caches that would otherwise read them again (server/platform).
 */
export interface BatchRead {
  readAt: number;
  keys: Array<{ digest: string; record: KeyRecord }>;
  organizations: Organization[];
}

interface Waiter {
  record: UsageRecord;
  /** When record() was called: the key's lastUsedAt. */
  at: Date;
  resolve: () => void;
  reject: (error: unknown) => void;
  settled: Promise<void>;
}

/** Attempts of a batch that PostgreSQL rolled back for a deadlock or a serialization failure (class 40). */
const ATTEMPTS_ON_ROLLBACK = 3;

/**
 * Records usage increments in batches. If no batch is committing, record() starts one at once; while one commits,
 * later records wait for it and then go together in the next. Each batch is one transaction: usage rows summed per
 * (organization, key, model, day) and added with one INSERT ... ON CONFLICT DO UPDATE, prepaid spend taken from the
 * balances, the batch's credit holds deleted, and the keys' last_used_at moved forward. Nothing is applied twice or in
 * part; a batch that fails rejects each of its waiters with DatabaseUnavailableError and the next batch starts clean.
 */
export class UsageWriter {
  #queue: Waiter[] = [];
  /** The batch now committing and the ones after it, until the queue is empty; undefined when idle. */
  #draining: Promise<void> | undefined;
  // Stryker disable next-line ArrayDeclaration: flush() and close() await each entry's promise; one without is passed over
  #inFlight: Waiter[] = [];
  #closed = false;

  /** @param onRead given the records each committed batch read back (not called for a batch that failed). */
  constructor(private readonly database: Database, private readonly onRead?: (read: BatchRead) => void) {}

  /**
   * Queues `record` and resolves once it is committed.
   * @throws PlatformInputError (rejected, nothing queued) for a malformed increment.
   * @throws DatabaseUnavailableError when its batch could not be committed (nothing of that batch was applied).
   */
  record(record: UsageRecord): Promise<void> {
    if (this.#closed) return Promise.reject(new Error("the usage writer is closed"));
    try {
      validateRecord(record);
    } catch (error) {
      return Promise.reject(error);
    }
    let resolve!: () => void;
    let reject!: (error: unknown) => void;
    const settled = new Promise<void>((res, rej) => {
      resolve = res;
      reject = rej;
    });
    // NOTE: marked handled here so that a failed batch never becomes an unhandled rejection (which ends a Node
    // process) when a waiter stopped listening, e.g. a request whose client went away; callers still receive it.
    settled.catch(() => {});
    this.#queue.push({ record, at: new Date(), resolve, reject, settled });
    this.#drain();
    return settled;
  }

  /**
   * Resolves once every increment recorded before the call is committed; rejects with the first failure among them
   * (each of which was also reported to its own record() caller).
   */
  async flush(): Promise<void> {
    const pending = [...this.#inFlight, ...this.#queue].map((waiter) => waiter.settled);
    await Promise.all(pending);
  }

  /** Refuses new records and waits for the queued ones to settle (the database stays open: it is the caller's). */
  async close(): Promise<void> {
    this.#closed = true;
    await Promise.allSettled([...this.#inFlight, ...this.#queue].map((waiter) => waiter.settled));
  }

  #drain(): void {
    if (this.#draining !== undefined) return;
    this.#draining = (async () => {
      while (this.#queue.length > 0) {
        const batch = this.#queue;
        this.#queue = [];
        this.#inFlight = batch;
        try {
          await this.#commit(batch.map((waiter) => ({ record: waiter.record, at: waiter.at })));
          for (const waiter of batch) waiter.resolve();
        } catch (error) {
          const failure = error instanceof DatabaseUnavailableError
            ? error
            : new DatabaseUnavailableError(`usage was not recorded: ${(error as Error).message ?? String(error)}`, { cause: error });
          for (const waiter of batch) waiter.reject(failure);
        }
        // Stryker disable next-line ArrayDeclaration: as at #inFlight's declaration
        this.#inFlight = [];
      }
      this.#draining = undefined;
    })();
  }

  async #commit(batch: ReadonlyArray<{ record: UsageRecord; at: Date }>): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      let read: BatchRows;
      try {
        read = await writeBatch(this.database, batch);
      } catch (error) {
        if (attempt >= ATTEMPTS_ON_ROLLBACK || sqlState(error)?.startsWith("40") !== true) throw error;
        continue;
      }
      // Committed: nothing after this may fail the batch. A throw here (records that cannot be read back) is dropped:
      // the caches then read for themselves.
      try {
        this.onRead?.(batchReadOf(read));
      } catch {}
      return;
    }
  }
}

/**
 * The batch statement: `$1` is the batch as a JSON array of increments (see writeBatch). Exported for
 * bench/usage-rollup.ts, which times it with and without its organization_days part.
 */
export const USAGE_BATCH: PreparedStatement = {
  name: "loom_usage_batch",
  text: `WITH batch AS (
       SELECT * FROM jsonb_to_recordset($1::jsonb) AS r(organization_id text, key_id text, model text, day text, requests bigint,
         input_tokens bigint, cached_input_tokens bigint, output_tokens bigint, spend numeric, hold_id text, at timestamptz)),
     usage AS (
       INSERT INTO usage_daily AS u (organization_id, key_id, model, day, requests, input_tokens, cached_input_tokens, output_tokens, spend)
       SELECT organization_id, key_id, model, day::date, sum(requests), sum(input_tokens), sum(cached_input_tokens), sum(output_tokens), sum(spend)
       FROM batch GROUP BY organization_id, key_id, model, day ORDER BY organization_id, key_id, model, day
       ON CONFLICT (organization_id, key_id, model, day) DO UPDATE SET
         requests = u.requests + excluded.requests,
         input_tokens = u.input_tokens + excluded.input_tokens,
         cached_input_tokens = u.cached_input_tokens + excluded.cached_input_tokens,
         output_tokens = u.output_tokens + excluded.output_tokens,
         spend = u.spend + excluded.spend
       RETURNING 1),
     organization_days AS (
       INSERT INTO usage_by_organization AS o (organization_id, day, model, requests, input_tokens, cached_input_tokens, output_tokens, spend)
       SELECT organization_id, day::date, model, sum(requests), sum(input_tokens), sum(cached_input_tokens), sum(output_tokens), sum(spend)
       FROM batch GROUP BY organization_id, day, model ORDER BY organization_id, day, model
       ON CONFLICT (organization_id, day, model) DO UPDATE SET
         requests = o.requests + excluded.requests,
         input_tokens = o.input_tokens + excluded.input_tokens,
         cached_input_tokens = o.cached_input_tokens + excluded.cached_input_tokens,
         output_tokens = o.output_tokens + excluded.output_tokens,
         spend = o.spend + excluded.spend
       RETURNING 1),
     balances AS (
       UPDATE organizations AS o SET credit_balance = o.credit_balance - s.dollars
       FROM (SELECT organization_id, sum(spend) AS dollars FROM batch GROUP BY organization_id HAVING sum(spend) > 0) AS s
       WHERE o.id = s.organization_id AND o.billing_mode = 'prepaid'
       RETURNING 1),
     holds AS (
       DELETE FROM credit_holds WHERE id IN (SELECT hold_id FROM batch WHERE hold_id IS NOT NULL)
       RETURNING 1),
     keys AS (
       UPDATE api_keys AS k SET last_used_at = GREATEST(k.last_used_at, t.at)
       FROM (SELECT key_id, max(at) AS at FROM batch GROUP BY key_id) AS t
       WHERE k.id = t.key_id
       RETURNING 1)
     SELECT (SELECT count(*) FROM usage) AS usage_rows, (SELECT count(*) FROM organization_days) AS organization_days, (SELECT count(*) FROM balances) AS balances,
       (SELECT count(*) FROM holds) AS holds, (SELECT count(*) FROM keys) AS keys,
       (SELECT jsonb_agg(to_jsonb(k)) FROM api_keys AS k WHERE k.id IN (SELECT key_id FROM batch)) AS key_rows,
       (SELECT jsonb_agg(to_jsonb(o)) FROM organizations AS o WHERE o.id IN (SELECT organization_id FROM batch)) AS organization_rows`,
};

/**
 * One batch as ONE prepared statement (data-modifying CTEs), committed on its own: a single round trip, which is what
 * a response waits for before its last byte, without parsing and planning it again. A statement is atomic, so the
 * batch applies whole or not at all.
 * - usage rows, summed per primary key first (ON CONFLICT DO UPDATE cannot touch one row twice in a statement), in
 *   key order, so that writers take row locks in one order;
 * - the same usage summed per organization, day and model into usage_by_organization (migration 9), which the
 *   dashboard and the daily limits read instead of one row per key;
 * - prepaid spend taken from the balances (summed in SQL as numeric: dollars add up exactly);
 * - the batch's credit holds deleted;
 * - the keys' last_used_at moved forward (never back);
 * - the batch's keys and organizations read back (as of the statement's start), so that a key in steady use has its
 *   cached record renewed by its own requests' commits instead of by reads of their own, a round trip each.
 * A deadlock between processes (they lock balances or keys in another order) is PostgreSQL's class 40 error, and the
 * batch is retried.
 */
async function writeBatch(database: Database, batch: ReadonlyArray<{ record: UsageRecord; at: Date }>): Promise<BatchRows> {
  const readAt = Date.now();
  const [row] = await database.queryPrepared<BatchAnswer>(USAGE_BATCH, [batchJson(batch)]);
  return { readAt, row };
}

/** The batch statement's row (its counts less). */
type BatchAnswer = { key_rows: Array<Record<string, unknown>> | null; organization_rows: Array<Record<string, unknown>> | null };

/** What a committed batch statement answered, and when it was sent. */
interface BatchRows {
  readAt: number;
  row: BatchAnswer | undefined;
}

/** The records of a batch's answer. @throws TypeError for a row that is not a record. */
function batchReadOf({ readAt, row }: BatchRows): BatchRead {
  return {
    readAt,
    keys: (row?.key_rows ?? []).map((key) => ({ digest: key.key_digest as string, record: keyRecordFromJson(key) })),
    organizations: (row?.organization_rows ?? []).map(organizationFromJson),
  };
}

/**
 * Adds usage inside the caller's transaction `tx` (the same statement as a batch, not prepared): for writers whose
 * usage must commit with something else, such as an agent run's step and its tokens (server/runs).
 * @throws PlatformInputError for a malformed increment.
 */
export async function recordUsageIn(tx: Sql, records: readonly UsageRecord[], at = new Date()): Promise<void> {
  for (const record of records) validateRecord(record);
  if (records.length > 0) await tx.query(USAGE_BATCH.text, [batchJson(records.map((record) => ({ record, at })))]);
}

/** A batch as the statement's one JSON parameter. */
function batchJson(batch: ReadonlyArray<{ record: UsageRecord; at: Date }>): string {
  return JSON.stringify(
    batch.map(({ record, at }) => ({
      organization_id: record.organizationId,
      key_id: record.keyId,
      model: record.model,
      day: record.day,
      requests: record.requests,
      input_tokens: record.inputTokens,
      cached_input_tokens: record.cachedInputTokens,
      output_tokens: record.outputTokens,
      spend: record.spendDollars,
      hold_id: record.creditHoldId ?? null,
      at: at.toISOString(),
    })),
  );
}

/** Checks an increment before it joins a batch, so one malformed increment cannot fail the others. */
function validateRecord(record: UsageRecord): void {
  requireId("organizationId", record.organizationId);
  requireId("keyId", record.keyId);
  requireId("model", record.model);
  requireDay("day", record.day);
  for (const field of ["requests", "inputTokens", "cachedInputTokens", "outputTokens"] as const) requireInteger(field, record[field], 0);
  requireDollars("spendDollars", record.spendDollars);
  if (record.creditHoldId !== undefined) requireId("creditHoldId", record.creditHoldId);
}
