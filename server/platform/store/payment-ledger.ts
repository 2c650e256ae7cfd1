// The machine endpoints' payments as the operator reads them (`loom admin payments`): who paid what, in which
// transaction, for which run, and how each payment stands. The journal itself (written by server/machines) is the
// `payments` table of migration 3.
import type { Sql } from "../contract.js";

/** Where a payment stands: settling (outcome not known yet), settled (charged, run created), failed (not charged). */
export type PaymentStatus = "settling" | "settled" | "failed";

/** One payment as listed. Amounts are decimal strings in the asset's smallest unit (USDC: millionths of a dollar). */
export interface PaymentListing {
  id: string;
  kind: "machine_search" | "machine_run";
  status: PaymentStatus;
  x402Version: 1 | 2;
  payer: string;
  payTo: string;
  amount: string;
  asset: string;
  network: string;
  transaction: string | null;
  runId: string;
  /** Why a failed payment was not charged, or what a settling one waits on. */
  error: string | null;
  createdAt: string;
  settledAt: string | null;
}

/** The payments table, read. */
export class PaymentLedger {
  constructor(private readonly database: Sql) {}

  /** Payments, newest first: at most `limit` (default 100), of one status if given. */
  async list(options: { limit?: number; status?: PaymentStatus } = {}): Promise<PaymentListing[]> {
    const rows = await this.database.query(
      `SELECT id, kind, status, x402_version, payer, pay_to, amount::text AS amount, asset, network, transaction, run_id, error, created_at, settled_at
       FROM payments WHERE $2::text IS NULL OR status = $2 ORDER BY created_at DESC, id LIMIT $1`,
      [options.limit ?? 100, options.status ?? null],
    );
    const iso = (value: unknown) => (value === null ? null : new Date(value as string).toISOString());
    return rows.map((row) => ({
      id: String(row.id),
      kind: row.kind as PaymentListing["kind"],
      status: row.status as PaymentStatus,
      x402Version: Number(row.x402_version) as 1 | 2,
      payer: String(row.payer),
      payTo: String(row.pay_to),
      amount: String(row.amount),
      asset: String(row.asset),
      network: String(row.network),
      transaction: row.transaction === null ? null : String(row.transaction),
      runId: String(row.run_id),
      error: row.error === null ? null : String(row.error),
      createdAt: iso(row.created_at)!,
      settledAt: iso(row.settled_at),
    }));
  }

  /** How many payments there are of each status. */
  async counts(): Promise<Record<PaymentStatus, number>> {
    const rows = await this.database.query<{ status: PaymentStatus; count: string }>("SELECT status, count(*)::text AS count FROM payments GROUP BY status");
    const counts: Record<PaymentStatus, number> = { settling: 0, settled: 0, failed: 0 };
    for (const row of rows) counts[row.status] = Number(row.count);
    return counts;
  }
}
