// Admin results as text for a person at a terminal (`loom admin` without --json).
import type { AdminCommand } from "./admin-command.js";
import type { AdminResult, CorpusEntryJson, CreatedOperatorTokenJson, KeyJson, OperatorTokenJson, OrganizationJson, PaymentsJson, UpdateApprovalJson, UpdateEventJson, UsageJson, WebhookSecretJson } from "./run-admin-command.js";

/** The text `loom admin` prints for a command's result, ending in a newline. */
export function formatAdminResult(command: AdminCommand["command"], result: AdminResult): string {
  switch (command) {
    case "org.create":
    case "org.show":
    case "org.set":
      return organizationText(result as OrganizationJson);
    case "org.list": {
      const { organizations } = result as { organizations: OrganizationJson[] };
      if (organizations.length === 0) return "no organizations\n";
      return organizations.map((organization) => `${organization.id}  ${organization.name}  (${organization.billingMode ?? "no billing"}, created ${organization.createdAt})\n`).join("");
    }
    case "key.create": {
      const created = result as KeyJson & { key: string };
      return `${keyLine(created)}\nkey: ${created.key}\n(the key is shown only now: store it; loom keeps only its SHA-256 digest)\n`;
    }
    case "key.list": {
      const { keys } = result as { keys: KeyJson[] };
      return keys.length === 0 ? "no keys\n" : keys.map((key) => `${keyLine(key)}\n`).join("");
    }
    case "key.revoke": {
      const revoked = result as { id: string; organizationId: string };
      return `revoked ${revoked.id} of ${revoked.organizationId}\n`;
    }
    case "usage":
      return usageText(result as UsageJson);
    case "org.rotate-webhook-secret": {
      const rotated = result as WebhookSecretJson;
      return `new webhook secret of ${rotated.organizationId}: ${rotated.webhookSecret}\n(callbacks are signed with it from now on, retries included: give it to the receiver)\n`;
    }
    case "corpus.add":
    case "corpus.list":
    case "corpus.remove":
    case "corpus.clear":
      return corpusText(result);
    case "payments.list":
      return paymentsText(result as PaymentsJson);
    case "operator-token.create": {
      const created = result as CreatedOperatorTokenJson;
      return `${operatorTokenLine(created)}\ntoken: ${created.token}\n` +
        "(shown only now: store it; it signs in to the dashboard as the operator, with every organization's settings and keys; loom keeps only its SHA-256 digest)\n";
    }
    case "operator-token.list": {
      const { operatorTokens } = result as { operatorTokens: OperatorTokenJson[] };
      return operatorTokens.length === 0 ? "no operator tokens\n" : operatorTokens.map((token) => `${operatorTokenLine(token)}\n`).join("");
    }
    case "operator-token.revoke":
      return `revoked ${(result as { id: string }).id} (its dashboard sessions have ended)\n`;
    case "update.approve":
      return `${approvalLine(result as UpdateApprovalJson)}\n`;
    case "update.approvals": {
      const { approvals } = result as { approvals: UpdateApprovalJson[] };
      return approvals.length === 0 ? "no approved releases\n" : approvals.map((approval) => `${approvalLine(approval)}\n`).join("");
    }
    case "update.record":
      return `${updateEventLine(result as UpdateEventJson)}\n`;
    case "update.history": {
      const { events } = result as { events: UpdateEventJson[] };
      return events.length === 0 ? "no update records\n" : events.map((event) => `${updateEventLine(event)}\n`).join("");
    }
  }
}

function approvalLine(approval: UpdateApprovalJson): string {
  return `${approval.version} approved by ${approval.approvedBy} at ${approval.approvedAt} (package SHA-256 ${approval.packageSha256})`;
}

/** One audit record: when, what, from and to, who, and what happened. */
export function updateEventLine(event: UpdateEventJson): string {
  const versions = event.fromVersion !== null && event.toVersion !== null ? `${event.fromVersion} -> ${event.toVersion}` : (event.toVersion ?? event.fromVersion ?? "-");
  return `${event.at}  ${event.action.padEnd(8)} ${event.outcome.padEnd(11)} ${versions}  by ${event.actor}${event.detail === "" ? "" : `: ${event.detail}`}`;
}

function operatorTokenLine(token: OperatorTokenJson): string {
  const state = token.revokedAt === null ? "active" : `revoked ${token.revokedAt}`;
  return `${token.id}  ${state}  ${JSON.stringify(token.name)}  created ${token.createdAt}  last used ${token.lastUsedAt ?? "never"}`;
}

function paymentsText({ counts, payments }: PaymentsJson): string {
  const lines = payments.map((payment) =>
    `${payment.id}  ${payment.status}  ${payment.kind}  ${payment.amount} of ${payment.asset} on ${payment.network}  from ${payment.payer}  ` +
    `tx ${payment.transaction ?? "-"}  run ${payment.runId}  ${payment.createdAt}${payment.error ? `  (${payment.error})` : ""}\n`);
  return `${lines.join("")}${counts.settled} settled, ${counts.settling} settling, ${counts.failed} failed (amounts in the asset's smallest unit: USDC millionths)\n`;
}

function corpusText(result: AdminResult): string {
  const documentCount = (count: number) => `${count} document${count === 1 ? "" : "s"}`;
  if ("documents" in result) {
    const { count, documents } = result as { count: number; documents: CorpusEntryJson[] };
    const lines = documents.map((entry) => `${entry.url}  ${JSON.stringify(entry.title)}  ${entry.bodyCharacters} characters  added ${entry.addedAt}\n`);
    return `${lines.join("")}the corpus holds ${documentCount(count)}\n`;
  }
  if ("added" in result) {
    const { added, replaced, count } = result as { added: number; replaced: number; count: number };
    return `added ${added}, replaced ${replaced}; the corpus holds ${documentCount(count)}\n`;
  }
  if ("url" in result) return `removed ${(result as { url: string }).url}\n`;
  return `removed ${documentCount((result as { removed: number }).removed)}\n`;
}

function organizationText(organization: OrganizationJson & { webhookSecret?: string }): string {
  const { plan, dailyAllowance: allowance, limits } = organization;
  const planText = plan.label === null ? "none" : `${plan.label}${plan.status === null ? "" : ` (${plan.status})`}`;
  const allowanceText = allowance === null
    ? "none"
    : `${allowance.basis === "credit" ? `$${allowance.amount}` : `${allowance.amount} tokens`} per UTC day${allowance.hardCap ? ", hard cap" : ", reported only"}`;
  const limitText = [
    `${limits.requestsPerMinute ?? "unlimited"} requests/min`,
    `${limits.tokensPerMinute ?? "unlimited"} tokens/min`,
    `${limits.tokensPerDay ?? "unlimited"} tokens/day`,
  ].join(", ");
  const prices = Object.entries(organization.prices);
  const priceText = prices.length === 0
    ? "none"
    : prices.map(([model, price]) => `${model} $${price.inputPerMillion} in / $${price.outputPerMillion} out per million tokens`).join("; ");
  return [
    `${organization.id}  ${organization.name}`,
    `  billing:          ${organization.billingMode ?? "none"}`,
    `  plan:             ${planText}${plan.isUnlimitedComp ? ", unlimited comp" : ""}`,
    `  daily allowance:  ${allowanceText}`,
    `  credit balance:   $${organization.creditBalanceDollars}`,
    `  closed beta:      ${organization.closedBeta ? "yes" : "no"}`,
    `  limits:           ${limitText}`,
    `  prices:           ${priceText}`,
    `  pool:             ${organization.pool ?? "shared"}`,
    `  created:          ${organization.createdAt}`,
    ...(organization.webhookSecret === undefined ? [] : [`  webhook secret:   ${organization.webhookSecret}`]),
    "",
  ].join("\n");
}

function keyLine(key: KeyJson): string {
  const extras = [
    key.limits.requestsPerMinute === undefined ? "" : ` rpm ${key.limits.requestsPerMinute}`,
    key.limits.tokensPerMinute === undefined ? "" : ` tpm ${key.limits.tokensPerMinute}`,
    key.limits.tokensPerDay === undefined ? "" : ` tpd ${key.limits.tokensPerDay}`,
    key.allowedModels === null ? "" : ` models ${key.allowedModels.join(",")}`,
  ].join("");
  return `${key.id}  ${key.kind}  ${key.isActive ? "active" : "revoked"}  ${key.keyPrefix}...  ${JSON.stringify(key.name)}  created ${key.createdAt}` +
    `  last used ${key.lastUsedAt ?? "never"}${extras}`;
}

function usageText(usage: UsageJson): string {
  const scope = usage.day === null ? "all days" : usage.day;
  if (usage.rows.length === 0) return `no usage for ${usage.organizationId} (${scope})\n`;
  const lines = usage.rows.map((row) =>
    `${row.day}  ${row.keyId}  ${row.model}  ${row.requests} requests  ${row.inputTokens} input (${row.cachedInputTokens} cached)  ${row.outputTokens} output  $${row.spendDollars}`,
  );
  const { totals } = usage;
  lines.push(`total (${scope}): ${totals.requests} requests, ${totals.inputTokens} input (${totals.cachedInputTokens} cached), ${totals.outputTokens} output, $${totals.spendDollars}`);
  return `${lines.join("\n")}\n`;
}
