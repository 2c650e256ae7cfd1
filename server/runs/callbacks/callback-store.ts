// Callback deliveries in the database (run_callbacks, callback_attempts): enqueued inside the transaction that ends
// a run, claimed under a lease by a deliverer, each attempt recorded, then delivered, retried later, or given up.
// NOTE: every time (leases, schedules, the give-up window) is the database's clock, so processes on machines whose
// clocks differ agree.
import { randomBytes } from "node:crypto";
import type { Database, Sql } from "../../platform/contract.js";
import { toNumber } from "../../platform/store/numbers.js";
import { type BackoffPolicy, retryDelayMs, validateBackoffPolicy } from "./backoff.js";
import { type RunCallbackPayload, serializeCallbackPayload } from "./callback-payload.js";
import { validateCallbackUrl } from "./callback-url.js";

/** A delivery a deliverer has claimed: what to send, to whom, as which attempt. */
export interface ClaimedCallback {
  runId: string;
  /** The run's organization, whose secret signs it; null for machine runs (issue 17), which have none. */
  organizationId: string | null;
  url: string;
  /** The exact body to send (and sign), fixed when the run ended. */
  payload: string;
  /** The Standard Webhooks `webhook-id`, the same on every attempt: receivers deduplicate by it. */
  webhookId: string;
  /** This attempt's number, 1 for the first. Also the claim's fencing token (see recordAttempt). */
  attempt: number;
}

/** How one attempt went: an HTTP status, or no status and why (a timeout, a refused connection). */
export interface AttemptOutcome {
  /** The receiver's HTTP status; 2xx means delivered. Null when no response came. */
  statusCode: number | null;
  /** Why it failed without a response (or a note on a response); null when there is nothing to say. */
  error: string | null;
  /** From the start of the attempt to its outcome. */
  durationMs: number;
}

/**
 * Where a delivery stands. `pending`: waiting for its next attempt (the first, or a retry); `delivering`: an attempt
 * is under way (a deliverer holds its lease); `delivered`: a 2xx came back; `gave_up`: no 2xx within the window.
 */
export type CallbackDeliveryStatus = "pending" | "delivering" | "delivered" | "gave_up";

/** One attempt, as recorded. */
export interface CallbackAttempt {
  attempt: number;
  /** When it started. */
  at: Date;
  statusCode: number | null;
  error: string | null;
  durationMs: number;
}

/** A run's callback delivery and its attempts, for the run's owner to see. */
export interface CallbackDelivery {
  runId: string;
  url: string;
  webhookId: string;
  status: CallbackDeliveryStatus;
  /** When the next attempt is due; null once delivered or given up. */
  nextAttemptAt: Date | null;
  createdAt: Date;
  deliveredAt: Date | null;
  gaveUpAt: Date | null;
  /** Oldest first. */
  attempts: CallbackAttempt[];
}

/**
 * What recordAttempt did: `delivered`; `retrying` at `nextAttemptAt`; `gave_up`; or `superseded`: the attempt was
 * logged but its lease had lapsed and another claim owns the delivery now (or it was delivered meanwhile), so the
 * schedule was left to that one; or the delivery is gone (its run was deleted), and nothing was logged.
 */
export type RecordedAttempt =
  | { status: "delivered" | "gave_up" | "superseded" }
  | { status: "retrying"; nextAttemptAt: Date };

/** The error recorded for an attempt whose deliverer never recorded an outcome (killed, or stalled past its lease). */
export const LOST_ATTEMPT_ERROR = "no outcome recorded: the process delivering it stopped or stalled past its lease";

/** Whether an HTTP status means the receiver took the callback. */
export function isDeliveredStatus(statusCode: number | null): boolean {
  return statusCode !== null && statusCode >= 200 && statusCode <= 299;
}

/** A new `webhook-id`: `msg_` and 32 hex characters (128 random bits). */
export function newWebhookId(): string {
  return `msg_${randomBytes(16).toString("hex")}`;
}

/**
 * Records that run `runId` must call `url` back with `payload`. Call it INSIDE the transaction that ends the run, so
 * an ended run always has its delivery recorded and a rolled-back end has none; then call the deliverer's notify()
 * after the commit (else the next poll finds it). The body and its webhook-id are fixed here: every attempt sends the
 * same bytes under the same id. A second call for the same run changes nothing and answers the first's webhook-id.
 * @throws PlatformInputError naming `url` for a URL validateCallbackUrl refuses (check it when the run is created).
 * @throws TypeError naming the payload's bad field, or when `payload.runId` is not `runId`.
 */
export async function enqueueCallback(
  tx: Sql,
  delivery: { runId: string; url: string; payload: RunCallbackPayload },
): Promise<{ webhookId: string; enqueued: boolean }> {
  const { runId, url, payload } = delivery;
  validateCallbackUrl("url", url);
  if (payload.runId !== runId) throw new TypeError(`payload.runId ${JSON.stringify(payload.runId)} is not the run ${JSON.stringify(runId)}`);
  const body = serializeCallbackPayload(payload);
  const [inserted] = await tx.query<{ webhook_id: string }>(
    "INSERT INTO run_callbacks (run_id, url, payload, webhook_id) VALUES ($1, $2, $3, $4) ON CONFLICT (run_id) DO NOTHING RETURNING webhook_id",
    [runId, url, body, newWebhookId()],
  );
  if (inserted !== undefined) return { webhookId: inserted.webhook_id, enqueued: true };
  const [existing] = await tx.query<{ webhook_id: string }>("SELECT webhook_id FROM run_callbacks WHERE run_id = $1", [runId]);
  return { webhookId: existing!.webhook_id, enqueued: false };
}

/** Claims due deliveries; a claim whose lease lapsed unrecorded is logged as lost and taken again. */
const CLAIM_DUE = `
  WITH due AS (
    SELECT c.run_id, c.attempts, c.lease_expires_at, r.organization_id
    FROM run_callbacks c JOIN runs r ON r.id = c.run_id
    WHERE c.delivered_at IS NULL AND c.gave_up_at IS NULL AND c.next_attempt_at <= now()
      AND (c.lease_expires_at IS NULL OR c.lease_expires_at <= now())
    ORDER BY c.next_attempt_at
    LIMIT $1
    FOR UPDATE OF c SKIP LOCKED
  ), lost AS (
    INSERT INTO callback_attempts (run_id, attempt, at, status_code, error, duration_ms)
    SELECT run_id, attempts, lease_expires_at, NULL, $3, 0 FROM due WHERE lease_expires_at IS NOT NULL AND attempts >= 1
    ON CONFLICT (run_id, attempt) DO NOTHING
  )
  UPDATE run_callbacks c SET attempts = c.attempts + 1, lease_expires_at = now() + $2::double precision * interval '1 millisecond'
  FROM due WHERE c.run_id = due.run_id
  RETURNING c.run_id, due.organization_id, c.url, c.payload, c.webhook_id, c.attempts`;

/**
 * Logs an attempt (nothing when the delivery is gone: its run was deleted meanwhile); a late outcome of a claim
 * already logged as lost replaces that entry.
 */
const LOG_ATTEMPT = `
  INSERT INTO callback_attempts (run_id, attempt, at, status_code, error, duration_ms)
  SELECT run_id, $2::integer, now() - $5::double precision * interval '1 millisecond', $3::integer, $4::text, $5::double precision
  FROM run_callbacks WHERE run_id = $1
  ON CONFLICT (run_id, attempt) DO UPDATE SET at = excluded.at, status_code = excluded.status_code, error = excluded.error, duration_ms = excluded.duration_ms
  RETURNING attempt`;

/**
 * After a failure of the claim that still owns the delivery: the next attempt, or giving up when this one started
 * at or after the window's end, so the last attempt always starts when the window ends (however long the backoff).
 */
const SCHEDULE_RETRY = `
  WITH window_end AS (
    SELECT min(at) + $3::double precision * interval '1 millisecond' AS at,
      now() - $5::double precision * interval '1 millisecond' >= min(at) + $3::double precision * interval '1 millisecond' AS ended
    FROM callback_attempts WHERE run_id = $1
  )
  UPDATE run_callbacks c SET
    lease_expires_at = NULL,
    gave_up_at = CASE WHEN window_end.ended THEN now() END,
    next_attempt_at = CASE WHEN window_end.ended THEN c.next_attempt_at
                           ELSE LEAST(now() + $4::double precision * interval '1 millisecond', window_end.at) END
  FROM window_end
  WHERE c.run_id = $1 AND c.attempts = $2 AND c.delivered_at IS NULL AND c.gave_up_at IS NULL
  RETURNING c.gave_up_at, c.next_attempt_at`;

/** Run callback deliveries: claim, record, read. */
export class CallbackStore {
  readonly backoff: BackoffPolicy;

  /**
   * @param backoff how failures are retried (DEFAULT_CALLBACK_BACKOFF: 10 s doubling, at most 1 h apart, for 24 h).
   * @throws RangeError naming a bad backoff field.
   */
  constructor(
    private readonly database: Database,
    backoff: Partial<BackoffPolicy> = {},
  ) {
    this.backoff = validateBackoffPolicy(backoff);
  }

  /**
   * Claims up to `limit` due deliveries for `leaseMs`, oldest due first, each as its next attempt. Rows another
   * transaction holds are skipped (FOR UPDATE SKIP LOCKED) and a claimed row is not due again until its lease lapses,
   * so two processes never send the same attempt at once; a claim never recorded (its process was killed) is logged
   * as a lost attempt and claimed again once its lease lapses.
   * NOTE: `leaseMs` must outlast the attempt (its timeout and the recording), else a slow attempt is sent twice.
   */
  async claimDue(limit: number, leaseMs: number): Promise<ClaimedCallback[]> {
    if (!Number.isSafeInteger(limit) || limit < 1) throw new RangeError(`limit must be an integer >= 1, got ${limit}`);
    if (!Number.isFinite(leaseMs) || leaseMs <= 0) throw new RangeError(`leaseMs must be a number > 0, got ${leaseMs}`);
    const rows = await this.database.query(CLAIM_DUE, [limit, leaseMs, LOST_ATTEMPT_ERROR]);
    return rows.map((row) => ({
      runId: row.run_id as string,
      organizationId: row.organization_id as string | null,
      url: row.url as string,
      payload: row.payload as string,
      webhookId: row.webhook_id as string,
      attempt: toNumber(row.attempts),
    }));
  }

  /**
   * Logs the claimed attempt's outcome in callback_attempts and moves the delivery on, in one transaction: a 2xx
   * marks it delivered; a failure schedules the next attempt after the backoff (at the latest when the window since
   * the first attempt ends), or gives it up when it started at or after that end. A claim that lost its lease to another only logs its attempt (see RecordedAttempt).
   */
  async recordAttempt(claim: Pick<ClaimedCallback, "runId" | "attempt">, outcome: AttemptOutcome): Promise<RecordedAttempt> {
    const durationMs = Math.max(0, Math.round(outcome.durationMs));
    const delivered = isDeliveredStatus(outcome.statusCode);
    return this.database.transaction(async (tx) => {
      const logged = await tx.query(LOG_ATTEMPT, [claim.runId, claim.attempt, outcome.statusCode, outcome.error, durationMs]);
      if (logged.length === 0) return { status: "superseded" };
      if (delivered) {
        // Delivered is a fact, whichever claim saw it: a later failure of another claim never undoes it.
        await tx.query("UPDATE run_callbacks SET delivered_at = COALESCE(delivered_at, now()), gave_up_at = NULL, lease_expires_at = NULL WHERE run_id = $1", [claim.runId]);
        return { status: "delivered" };
      }
      const delayMs = retryDelayMs(this.backoff, claim.attempt);
      const [row] = await tx.query<{ gave_up_at: Date | null; next_attempt_at: Date }>(SCHEDULE_RETRY, [claim.runId, claim.attempt, this.backoff.giveUpAfterMs, delayMs, durationMs]);
      if (row === undefined) return { status: "superseded" };
      return row.gave_up_at !== null ? { status: "gave_up" } : { status: "retrying", nextAttemptAt: row.next_attempt_at };
    });
  }

  /** The run's callback delivery with its attempts, or undefined when the run has none (yet). */
  async deliveryOf(runId: string): Promise<CallbackDelivery | undefined> {
    const [row] = await this.database.query(
      `SELECT run_id, url, webhook_id, created_at, delivered_at, gave_up_at, next_attempt_at,
         CASE WHEN delivered_at IS NOT NULL THEN 'delivered' WHEN gave_up_at IS NOT NULL THEN 'gave_up'
              WHEN lease_expires_at > now() THEN 'delivering' ELSE 'pending' END AS status
       FROM run_callbacks WHERE run_id = $1`,
      [runId],
    );
    if (row === undefined) return undefined;
    const attempts = await this.database.query(
      "SELECT attempt, at, status_code, error, duration_ms FROM callback_attempts WHERE run_id = $1 ORDER BY attempt",
      [runId],
    );
    const status = row.status as CallbackDeliveryStatus;
    return {
      runId: row.run_id as string,
      url: row.url as string,
      webhookId: row.webhook_id as string,
      status,
      nextAttemptAt: status === "delivered" || status === "gave_up" ? null : (row.next_attempt_at as Date),
      createdAt: row.created_at as Date,
      deliveredAt: row.delivered_at as Date | null,
      gaveUpAt: row.gave_up_at as Date | null,
      attempts: attempts.map((attempt) => ({
        attempt: toNumber(attempt.attempt),
        at: attempt.at as Date,
        statusCode: attempt.status_code === null ? null : toNumber(attempt.status_code),
        error: attempt.error as string | null,
        durationMs: toNumber(attempt.duration_ms),
      })),
    };
  }
}
