// What tokens cost: an organization's model prices (dollars per million tokens), for prepaid spend and credit-sized
// daily allowances. Cached prompt tokens cost what other input tokens cost.
import type { InternalUsage } from "../protocol/internal.js";
import type { ModelPrice, Organization, UsageIncrement } from "./contract.js";
import { utcDay } from "./limits/daily.js";

/** The price of `model` for `organization`: its own entry, else the "*" entry, else none. */
export function priceOf(organization: Organization, model: string): ModelPrice | undefined {
  return organization.prices[model] ?? organization.prices["*"];
}

/**
 * Dollars for `inputTokens` and `outputTokens` at `price`, rounded up to the nano-dollar (the balance's precision:
 * numeric(20,9)), so never under-charged and never off by more than a nano-dollar per request.
 */
export function costDollars(price: ModelPrice, inputTokens: number, outputTokens: number): number {
  // tokens x dollars-per-million = micro-dollars; x 1000 = nano-dollars. The epsilon keeps float noise
  // (0.30000000000000004) from rounding up a whole nano-dollar; max(0, ...) keeps a free request at 0, not -0
  // (Math.ceil(-1e-6) is -0, which Intl formats as "-0").
  const nanoDollars = (inputTokens * price.inputPerMillion + outputTokens * price.outputPerMillion) * 1000;
  return Math.max(0, Math.ceil(nanoDollars - 1e-6)) / 1e9;
}

/**
 * One request's usage as an increment of its organization's usage on the UTC day of `nowMs`, its spend at the
 * organization's price of `model` (nothing without a price, or without the organization).
 */
export function usageIncrementOf(ids: { organizationId: string; keyId: string }, organization: Organization | undefined, model: string, usage: InternalUsage, nowMs: number): UsageIncrement {
  const price = organization ? priceOf(organization, model) : undefined;
  return {
    organizationId: ids.organizationId,
    keyId: ids.keyId,
    model,
    day: utcDay(nowMs),
    requests: 1,
    inputTokens: usage.promptTokens,
    cachedInputTokens: usage.cachedTokens,
    outputTokens: usage.completionTokens,
    spendDollars: price ? costDollars(price, usage.promptTokens, usage.completionTokens) : 0,
  };
}
