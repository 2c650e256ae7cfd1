// The machine endpoints' payments as the operator reads them (`loom admin payments`): who paid what, in which
// transaction, for which run, and how each payment stands. The journal itself (written by server/machines) is the
// `payments` table of migration 3.
import type { Sql } from "../contract.js";
import { CREATED_AT_KEYSET_SQL, type Page, type TimeKeyset, afterNewestFirst, checkedLimit, createdAtKeysetOf, pageOf } from "./page.js";

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

/** The columns a PaymentListing is read from. */
const COLUMNS = "id, kind, status, x402_version, payer, pay_to, amount::text AS amount, asset, network, transaction, run_id, error, created_at, settled_at";

/** The payments table, read. */
export class PaymentLedger {
  constructor(private readonly database: Sql) {}

  /** Payments, newest first: at most `limit` (default 100), of one status if given. */
  async list(options: { limit?: number; status?: PaymentStatus } = {}): Promise<PaymentListing[]> {
    const rows = await this.database.query(
      `SELECT ${COLUMNS} FROM payments WHERE $2::text IS NULL OR status = $2 ORDER BY created_at DESC, id LIMIT $1`,
      [options.limit ?? 100, options.status ?? null],
    );
    return rows.map(listingFromRow);
  }

  /**
   * One page of payments (of one status, if given), newest first (by creation time, then id), after `after` (the
   * previous page's `next`). Reads the index on created_at.
   */
  async page(options: { limit: number; status?: PaymentStatus; after?: TimeKeyset }): Promise<Page<PaymentListing, TimeKeyset>> {
    const limit = checkedLimit(options.limit);
    const params: unknown[] = [limit + 1];
    const conditions: string[] = [];
    if (options.status !== undefined) conditions.push(`status = $${params.push(options.status)}`);
    if (options.after !== undefined) conditions.push(...afterNewestFirst(options.after, params));
    const rows = await this.database.query(
      `SELECT ${COLUMNS}, ${CREATED_AT_KEYSET_SQL} FROM payments
       ${conditions.length > 0 ? `WHERE ${conditions.join(" AND ")}` : ""} ORDER BY created_at DESC, id DESC LIMIT $1`,
      params,
    );
    return pageOf(rows, limit, listingFromRow, createdAtKeysetOf);
  }

  /** How many payments there are of each status. */
  async counts(): Promise<Record<PaymentStatus, number>> {
    const rows = await this.database.query<{ status: PaymentStatus; count: string }>("SELECT status, count(*)::text AS count FROM payments GROUP BY status");
    const counts: Record<PaymentStatus, number> = { settling: 0, settled: 0, failed: 0 };
    for (const row of rows) counts[row.status] = Number(row.count);
    return counts;
  }
}

/** A `payments` row as PaymentListing. */
function listingFromRow(row: Record<string, unknown>): PaymentListing {
  const iso = (value: unknown) => (value === null ? null : new Date(value as string).toISOString());
  return {
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
  };
}
