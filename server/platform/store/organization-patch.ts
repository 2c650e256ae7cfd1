// The fields an operator may set on an organization (a flat patch), and its validation: every field checked, unknown
// fields refused, each error naming its field.
import { type BillingMode, type ModelPrice, PlatformInputError } from "../contract.js";
import {
  refuseUnknownFields,
  MAX_DOLLARS,
  requireBoolean,
  requireChoice,
  requireDollars,
  requireId,
  requireLabel,
  requireLimit,
  requireName,
  requireObject,
  requireStorableText,
} from "./validate.js";

/** Changes to an organization. An absent field stays as it is; null clears a nullable one. */
export interface OrganizationPatch {
  name?: string;
  billingMode?: BillingMode | null;
  planLabel?: string | null;
  planStatus?: string | null;
  isUnlimitedComp?: boolean;
  /** Basis of the daily allowance; null removes the allowance (amount and hard cap with it). */
  allowanceBasis?: "credit" | "tokens" | null;
  /** Size of the daily allowance: dollars (basis credit) or whole tokens (basis tokens). */
  allowanceAmount?: number;
  allowanceHardCap?: boolean;
  /** Sets the prepaid balance, in dollars. */
  creditBalanceDollars?: number;
  /** Adds to (or, negative, takes from) the prepaid balance, atomically with concurrent spending. */
  addCreditsDollars?: number;
  closedBeta?: boolean;
  /** Organization limits; null: no limit of that kind. */
  requestsPerMinute?: number | null;
  tokensPerMinute?: number | null;
  tokensPerDay?: number | null;
  /** Per model slug ("*": any other model): a price sets it, null removes it; models not named keep theirs. */
  prices?: Record<string, ModelPrice | null>;
  /** The dedicated pool (`loom worker --pool`); null: back to the shared pool. */
  pool?: string | null;
}

const PATCH_FIELDS = [
  "name", "billingMode", "planLabel", "planStatus", "isUnlimitedComp", "allowanceBasis", "allowanceAmount", "allowanceHardCap",
  "creditBalanceDollars", "addCreditsDollars", "closedBeta", "requestsPerMinute", "tokensPerMinute", "tokensPerDay", "prices", "pool",
] as const satisfies readonly (keyof OrganizationPatch)[];

/**
 * Checks a patch from anywhere (an admin command's JSON included) and returns it typed; fields set to undefined are
 * dropped.
 * @throws PlatformInputError naming the first bad field.
 */
export function validateOrganizationPatch(input: unknown, field = "patch"): OrganizationPatch {
  const raw = requireObject(field, input);
  refuseUnknownFields(raw, PATCH_FIELDS);
  const patch: OrganizationPatch = {};
  const has = (name: (typeof PATCH_FIELDS)[number]) => raw[name] !== undefined;
  if (has("name")) patch.name = requireName("name", raw.name);
  if (has("billingMode")) patch.billingMode = requireChoice("billingMode", raw.billingMode, ["subscription", "prepaid", null] as const);
  if (has("planLabel")) patch.planLabel = requireLabel("planLabel", raw.planLabel);
  if (has("planStatus")) patch.planStatus = requireLabel("planStatus", raw.planStatus);
  if (has("isUnlimitedComp")) patch.isUnlimitedComp = requireBoolean("isUnlimitedComp", raw.isUnlimitedComp);
  if (has("allowanceBasis")) patch.allowanceBasis = requireChoice("allowanceBasis", raw.allowanceBasis, ["credit", "tokens", null] as const);
  if (has("allowanceAmount")) patch.allowanceAmount = requireDollars("allowanceAmount", raw.allowanceAmount);
  if (has("allowanceHardCap")) patch.allowanceHardCap = requireBoolean("allowanceHardCap", raw.allowanceHardCap);
  if (has("creditBalanceDollars")) patch.creditBalanceDollars = requireDollars("creditBalanceDollars", raw.creditBalanceDollars);
  if (has("addCreditsDollars")) patch.addCreditsDollars = requireDollars("addCreditsDollars", raw.addCreditsDollars, -MAX_DOLLARS);
  if (has("closedBeta")) patch.closedBeta = requireBoolean("closedBeta", raw.closedBeta);
  for (const limit of ["requestsPerMinute", "tokensPerMinute", "tokensPerDay"] as const) {
    if (has(limit)) patch[limit] = requireLimit(limit, raw[limit]);
  }
  if (has("prices")) patch.prices = validatePrices(raw.prices);
  if (has("pool")) patch.pool = requirePoolName("pool", raw.pool);
  if (patch.creditBalanceDollars !== undefined && patch.addCreditsDollars !== undefined) {
    throw new PlatformInputError("addCreditsDollars", "set the balance (creditBalanceDollars) or add to it (addCreditsDollars), not both");
  }
  if (patch.allowanceBasis === null && patch.allowanceAmount !== undefined) {
    throw new PlatformInputError("allowanceAmount", "allowanceAmount cannot be set while allowanceBasis is set to null (no allowance)");
  }
  return patch;
}

function validatePrices(input: unknown): Record<string, ModelPrice | null> {
  const raw = requireObject("prices", input);
  const prices: Record<string, ModelPrice | null> = {};
  for (const [model, value] of Object.entries(raw)) {
    requireId("prices (a model slug)", requireStorableText("prices", model, true));
    const field = `prices.${model}`;
    if (value === null) {
      prices[model] = null;
      continue;
    }
    const price = requireObject(field, value);
    refuseUnknownFields(price, ["inputPerMillion", "outputPerMillion"], `${field}.`);
    prices[model] = {
      inputPerMillion: requireDollars(`${field}.inputPerMillion`, price.inputPerMillion),
      outputPerMillion: requireDollars(`${field}.outputPerMillion`, price.outputPerMillion),
    };
  }
  return prices;
}

/** A pool name as workers take it (`--pool`), or null for the shared pool; "default" is the shared pool's own name. */
function requirePoolName(field: string, value: unknown): string | null {
  if (value === null) return null;
  if (typeof value !== "string" || !/^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/.test(value)) {
    throw new PlatformInputError(field, `${field} must be 1 to 64 letters, digits, '.', '_' or '-' (starting with a letter or digit), or null for the shared pool`);
  }
  if (value === "default") throw new PlatformInputError(field, `${field} "default" is the shared pool: set null to leave a dedicated pool`);
  return value;
}
