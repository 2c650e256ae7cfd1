// Prepaid admission without overshoot: a request holds the most it can cost before it runs, in one transaction that
// locks the organization's row, and only while balance minus unexpired holds covers it; the usage writer takes the
// spend from the balance and drops the hold in the same transaction. Holds expire, so a killed process leaks none.
import { type Database, PlatformInputError } from "../contract.js";
import { newId } from "./ids.js";
import { toNumber } from "./numbers.js";
import { requireDollars, requireInteger } from "./validate.js";

/** The outcome of a hold: a hold id to pass to the usage writer (or to release), or a refusal. */
export type CreditHold =
  | { admitted: true; holdId: string; /** Dollars left to hold after this one. */ availableDollars: number }
  | { admitted: false; /** Dollars that could be held now (less than asked). */ availableDollars: number };

/** Prepaid balances and the holds on them. */
export class CreditStore {
  constructor(private readonly database: Database) {}

  /**
   * Holds `dollars` of the organization's balance for `ttlMs`, when balance minus its unexpired holds covers it.
   * Expired holds of the organization are deleted on the way.
   * NOTE: the organization's row is locked (FOR UPDATE) for the check and the insert, so concurrent holds of every
   * process are serialized and together never exceed the balance.
   * @throws PlatformInputError for a bad amount or ttl, or `organizationId` (notFound) for an unknown organization.
   */
  async hold(organizationId: string, dollars: number, ttlMs: number): Promise<CreditHold> {
    requireDollars("dollars", dollars);
    if (dollars === 0) throw new PlatformInputError("dollars", "a hold must be of more than 0 dollars");
    requireInteger("ttlMs", ttlMs, 1);
    return this.database.transaction(async (tx) => {
      const [organization] = await tx.query("SELECT id FROM organizations WHERE id = $1 FOR UPDATE", [organizationId]);
      if (organization === undefined) throw new PlatformInputError("organizationId", `no organization ${organizationId}`, true);
      await tx.query("DELETE FROM credit_holds WHERE organization_id = $1 AND expires_at <= now()", [organizationId]);
      const [state] = await tx.query(
        `SELECT available, available >= $2::numeric AS covered, available - $2::numeric AS left_after
         FROM (SELECT o.credit_balance - coalesce((SELECT sum(amount) FROM credit_holds h WHERE h.organization_id = o.id), 0) AS available
               FROM organizations o WHERE o.id = $1) AS s`,
        [organizationId, dollars],
      );
      if (!state!.covered) return { admitted: false, availableDollars: Math.max(0, toNumber(state!.available)) };
      const holdId = newId("hold");
      await tx.query(
        "INSERT INTO credit_holds (id, organization_id, amount, expires_at) VALUES ($1, $2, $3, now() + $4 * interval '1 millisecond')",
        [holdId, organizationId, dollars, ttlMs],
      );
      return { admitted: true, holdId, availableDollars: toNumber(state!.left_after) };
    });
  }

  /** Drops a hold (a request that ended without usage to record). Returns whether it still existed. */
  async release(holdId: string): Promise<boolean> {
    const rows = await this.database.query("DELETE FROM credit_holds WHERE id = $1 RETURNING id", [holdId]);
    return rows.length > 0;
  }

  /** The organization's balance minus its unexpired holds, in dollars (negative when spend overran the holds). */
  async available(organizationId: string): Promise<number> {
    const [row] = await this.database.query(
      `SELECT o.credit_balance - coalesce((SELECT sum(amount) FROM credit_holds h WHERE h.organization_id = o.id AND h.expires_at > now()), 0)
         AS available FROM organizations o WHERE o.id = $1`,
      [organizationId],
    );
    if (row === undefined) throw new PlatformInputError("organizationId", `no organization ${organizationId}`, true);
    return toNumber(row.available);
  }
}
