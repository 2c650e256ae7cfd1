// Each organization's Standard Webhooks signing secret (`whsec_` + base64 of 32 random bytes): made the first time
// something needs it (a callback to sign, an operator's `loom admin org show`), and rotated on the operator's word.
import { randomBytes } from "node:crypto";
import { PlatformInputError, type Sql } from "../contract.js";
import { requireId } from "./validate.js";

/** A new signing secret in the Standard Webhooks form: `whsec_` and the base64 of 32 random bytes (256 bits). */
export function newWebhookSecret(): string {
  return `whsec_${randomBytes(32).toString("base64")}`;
}

/** Organizations' webhook signing secrets (the `organizations.webhook_secret` column). */
export class WebhookSecretStore {
  /** @param database the database, or a transaction to read and create the secret in. */
  constructor(private readonly database: Sql) {}

  /**
   * The organization's signing secret, created now when it has none. Concurrent first calls agree: the UPDATE keeps
   * a secret another caller stored first (COALESCE re-reads the row once that caller's lock is released).
   * @throws PlatformInputError naming `organizationId` (notFound) for an unknown organization.
   */
  async webhookSecretOf(organizationId: string): Promise<string> {
    requireId("organizationId", organizationId);
    // A plain read first: signing a callback must not write (and lock) the organization's row every time.
    const [row] = await this.database.query<{ webhook_secret: string | null }>("SELECT webhook_secret FROM organizations WHERE id = $1", [organizationId]);
    if (row === undefined) throw unknownOrganization(organizationId);
    if (row.webhook_secret !== null) return row.webhook_secret;
    const [created] = await this.database.query<{ webhook_secret: string }>(
      "UPDATE organizations SET webhook_secret = COALESCE(webhook_secret, $2) WHERE id = $1 RETURNING webhook_secret",
      [organizationId, newWebhookSecret()],
    );
    if (created === undefined) throw unknownOrganization(organizationId);
    return created.webhook_secret;
  }

  /**
   * Replaces the organization's signing secret with a new one and returns it. Callbacks signed from now on (retries
   * of earlier ones included: each attempt is signed when it is sent) use the new secret.
   * @throws PlatformInputError naming `organizationId` (notFound) for an unknown organization.
   */
  async rotateWebhookSecret(organizationId: string): Promise<string> {
    requireId("organizationId", organizationId);
    const [row] = await this.database.query<{ webhook_secret: string }>(
      "UPDATE organizations SET webhook_secret = $2 WHERE id = $1 RETURNING webhook_secret",
      [organizationId, newWebhookSecret()],
    );
    if (row === undefined) throw unknownOrganization(organizationId);
    return row.webhook_secret;
  }
}

/** The service-wide signing secret (runs without an organization: paid machine runs), made on first need. */
export async function serviceWebhookSecret(database: Sql): Promise<string> {
  const read = async () => (await database.query<{ value: string }>("SELECT value FROM service_settings WHERE name = 'webhook_secret'"))[0]?.value;
  const existing = await read();
  if (existing !== undefined) return existing;
  // Concurrent first calls agree: the loser's insert does nothing and it reads the winner's secret.
  await database.query("INSERT INTO service_settings (name, value) VALUES ('webhook_secret', $1) ON CONFLICT (name) DO NOTHING", [newWebhookSecret()]);
  return (await read())!;
}

function unknownOrganization(organizationId: string): PlatformInputError {
  return new PlatformInputError("organizationId", `no organization ${organizationId}`, true);
}
