// Runs one admin command against the stores and answers plain JSON (dates as ISO strings): the same code whether
// `loom admin` opened the database itself or a running server received the command.
import { type KeyRecord, type Organization, PlatformInputError, type UsageRow } from "../contract.js";
import type { CorpusEntry } from "../store/corpus-store.js";
import type { OperatorTokenRecord } from "../store/operator-token-store.js";
import type { PaymentListing, PaymentStatus } from "../store/payment-ledger.js";
import type { PlatformStores } from "../store/platform-stores.js";
import type { UpdateApproval, UpdateEvent } from "../store/update-ledger.js";
import { type AdminCommand, validateAdminCommand } from "./admin-command.js";

/** An organization as JSON. */
export type OrganizationJson = Omit<Organization, "createdAt"> & { createdAt: string };

/** org.show's answer: the organization and its webhook signing secret (made now if it had none), for the receiver. */
export type OrganizationWithSecretJson = OrganizationJson & { webhookSecret: string };

/** org.rotate-webhook-secret's answer: the new secret. */
export interface WebhookSecretJson {
  organizationId: string;
  webhookSecret: string;
}

/** A key record as JSON: never a digest; `key` (the secret) only in key.create's result. */
export type KeyJson = Omit<KeyRecord, "createdAt" | "lastUsedAt"> & { createdAt: string; lastUsedAt: string | null };

/** Usage of an organization: its rows (of one day, or all days) and their totals. */
export interface UsageJson {
  organizationId: string;
  day: string | null;
  rows: UsageRow[];
  totals: { requests: number; inputTokens: number; cachedInputTokens: number; outputTokens: number; spendDollars: number };
}

/** A corpus document as listed in JSON (no body). */
export type CorpusEntryJson = Omit<CorpusEntry, "addedAt"> & { addedAt: string };

/** An operator token's record as JSON (never the token but in operator-token.create's result, never its digest). */
export type OperatorTokenJson = { id: string; name: string; createdAt: string; lastUsedAt: string | null; revokedAt: string | null };

/** operator-token.create's answer: the record and, this once, the token. */
export type CreatedOperatorTokenJson = OperatorTokenJson & { token: string };

/** What each command answers. */
export type AdminResult =
  | OrganizationJson
  | { organizations: OrganizationJson[] }
  | (KeyJson & { key: string })
  | { keys: KeyJson[] }
  | { id: string; organizationId: string; isActive: false }
  | UsageJson
  | OrganizationWithSecretJson
  | WebhookSecretJson
  | { added: number; replaced: number; count: number }
  | { count: number; documents: CorpusEntryJson[] }
  | { url: string; removed: true }
  | { removed: number }
  | PaymentsJson
  | CreatedOperatorTokenJson
  | { operatorTokens: OperatorTokenJson[] }
  | { id: string; revoked: true }
  | UpdateApprovalJson
  | { approvals: UpdateApprovalJson[] }
  | UpdateEventJson
  | { events: UpdateEventJson[] };

/** An approval of a release as JSON. */
export type UpdateApprovalJson = Omit<UpdateApproval, "approvedAt"> & { approvedAt: string };

/** An update audit record as JSON. */
export type UpdateEventJson = Omit<UpdateEvent, "at"> & { at: string };

/** payments.list's answer: how many payments stand where, and the newest of them. */
export interface PaymentsJson {
  counts: Record<PaymentStatus, number>;
  payments: PaymentListing[];
}

export function organizationJson(organization: Organization): OrganizationJson {
  return { ...organization, createdAt: organization.createdAt.toISOString() };
}

export function operatorTokenJson(record: OperatorTokenRecord): OperatorTokenJson {
  return {
    id: record.id,
    name: record.name,
    createdAt: record.createdAt.toISOString(),
    lastUsedAt: record.lastUsedAt?.toISOString() ?? null,
    revokedAt: record.revokedAt?.toISOString() ?? null,
  };
}

export function keyJson(record: KeyRecord): KeyJson {
  return { ...record, createdAt: record.createdAt.toISOString(), lastUsedAt: record.lastUsedAt?.toISOString() ?? null };
}

/**
 * Validates `input` as an AdminCommand and runs it.
 * @throws PlatformInputError naming a bad field, or (notFound) an unknown organization or key.
 * @throws DatabaseUnavailableError when the database cannot be used.
 */
export async function runAdminCommand(stores: PlatformStores, input: unknown): Promise<AdminResult> {
  const command: AdminCommand = validateAdminCommand(input);
  switch (command.command) {
    case "org.create":
      return organizationJson(await stores.organizations.create(command.name, command.fields));
    case "org.list":
      return { organizations: (await stores.organizations.list()).map(organizationJson) };
    case "org.show": {
      const organization = organizationJson(await existingOrganization(stores, command.organizationId));
      return { ...organization, webhookSecret: await stores.webhookSecrets.webhookSecretOf(command.organizationId) };
    }
    case "org.set":
      return organizationJson(await stores.organizations.update(command.organizationId, command.patch));
    case "key.create": {
      const { record, key } = await stores.keys.create(command.organizationId, command.kind, command.name, command.options);
      return { ...keyJson(record), key };
    }
    case "key.list":
      await existingOrganization(stores, command.organizationId);
      return { keys: (await stores.keys.list(command.organizationId, command.kind)).map(keyJson) };
    case "key.revoke":
      if (!(await stores.keys.revoke(command.organizationId, command.keyId))) {
        await existingOrganization(stores, command.organizationId);
        throw new PlatformInputError("keyId", `organization ${command.organizationId} has no key ${command.keyId}`, true);
      }
      return { id: command.keyId, organizationId: command.organizationId, isActive: false };
    case "usage": {
      await existingOrganization(stores, command.organizationId);
      const rows = await stores.usage.rows(command.organizationId, command.day);
      const totals = { requests: 0, inputTokens: 0, cachedInputTokens: 0, outputTokens: 0, spendDollars: 0 };
      for (const row of rows) {
        totals.requests += row.requests;
        totals.inputTokens += row.inputTokens;
        totals.cachedInputTokens += row.cachedInputTokens;
        totals.outputTokens += row.outputTokens;
        totals.spendDollars += row.spendDollars;
      }
      // Rounded to the stored precision (nano-dollars), so float sums print as the database holds them.
      totals.spendDollars = Math.round(totals.spendDollars * 1e9) / 1e9;
      return { organizationId: command.organizationId, day: command.day ?? null, rows, totals };
    }
    case "org.rotate-webhook-secret":
      return { organizationId: command.organizationId, webhookSecret: await stores.webhookSecrets.rotateWebhookSecret(command.organizationId) };
    case "corpus.add": {
      const { added, replaced } = await stores.corpus.add(command.documents);
      return { added, replaced, count: await stores.corpus.count() };
    }
    case "corpus.list": {
      const documents = await stores.corpus.list({ limit: command.limit, offset: command.offset });
      return { count: await stores.corpus.count(), documents: documents.map((entry) => ({ ...entry, addedAt: entry.addedAt.toISOString() })) };
    }
    case "corpus.remove":
      if (!(await stores.corpus.remove(command.url))) throw new PlatformInputError("url", `the corpus has no document ${command.url}`, true);
      return { url: command.url, removed: true };
    case "corpus.clear":
      return { removed: await stores.corpus.clear() };
    case "payments.list":
      return { counts: await stores.payments.counts(), payments: await stores.payments.list({ limit: command.limit, status: command.status }) };
    case "operator-token.create": {
      const { record, token } = await stores.operatorTokens.create(command.name);
      return { ...operatorTokenJson(record), token };
    }
    case "operator-token.list":
      return { operatorTokens: (await stores.operatorTokens.list()).map(operatorTokenJson) };
    case "operator-token.revoke":
      // Its dashboard sessions end with it (the store does both in one transaction).
      if (!(await stores.operatorTokens.revoke(command.tokenId))) throw new PlatformInputError("tokenId", `no live operator token ${command.tokenId} (unknown, or revoked already)`, true);
      return { id: command.tokenId, revoked: true };
    case "update.approve":
      return approvalJson(await stores.updates.approve(command.version, command.packageSha256, command.approvedBy));
    case "update.approvals":
      return { approvals: (await stores.updates.approvals()).map(approvalJson) };
    case "update.record":
      return eventJson(await stores.updates.record(command.event));
    case "update.history":
      return { events: (await stores.updates.history(command.limit)).map(eventJson) };
  }
}

function approvalJson(approval: UpdateApproval): UpdateApprovalJson {
  return { ...approval, approvedAt: approval.approvedAt.toISOString() };
}

function eventJson(event: UpdateEvent): UpdateEventJson {
  return { ...event, at: event.at.toISOString() };
}

async function existingOrganization(stores: PlatformStores, organizationId: string): Promise<Organization> {
  const organization = await stores.organizations.get(organizationId);
  if (organization === undefined) throw new PlatformInputError("organizationId", `no organization ${organizationId}`, true);
  return organization;
}
