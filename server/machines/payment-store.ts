// The payments journal: one row per EIP-3009 authorization, written before settlement (the unique key on the
// authorization makes a replay, concurrent or later, in any process, lose the insert), finished with the run it buys
// in one transaction, and left `settling` by a crash for the reconciler to finish from the chain's state.
import { randomBytes } from "node:crypto";
import type { Database, Sql } from "../platform/contract.js";
import type { PaymentStatus } from "../platform/store/payment-ledger.js";
import type { RunKind, RunSpec } from "../runs/contract.js";
import { createRunIn, newRunId } from "../runs/run-store.js";


/** A payment as stored. */
export interface PaymentRecord {
  id: string;
  kind: Extract<RunKind, "machine_search" | "machine_run">;
  x402Version: 1 | 2;
  network: string;
  asset: string;
  payTo: string;
  payer: string;
  nonce: string;
  amount: bigint;
  validBefore: number;
  paymentIdentifier?: string;
  payloadDigest: string;
  /** The client's decoded payment header, as verified. */
  payload: Record<string, unknown>;
  /** The payment requirements it was verified against (in its protocol version's shape). */
  requirements: Record<string, unknown>;
  runId: string;
  runRequest: RunSpec;
  status: PaymentStatus;
  transaction?: string;
  error?: string;
  createdAt: Date;
  settledAt?: Date;
}

/** A payment about to be settled: everything but what the journal decides. */
export type NewPayment = Omit<PaymentRecord, "id" | "runId" | "status" | "transaction" | "error" | "createdAt" | "settledAt">;

/** What recording a payment found. */
export type Reservation =
  | { reserved: PaymentRecord }
  /** The authorization (or the payment identifier) is already in the journal. */
  | { existing: PaymentRecord };

const COLUMNS = `id, kind, x402_version, network, asset, pay_to, payer, nonce, amount::text AS amount, valid_before,
  payment_identifier, payload_digest, payload, requirements, run_id, run_request, status, transaction, error, created_at, settled_at`;

/** The payments table. */
export class PaymentStore {
  constructor(private readonly database: Database) {}

  /**
   * Records `payment` as settling, leased for `leaseMs`. When the authorization or the identifier is already there,
   * returns that row instead; a row whose settlement failed (never charged) is taken over for this new try.
   */
  async reserve(payment: NewPayment, leaseMs: number): Promise<Reservation> {
    // The authorization's key, in the one spelling the unique constraint compares.
    const key = [payment.network, payment.asset.toLowerCase(), payment.payer.toLowerCase(), payment.nonce.toLowerCase()];
    const identifier = payment.paymentIdentifier ?? null;
    const payload = JSON.stringify(payment.payload);
    const requirements = JSON.stringify(payment.requirements);
    const runRequest = JSON.stringify(payment.runRequest);
    const inserted = await this.database.query(
      `INSERT INTO payments (network, asset, payer, nonce, id, kind, x402_version, pay_to, amount, valid_before, payment_identifier,
         payload_digest, payload, requirements, run_id, run_request, status, lease_expires_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13::jsonb, $14::jsonb, $15, $16::jsonb, 'settling', now() + $17 * interval '1 millisecond')
       ON CONFLICT DO NOTHING RETURNING ${COLUMNS}`,
      [...key, `pay_${randomBytes(16).toString("hex")}`, payment.kind, payment.x402Version, payment.payTo.toLowerCase(), payment.amount.toString(),
        payment.validBefore, identifier, payment.payloadDigest, payload, requirements, newRunId(), runRequest, leaseMs],
    );
    if (inserted[0]) return { reserved: paymentFromRow(inserted[0]) };
    // A failed settlement charged nothing: the same authorization may be tried again (the payer topped up).
    const retaken = await this.database.query(
      `UPDATE payments SET status = 'settling', lease_expires_at = now() + $6 * interval '1 millisecond', error = NULL, updated_at = now(),
         kind = $5, payload = $7::jsonb, requirements = $8::jsonb, run_request = $9::jsonb, payment_identifier = $10, payload_digest = $11
       WHERE network = $1 AND asset = $2 AND payer = $3 AND nonce = $4 AND status = 'failed'
         AND ($10::text IS NULL OR NOT EXISTS (SELECT 1 FROM payments other WHERE other.payment_identifier = $10 AND other.nonce <> $4))
       RETURNING ${COLUMNS}`,
      [...key, payment.kind, leaseMs, payload, requirements, runRequest, identifier, payment.payloadDigest],
    );
    if (retaken[0]) return { reserved: paymentFromRow(retaken[0]) };
    const existing = await this.database.query(
      `SELECT ${COLUMNS} FROM payments WHERE (network = $1 AND asset = $2 AND payer = $3 AND nonce = $4) OR payment_identifier = $5
       ORDER BY (payment_identifier = $5) DESC NULLS LAST LIMIT 1`,
      [...key, identifier],
    );
    if (!existing[0]) throw new Error("a payment's insert conflicted but no conflicting row was found"); // a deleted row: retrying works
    return { existing: paymentFromRow(existing[0]) };
  }

  /**
   * Records the settlement of a payment and creates its run, in one transaction: a charge always has its run. With
   * the transfer's hash in hand it takes a `failed` row too: that proof of the charge outranks whoever failed it (a
   * concurrent settler reading a lagging endpoint, or the authorization resubmitted by someone else after a revert).
   * Idempotent: a payment already settled is returned as it is.
   */
  async settle(id: string, transaction: string | undefined): Promise<PaymentRecord> {
    return this.database.transaction(async (tx) => {
      const rows = await tx.query(
        `UPDATE payments SET status = 'settled', transaction = $2, settled_at = now(), lease_expires_at = NULL, error = NULL, updated_at = now()
         WHERE id = $1 AND (status = 'settling' OR (status = 'failed' AND $2::text IS NOT NULL)) RETURNING ${COLUMNS}`,
        [id, transaction?.toLowerCase() ?? null],
      );
      if (!rows[0]) return this.getIn(tx, id);
      const payment = paymentFromRow(rows[0]);
      await createRunIn(tx, { id: payment.runId, kind: payment.kind, spec: payment.runRequest });
      return payment;
    });
  }

  /** Marks a settling payment failed (it was never charged), with why. Returns the row as it now stands. */
  async fail(id: string, error: string): Promise<PaymentRecord> {
    const rows = await this.database.query(
      `UPDATE payments SET status = 'failed', error = $2, lease_expires_at = NULL, updated_at = now() WHERE id = $1 AND status = 'settling' RETURNING ${COLUMNS}`,
      [id, error.slice(0, 2000)],
    );
    return rows[0] ? paymentFromRow(rows[0]) : this.getIn(this.database, id);
  }

  /** Keeps a settling payment's lease (its outcome is not known yet), noting why. */
  async extend(id: string, leaseMs: number, note: string): Promise<void> {
    await this.database.query(
      `UPDATE payments SET lease_expires_at = now() + $2 * interval '1 millisecond', error = $3, updated_at = now() WHERE id = $1 AND status = 'settling'`,
      [id, leaseMs, note.slice(0, 2000)],
    );
  }

  /** Takes up to `limit` settling payments whose lease ran out (their settler died or gave up), leasing them anew. */
  async takeExpired(limit: number, leaseMs: number): Promise<PaymentRecord[]> {
    const rows = await this.database.query(
      `UPDATE payments SET lease_expires_at = now() + $2 * interval '1 millisecond', updated_at = now()
       WHERE id IN (SELECT id FROM payments WHERE status = 'settling' AND lease_expires_at < now() ORDER BY lease_expires_at LIMIT $1 FOR UPDATE SKIP LOCKED)
       RETURNING ${COLUMNS}`,
      [limit, leaseMs],
    );
    return rows.map(paymentFromRow);
  }

  /**
   * Renews a settling payment's lease as its settlement starts (it may have waited in its payer's queue). Returns the
   * row as it now stands: not `settling` when someone else finished it meanwhile.
   */
  async renew(id: string, leaseMs: number): Promise<PaymentRecord> {
    const rows = await this.database.query(
      `UPDATE payments SET lease_expires_at = now() + $2 * interval '1 millisecond', updated_at = now() WHERE id = $1 AND status = 'settling' RETURNING ${COLUMNS}`,
      [id, leaseMs],
    );
    return rows[0] ? paymentFromRow(rows[0]) : this.getIn(this.database, id);
  }

  /**
   * Takes up to `limit` failed payments to look at again on chain: their signed authorization may still be submitted
   * by anyone (it is public once broadcast) until its validBefore. Those created within `windowMs`, still valid or
   * expired less than `marginSeconds` ago, and not looked at for `everyMs` (the look is noted in updated_at).
   */
  async takeFailedToRecheck(limit: number, everyMs: number, windowMs: number, marginSeconds: number): Promise<PaymentRecord[]> {
    const rows = await this.database.query(
      `UPDATE payments SET updated_at = now()
       WHERE id IN (SELECT id FROM payments WHERE status = 'failed' AND created_at > now() - $3 * interval '1 millisecond'
         AND updated_at < now() - $2 * interval '1 millisecond' AND valid_before::numeric + $4 > extract(epoch FROM now())::numeric
         ORDER BY updated_at LIMIT $1 FOR UPDATE SKIP LOCKED)
       RETURNING ${COLUMNS}`,
      [limit, everyMs, windowMs, marginSeconds],
    );
    return rows.map(paymentFromRow);
  }

  /** The payment of an authorization (the journal's key: network, asset, payer, nonce; any case), if any. */
  async byAuthorization(key: Pick<PaymentRecord, "network" | "asset" | "payer" | "nonce">): Promise<PaymentRecord | undefined> {
    const rows = await this.database.query(
      `SELECT ${COLUMNS} FROM payments WHERE network = $1 AND asset = $2 AND payer = $3 AND nonce = $4`,
      [key.network, key.asset.toLowerCase(), key.payer.toLowerCase(), key.nonce.toLowerCase()],
    );
    return rows[0] ? paymentFromRow(rows[0]) : undefined;
  }

  /** The payment made under a client's payment identifier, if any. */
  async byIdentifier(paymentIdentifier: string): Promise<PaymentRecord | undefined> {
    const rows = await this.database.query(`SELECT ${COLUMNS} FROM payments WHERE payment_identifier = $1`, [paymentIdentifier]);
    return rows[0] ? paymentFromRow(rows[0]) : undefined;
  }

  /** The payment that bought `runId`, if any. */
  async byRun(runId: string): Promise<PaymentRecord | undefined> {
    const rows = await this.database.query(`SELECT ${COLUMNS} FROM payments WHERE run_id = $1`, [runId]);
    return rows[0] ? paymentFromRow(rows[0]) : undefined;
  }

  private async getIn(sql: Sql, id: string): Promise<PaymentRecord> {
    const rows = await sql.query(`SELECT ${COLUMNS} FROM payments WHERE id = $1`, [id]);
    if (!rows[0]) throw new Error(`payment ${id} is not in the journal`);
    return paymentFromRow(rows[0]);
  }
}

function paymentFromRow(row: Record<string, unknown>): PaymentRecord {
  const json = (value: unknown) => (typeof value === "string" ? JSON.parse(value) : value) as Record<string, unknown>;
  return {
    id: String(row.id),
    kind: row.kind as PaymentRecord["kind"],
    x402Version: Number(row.x402_version) as 1 | 2,
    network: String(row.network),
    asset: String(row.asset),
    payTo: String(row.pay_to),
    payer: String(row.payer),
    nonce: String(row.nonce),
    amount: BigInt(String(row.amount)),
    validBefore: Number(row.valid_before),
    ...(row.payment_identifier !== null ? { paymentIdentifier: String(row.payment_identifier) } : {}),
    payloadDigest: String(row.payload_digest),
    payload: json(row.payload),
    requirements: json(row.requirements),
    runId: String(row.run_id),
    runRequest: json(row.run_request) as unknown as RunSpec,
    status: row.status as PaymentStatus,
    ...(row.transaction !== null ? { transaction: String(row.transaction) } : {}),
    ...(row.error !== null ? { error: String(row.error) } : {}),
    createdAt: new Date(row.created_at as string),
    ...(row.settled_at !== null ? { settledAt: new Date(row.settled_at as string) } : {}),
  };
}
