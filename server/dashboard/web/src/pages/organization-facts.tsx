// An organization's settings as label/value lists: the plan page and the operator's organization page.
import { Facts, TableScroll } from "../components";
import { formatDollars, formatInteger, formatTime } from "../format";
import type { ModelPrice, Organization } from "../types";

const NO_LIMIT = "No limit";

export function OrganizationFacts({ organization }: { organization: Organization }) {
  const allowance = organization.dailyAllowance;
  const limit = (value: number | undefined) => (value === undefined || value === null ? NO_LIMIT : formatInteger(value));
  return (
    <Facts
      testId="organization-facts"
      items={[
        ["Plan", organization.plan.label ?? "—"],
        ["Plan status", organization.plan.status ?? "—"],
        ["Billing", organization.billingMode === "prepaid" ? "Prepaid credits" : organization.billingMode === "subscription" ? "Subscription" : "Not set"],
        ["Unlimited (complimentary)", organization.plan.isUnlimitedComp ? "Yes" : "No"],
        [
          "Daily allowance",
          allowance
            ? `${allowance.basis === "tokens" ? `${formatInteger(allowance.amount)} tokens` : formatDollars(allowance.amount)} per UTC day${allowance.hardCap ? " (hard cap: requests past it are refused)" : " (reported, not enforced)"}`
            : "None",
        ],
        ["Credit balance", formatDollars(organization.creditBalanceDollars)],
        ["Requests per minute", limit(organization.limits.requestsPerMinute)],
        ["Tokens per minute", limit(organization.limits.tokensPerMinute)],
        ["Tokens per day", limit(organization.limits.tokensPerDay)],
        ["Closed beta", organization.closedBeta ? "Yes" : "No"],
        ["Worker pool", organization.pool ?? "Shared"],
        ["Created", formatTime(organization.createdAt)],
      ]}
    />
  );
}

export function PricesTable({ prices }: { prices: Record<string, ModelPrice> }) {
  const entries = Object.entries(prices).sort(([a], [b]) => (a === "*" ? 1 : b === "*" ? -1 : a.localeCompare(b)));
  if (entries.length === 0) return <p class="empty">No prices are set.</p>;
  return (
    <TableScroll label="Prices per model">
      <table class="table" data-testid="prices-table">
        <thead>
          <tr>
            <th scope="col">Model</th>
            <th scope="col" class="num">Input, per 1M tokens</th>
            <th scope="col" class="num">Output, per 1M tokens</th>
          </tr>
        </thead>
        <tbody>
          {entries.map(([model, price]) => (
            <tr key={model}>
              <th scope="row">{model === "*" ? "Any other model (*)" : model}</th>
              <td class="num" data-label="Input, per 1M tokens">{formatDollars(price.inputPerMillion)}</td>
              <td class="num" data-label="Output, per 1M tokens">{formatDollars(price.outputPerMillion)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </TableScroll>
  );
}
