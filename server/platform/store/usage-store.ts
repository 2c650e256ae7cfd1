// Reading usage: per-model totals of an organization's days, per-key totals of a span of days, raw rows, and the
// tokens consumed in a day (to seed daily limits). Writing is the UsageWriter's (group commit). Organization-wide sums read usage_by_organization (migration
// 9: at most days x models rows, whatever the number of keys); per-key figures and the daily limits' seed read
// usage_daily.
import { PlatformInputError, type Sql, type UsageRow } from "../contract.js";
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

/** An organization's use of one model on one UTC day, summed over its keys (the dashboard's usage series). */
export interface DailyModelUsage {
  /** YYYY-MM-DD. */
  day: string;
  model: string;
  requests: number;
  inputTokens: number;
  cachedInputTokens: number;
  outputTokens: number;
  /** What the organization's prices made of it (0 where no price applied). */
  spendDollars: number;
}

/** One key's use over a span of days, summed over models (the dashboard's usage per key). */
export interface KeyUsage {
  keyId: string;
  /** The key's name and prefix, as its listing shows them (a revoked key's too). */
  name: string;
  keyPrefix: string;
  requests: number;
  inputTokens: number;
  cachedInputTokens: number;
  outputTokens: number;
  spendDollars: number;
}

/** The most days one series spans (its query reads at most this many days of one organization). */
export const MAX_SERIES_DAYS = 90;

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

  /**
   * The organization's use per day and model from `from` through `to` (UTC days, at most MAX_SERIES_DAYS of them),
   * summed over its keys; days and models without use are absent. Ordered by day, then model. Reads
   * usage_by_organization's primary key: at most days x models rows, however many keys the organization has.
   * @throws PlatformInputError naming `from` or `to`.
   */
  async series(organizationId: string, from: string, to: string): Promise<DailyModelUsage[]> {
    requireSpan(from, to);
    const rows = await this.sql.query(
      `SELECT day::text AS day, model, requests, input_tokens, cached_input_tokens, output_tokens, spend
       FROM usage_by_organization WHERE organization_id = $1 AND day BETWEEN $2::date AND $3::date
       ORDER BY day, model COLLATE "C"`,
      [organizationId, from, to],
    );
    return rows.map((row) => ({
      day: row.day as string,
      model: row.model as string,
      ...usageCountsOf(row),
    }));
  }

  /**
   * The organization's use per key from `from` through `to` (UTC days, at most MAX_SERIES_DAYS of them), summed over
   * models; keys without use absent. The `limit` keys that used the most tokens (input + output), then by key id;
   * `keysWithUse` counts them all, so a caller can say how many were left out. Reads usage_daily through its
   * (organization_id, day) index: at most keys x models x days rows.
   * @throws PlatformInputError naming `from`, `to` or `limit`.
   */
  async keyTotals(organizationId: string, from: string, to: string, limit: number): Promise<{ keys: KeyUsage[]; keysWithUse: number }> {
    requireSpan(from, to);
    if (!Number.isInteger(limit) || limit < 1 || limit > MAX_KEY_TOTALS) throw new PlatformInputError("limit", `limit must be an integer from 1 to ${MAX_KEY_TOTALS}, got ${limit}`);
    const rows = await this.sql.query(
      `WITH per_key AS (
         SELECT key_id, sum(requests) AS requests, sum(input_tokens) AS input_tokens, sum(cached_input_tokens) AS cached_input_tokens,
           sum(output_tokens) AS output_tokens, sum(spend) AS spend
         FROM usage_daily WHERE organization_id = $1 AND day BETWEEN $2::date AND $3::date GROUP BY key_id
       )
       SELECT per_key.*, k.name, k.key_prefix, count(*) OVER () AS keys_with_use
       FROM per_key JOIN api_keys k ON k.id = per_key.key_id
       ORDER BY per_key.input_tokens + per_key.output_tokens DESC, per_key.key_id COLLATE "C" LIMIT $4`,
      [organizationId, from, to, limit],
    );
    return {
      keys: rows.map((row) => ({
        keyId: row.key_id as string,
        name: row.name as string,
        keyPrefix: row.key_prefix as string,
        ...usageCountsOf(row),
      })),
      keysWithUse: rows.length === 0 ? 0 : toNumber(rows[0]!.keys_with_use),
    };
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
      ...usageCountsOf(row),
    }));
  }

  /**
   * Tokens consumed on `day`: input (cached included) + output (reasoning included), and the dollars spent, by the
   * organization or, with `keyId`, by that key alone. The daily limits start from this, once per day and process, so it
   * reads the per-key rows themselves (the record of what was charged), not usage_by_organization.
   */
  async consumed(organizationId: string, day: string, keyId?: string): Promise<{ tokens: number; spendDollars: number }> {
    requireDay("day", day);
    const [row] = await this.sql.query(
      `SELECT coalesce(sum(input_tokens + output_tokens), 0) AS tokens, coalesce(sum(spend), 0) AS spend FROM usage_daily
       WHERE organization_id = $1 AND day = $2::date AND ($3::text IS NULL OR key_id = $3::text)`,
      [organizationId, day, keyId ?? null],
    );
    return { tokens: toNumber(row!.tokens), spendDollars: toNumber(row!.spend) };
  }
}

/** The most keys one answer of keyTotals lists. */
export const MAX_KEY_TOTALS = 1000;

/** Checks a span of days: both YYYY-MM-DD, `from` not after `to`, at most MAX_SERIES_DAYS. */
function requireSpan(from: string, to: string): void {
  requireDay("from", from);
  requireDay("to", to);
  const days = (Date.parse(`${to}T00:00:00Z`) - Date.parse(`${from}T00:00:00Z`)) / 86_400_000 + 1;
  if (days < 1 || days > MAX_SERIES_DAYS) throw new PlatformInputError("from", `a usage series spans 1 to ${MAX_SERIES_DAYS} days, from ${from} through ${to} is ${days}`);
}

/** The counts and spend of a usage row or of a sum of rows (numeric columns come back as text or bigint). */
function usageCountsOf(row: Record<string, unknown>): Pick<ModelUsage, "requests" | "inputTokens" | "cachedInputTokens" | "outputTokens" | "spendDollars"> {
  return {
    requests: toNumber(row.requests),
    inputTokens: toNumber(row.input_tokens),
    cachedInputTokens: toNumber(row.cached_input_tokens),
    outputTokens: toNumber(row.output_tokens),
    spendDollars: toNumber(row.spend),
  };
}

/** A summed row's figures, by model. */
function modelUsageOf(row: Record<string, unknown>): ModelUsage {
  return { model: row.model as string, ...usageCountsOf(row) };
}
