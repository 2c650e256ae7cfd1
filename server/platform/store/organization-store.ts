// Organizations: create, read, list and patch; rows of the `organizations` table as plain Organization data.
import { type Database, DEFAULT_ORGANIZATION_LIMITS, type ModelPrice, type Organization, PlatformInputError, type Sql } from "../contract.js";
import { newId } from "./ids.js";
import { dateOf, limitsFromRow, toNumber } from "./numbers.js";
import { type OrganizationPatch, validateOrganizationPatch } from "./organization-patch.js";
import { type Page, checkedLimit, pageOf } from "./page.js";
import { requireId, requireName } from "./validate.js";

/** The columns an Organization is read from. */
const COLUMNS = `id, name, billing_mode, plan_label, plan_status, plan_is_unlimited_comp, allowance_basis, allowance_amount,
  allowance_hard_cap, credit_balance, closed_beta, requests_per_minute, tokens_per_minute, tokens_per_day, prices, pool, created_at`;

/** Patch fields stored as they are, with their columns. */
const PLAIN_COLUMNS = {
  name: "name",
  billingMode: "billing_mode",
  planLabel: "plan_label",
  planStatus: "plan_status",
  isUnlimitedComp: "plan_is_unlimited_comp",
  allowanceHardCap: "allowance_hard_cap",
  creditBalanceDollars: "credit_balance",
  closedBeta: "closed_beta",
  requestsPerMinute: "requests_per_minute",
  tokensPerMinute: "tokens_per_minute",
  tokensPerDay: "tokens_per_day",
  pool: "pool",
} as const satisfies Partial<Record<keyof OrganizationPatch, string>>;

/** An `organizations` row as Organization. */
export function organizationFromRow(row: Record<string, unknown>): Organization {
  const basis = row.allowance_basis as "credit" | "tokens" | null;
  const limits = limitsFromRow(row);
  return {
    id: row.id as string,
    name: row.name as string,
    billingMode: row.billing_mode as Organization["billingMode"],
    plan: { label: row.plan_label as string | null, status: row.plan_status as string | null, isUnlimitedComp: row.plan_is_unlimited_comp as boolean },
    dailyAllowance: basis === null ? null : { basis, amount: toNumber(row.allowance_amount), hardCap: row.allowance_hard_cap as boolean },
    creditBalanceDollars: toNumber(row.credit_balance),
    closedBeta: row.closed_beta as boolean,
    limits,
    prices: (row.prices ?? {}) as Record<string, ModelPrice>,
    pool: (row.pool ?? null) as string | null,
    createdAt: row.created_at as Date,
  };
}

/** An `organizations` row as to_jsonb() gives it (timestamps as text, numeric as JSON numbers) as Organization. */
export function organizationFromJson(row: Record<string, unknown>): Organization {
  return organizationFromRow({ ...row, created_at: dateOf(row.created_at) });
}

/** Organizations in the database. */
export class OrganizationStore {
  constructor(private readonly database: Database) {}

  /**
   * Creates an organization named `name`, with the default limits (DEFAULT_ORGANIZATION_LIMITS), no billing mode, no
   * plan, no allowance, a zero balance and no closed-beta access, then applies `fields`; all in one transaction.
   * @throws PlatformInputError naming a bad field.
   */
  async create(name: string, fields: OrganizationPatch = {}): Promise<Organization> {
    requireName("name", name);
    const patch = validateOrganizationPatch(fields, "fields");
    const id = newId("org");
    return this.database.transaction(async (tx) => {
      const limits = DEFAULT_ORGANIZATION_LIMITS;
      await tx.query(
        "INSERT INTO organizations (id, name, requests_per_minute, tokens_per_minute, tokens_per_day) VALUES ($1, $2, $3, $4, $5)",
        [id, name, limits.requestsPerMinute, limits.tokensPerMinute, limits.tokensPerDay],
      );
      return applyPatch(tx, id, patch);
    });
  }

  /** The organization with this id, or undefined. */
  async get(id: string): Promise<Organization | undefined> {
    const [row] = await this.database.query(`SELECT ${COLUMNS} FROM organizations WHERE id = $1`, [id]);
    return row === undefined ? undefined : organizationFromRow(row);
  }

  /** Every organization, oldest first. */
  async list(): Promise<Organization[]> {
    const rows = await this.database.query(`SELECT ${COLUMNS} FROM organizations ORDER BY created_order`);
    return rows.map(organizationFromRow);
  }

  /**
   * One page of organizations, oldest first (creation order), after `after` (the previous page's `next`: a creation
   * order number, as decimal text). With `search`, only those whose name contains it (ignoring case) or whose id is
   * it: the text is matched as it is, with no wildcards.
   */
  async page(options: { limit: number; after?: string; search?: string }): Promise<Page<Organization, string>> {
    const limit = checkedLimit(options.limit);
    const params: unknown[] = [limit + 1];
    const conditions: string[] = [];
    if (options.after !== undefined) conditions.push(`created_order > $${params.push(options.after)}::bigint`);
    if (options.search !== undefined) {
      const search = params.push(options.search);
      conditions.push(`(strpos(lower(name), lower($${search})) > 0 OR id = $${search})`);
    }
    const rows = await this.database.query(
      `SELECT ${COLUMNS}, created_order::text AS keyset FROM organizations ${conditions.length > 0 ? `WHERE ${conditions.join(" AND ")}` : ""} ORDER BY created_order LIMIT $1`,
      params,
    );
    return pageOf(rows, limit, organizationFromRow, (row) => row.keyset as string);
  }

  /**
   * Applies `patch` (validated here) in one transaction holding the organization's row.
   * @throws PlatformInputError naming a bad field, or `organizationId` (notFound) for an unknown id.
   */
  async update(id: string, patch: OrganizationPatch): Promise<Organization> {
    requireId("organizationId", id);
    const valid = validateOrganizationPatch(patch);
    return this.database.transaction((tx) => applyPatch(tx, id, valid));
  }
}

/** Reads the row FOR UPDATE, checks the result is coherent, writes the changed columns, returns the new state. */
async function applyPatch(tx: Sql, id: string, patch: OrganizationPatch): Promise<Organization> {
  const [row] = await tx.query(`SELECT ${COLUMNS} FROM organizations WHERE id = $1 FOR UPDATE`, [id]);
  if (row === undefined) throw new PlatformInputError("organizationId", `no organization ${id}`, true);
  const current = organizationFromRow(row);
  const assignments: string[] = [];
  const values: unknown[] = [id];
  const set = (column: string, value: unknown, expression?: (parameter: string) => string) => {
    values.push(value);
    const parameter = `$${values.length}`;
    assignments.push(`${column} = ${expression ? expression(parameter) : parameter}`);
  };
  for (const [field, column] of Object.entries(PLAIN_COLUMNS) as [keyof typeof PLAIN_COLUMNS, string][]) {
    if (patch[field] !== undefined) set(column, patch[field]);
  }
  if (patch.addCreditsDollars !== undefined) set("credit_balance", patch.addCreditsDollars, (p) => `credit_balance + ${p}::numeric`);
  // The allowance is one thing: a basis with its amount, or none.
  if (patch.allowanceBasis !== undefined || patch.allowanceAmount !== undefined) {
    const basis = patch.allowanceBasis !== undefined ? patch.allowanceBasis : (current.dailyAllowance?.basis ?? null);
    const amount = basis === null ? null : (patch.allowanceAmount ?? current.dailyAllowance?.amount ?? null);
    if (basis === null && patch.allowanceAmount !== undefined) {
      throw new PlatformInputError("allowanceBasis", "an allowance needs its basis: set allowanceBasis to credit or tokens with allowanceAmount");
    }
    if (basis !== null && amount === null) {
      throw new PlatformInputError("allowanceAmount", `an allowance on the ${basis} basis needs its size: set allowanceAmount`);
    }
    if (basis === "tokens" && amount !== null && !Number.isSafeInteger(amount)) {
      throw new PlatformInputError("allowanceAmount", `an allowance in tokens must be a whole number of tokens, got ${amount}`);
    }
    set("allowance_basis", basis);
    set("allowance_amount", amount);
    if (basis === null && patch.allowanceHardCap === undefined) set("allowance_hard_cap", false);
  }
  if (patch.prices !== undefined) {
    const prices: Record<string, ModelPrice> = { ...current.prices };
    for (const [model, price] of Object.entries(patch.prices)) {
      if (price === null) delete prices[model];
      else prices[model] = price;
    }
    set("prices", JSON.stringify(prices), (p) => `${p}::jsonb`);
  }
  if (assignments.length === 0) return current;
  const [updated] = await tx.query(`UPDATE organizations SET ${assignments.join(", ")} WHERE id = $1 RETURNING ${COLUMNS}`, values);
  return organizationFromRow(updated!);
}
