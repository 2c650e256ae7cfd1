// Payments rows for the dashboard's tests, written straight into the `payments` table (the machine endpoints write
// them in production): every column the table requires, a chosen status and creation time. Plain code, no test-runner imports.
import type { Sql } from "../../platform/contract.js";

/**
 * Inserts payment number `index` (distinct per database) with `status`, created at `createdAt` (timestamptz text).
 * @returns its id.
 */
export async function insertPayment(sql: Sql, index: number, status: "settling" | "settled" | "failed", createdAt: string): Promise<string> {
  const id = `pay_${index.toString(16).padStart(32, "0")}`;
  const hex = (n: number, length: number) => `0x${n.toString(16).padStart(length, "0")}`;
  await sql.query(
    `INSERT INTO payments (id, kind, x402_version, network, asset, pay_to, payer, nonce, amount, valid_before, payload_digest, payload, requirements,
       run_id, run_request, status, lease_expires_at, settled_at, created_at)
     VALUES ($1, 'machine_search', 2, 'eip155:8453', $2, $2, $3, $4, 1000, 0, 'digest', '{}', '{}', $5, '{}', $6,
       CASE WHEN $6 = 'settling' THEN now() END, CASE WHEN $6 = 'settled' THEN now() END, $7::timestamptz)`,
    [id, hex(1, 40), hex(index + 2, 40), hex(index, 64), `run_${index}`, status, createdAt],
  );
  return id;
}
