// GET /api/v1/usage's body (spec 2.6): the organization's plan, today's allowance use, credits and per-model
// consumption since UTC midnight. consumedToday = input tokens (cached ones included) + output tokens (reasoning
// included) recorded today, UTC.
import type { Organization } from "./contract.js";
import { nextUtcMidnightMs, utcDay } from "./limits/daily.js";
import { priceOf } from "./pricing.js";

/** The usage snapshot of spec section 2.6. */
export interface UsageSnapshot {
  billingMode: string | null;
  plan: {
    label: string | null;
    status: string | null;
    isUnlimitedComp: boolean;
    dailyAllowance: { basis: "credit" | "tokens"; percent: number; resetAt: string } | { basis: "unavailable"; resetAt: string } | null;
  };
  credits: { balanceDollars: number | null; overageThisPeriodDollars: number };
  models: Array<{ slug: string; consumedToday: number }>;
}

/** What the snapshot reads of a usage row of today (per key, or per model summed over keys: either adds up the same). */
export type TodayUsage = { model: string; inputTokens: number; outputTokens: number; spendDollars: number };

/** The snapshot from the organization and its usage of today (every key's). */
export function usageSnapshot(organization: Organization, today: readonly TodayUsage[], nowMs: number): UsageSnapshot {
  const perModel = new Map<string, number>();
  for (const row of today) perModel.set(row.model, (perModel.get(row.model) ?? 0) + row.inputTokens + row.outputTokens);
  const models = [...perModel].filter(([, tokens]) => tokens > 0).map(([slug, consumedToday]) => ({ slug, consumedToday })).sort((a, b) => a.slug.localeCompare(b.slug));
  return {
    billingMode: organization.billingMode,
    plan: { ...organization.plan, dailyAllowance: allowanceOf(organization, today, nowMs) },
    credits: { balanceDollars: organization.creditBalanceDollars, overageThisPeriodDollars: 0 },
    models,
  };
}

function allowanceOf(organization: Organization, today: readonly TodayUsage[], nowMs: number): UsageSnapshot["plan"]["dailyAllowance"] {
  const allowance = organization.dailyAllowance;
  if (!allowance || organization.plan.isUnlimitedComp || allowance.amount <= 0) return null;
  const resetAt = new Date(nextUtcMidnightMs(utcDay(nowMs))).toISOString();
  if (allowance.basis === "tokens") {
    const tokens = today.reduce((sum, row) => sum + row.inputTokens + row.outputTokens, 0);
    return { basis: "tokens", percent: percentOf(tokens, allowance.amount), resetAt };
  }
  // Credit-sized: today's spend at the organization's prices. A model used today without a price cannot be valued.
  if (today.some((row) => row.inputTokens + row.outputTokens > 0 && !priceOf(organization, row.model))) return { basis: "unavailable", resetAt };
  const spend = today.reduce((sum, row) => sum + row.spendDollars, 0);
  return { basis: "credit", percent: percentOf(spend, allowance.amount), resetAt };
}

/** Share in percent, to two decimals; it can exceed 100. */
function percentOf(used: number, amount: number): number {
  return Math.round((used / amount) * 10_000) / 100;
}
