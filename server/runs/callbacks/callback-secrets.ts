// Which secret signs a run's callback: its organization's (made on first need), or, for a machine run (issue 17),
// which has no organization, the service-wide secret (made on first need and kept in the database).
import type { Sql } from "../../platform/contract.js";
import { WebhookSecretStore } from "../../platform/store/webhook-secret-store.js";

/** Finds the secret (`whsec_` + base64) that signs a delivery. A rejection fails that attempt (retried later). */
export type CallbackSecretResolver = (delivery: { runId: string; organizationId: string | null }) => Promise<string>;

/**
 * Organizations' own secrets, and `serviceSecret` (a secret, or how to read it) for runs without an organization.
 * @throws (the resolver's promise) Error when a run without organization comes and no serviceSecret was given.
 */
export function organizationSecretResolver(database: Sql, serviceSecret?: string | (() => Promise<string>)): CallbackSecretResolver {
  const secrets = new WebhookSecretStore(database);
  return async ({ runId, organizationId }) => {
    if (organizationId !== null) return secrets.webhookSecretOf(organizationId);
    if (serviceSecret === undefined) throw new Error(`run ${runId} has no organization and no service-wide webhook secret is configured`);
    return typeof serviceSecret === "string" ? serviceSecret : serviceSecret();
  };
}
