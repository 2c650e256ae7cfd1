// Reading usage: per-model totals of an organization's days, raw rows, and the tokens consumed in a day (to seed daily
// limits). Writing is the UsageWriter's (group commit). Organization-wide sums read usage_by_organization (migration
// 8: at most days x models rows, whatever the number of keys); per-key figures read usage_daily.
import type { Sql, UsageRow } from "../contract.js";
import { toNumber } from "./numbers.js";
import { requireDay, requireId } from "./validate.js";

/** An organization's use of one model in one day, summed over its keys. */
export interface ModelUsage {
  model: string;
  requests: number;
  inputTokens: number;
  cachedInputTokens: number;
  outputTokens: number;
  spendDollars: number;
}

/** Usage rows in the database. */
export class UsageStore {
  constructor(private readonly sql: Sql) {}

  /**
   * The organization's usage on `day` (YYYY-MM-DD, UTC) per model, over all its keys; models without use that day are
   * absent. Ordered by model slug.
   */
  async today(organizationId: string, day: string): Promise<ModelUsage[]> {
    requireDay("day", day);
    const rows = await this.sql.query(
      `SELECT model, sum(requests) AS requests, sum(input_tokens) AS input_tokens, sum(cached_input_tokens) AS cached_input_tokens,
         sum(output_tokens) AS output_tokens, sum(spend) AS spend
       FROM usage_by_organization WHERE organization_id = $1 AND day = $2::date GROUP BY model ORDER BY model`,
      [organizationId, day],
    );
    return rows.map(modelUsageOf);
  }

  /** The organization's rows (of `day`, when given), by day, key and model. */
  async rows(organizationId: string, day?: string): Promise<UsageRow[]> {
    requireId("organizationId", organizationId);
    if (day !== undefined) requireDay("day", day);
    const rows = await this.sql.query(
      `SELECT organization_id, key_id, model, day::text AS day, requests, input_tokens, cached_input_tokens, output_tokens, spend
       FROM usage_daily WHERE organization_id = $1 AND ($2::date IS NULL OR day = $2::date) ORDER BY day, key_id, model`,
      [organizationId, day ?? null],
    );
    return rows.map((row) => ({
      organizationId: row.organization_id as string,
      keyId: row.key_id as string,
      model: row.model as string,
      day: row.day as string,
      requests: toNumber(row.requests),
      inputTokens: toNumber(row.input_tokens),
      cachedInputTokens: toNumber(row.cached_input_tokens),
      outputTokens: toNumber(row.output_tokens),
      spendDollars: toNumber(row.spend),
    }));
  }

  /**
   * The organization's use per UTC day and model from `from` through `to` (YYYY-MM-DD, inclusive), summed over its
   * keys; days without use absent. Ordered by day, then model.
   */
  async days(organizationId: string, from: string, to: string): Promise<Array<ModelUsage & { day: string }>> {
    requireDay("from", from);
    requireDay("to", to);
    const rows = await this.sql.query(
      `SELECT day::text AS day, model, requests, input_tokens, cached_input_tokens, output_tokens, spend
       FROM usage_by_organization WHERE organization_id = $1 AND day BETWEEN $2::date AND $3::date ORDER BY day, model`,
      [organizationId, from, to],
    );
    return rows.map((row) => ({ day: row.day as string, ...modelUsageOf(row) }));
  }

  /**
   * Tokens consumed on `day`: input (cached included) + output (reasoning included), and the dollars spent, by the
   * organization or, with `keyId`, by that key alone. The daily limits start from this.
   */
  async consumed(organizationId: string, day: string, keyId?: string): Promise<{ tokens: number; spendDollars: number }> {
    requireDay("day", day);
    const [row] = keyId === undefined
      ? await this.sql.query(
        `SELECT coalesce(sum(input_tokens + output_tokens), 0) AS tokens, coalesce(sum(spend), 0) AS spend FROM usage_by_organization
         WHERE organization_id = $1 AND day = $2::date`,
        [organizationId, day],
      )
      : await this.sql.query(
        `SELECT coalesce(sum(input_tokens + output_tokens), 0) AS tokens, coalesce(sum(spend), 0) AS spend FROM usage_daily
         WHERE organization_id = $1 AND key_id = $3 AND day = $2::date`,
        [organizationId, day, keyId],
      );
    return { tokens: toNumber(row!.tokens), spendDollars: toNumber(row!.spend) };
  }
}

/** A summed row's figures. */
function modelUsageOf(row: Record<string, unknown>): ModelUsage {
  return {
    model: row.model as string,
    requests: toNumber(row.requests),
    inputTokens: toNumber(row.input_tokens),
    cachedInputTokens: toNumber(row.cached_input_tokens),
    outputTokens: toNumber(row.output_tokens),
    spendDollars: toNumber(row.spend),
  };
}
