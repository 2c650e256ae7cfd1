// WebhookSecretStore on PGlite and PostgreSQL: a Standard Webhooks secret made once (concurrent first calls agree),
// kept, and replaced on rotation.
import { Webhook } from "standardwebhooks";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { failIfMissing, skipOutsideCi, titled } from "../../../engine/testing/fixtures.js";
import { PlatformInputError } from "../contract.js";
import { TEST_BACKENDS, type TestDatabase } from "../testing/test-databases.js";
import { OrganizationStore } from "./organization-store.js";
import { newWebhookSecret, serviceWebhookSecret, WebhookSecretStore } from "./webhook-secret-store.js";

describe("newWebhookSecret", () => {
  it("is whsec_ and the base64 of 32 random bytes, which the standardwebhooks package accepts", () => {
    const secret = newWebhookSecret();
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/=]{32,}$/);
    expect(Buffer.from(secret.slice("whsec_".length), "base64")).toHaveLength(32);
    expect(newWebhookSecret()).not.toBe(secret);
    const signature = new Webhook(secret).sign("msg_1", new Date(), "{}");
    expect(signature).toMatch(/^v1,/);
  });
});

for (const backend of TEST_BACKENDS) {
  describe.skipIf(skipOutsideCi(backend.reason))(titled(`WebhookSecretStore on ${backend.name}`, backend.reason), () => {
    let test: TestDatabase;
    let organizations: OrganizationStore;
    let secrets: WebhookSecretStore;
    beforeAll(async () => {
      failIfMissing(backend.reason);
      test = await backend.open();
      organizations = new OrganizationStore(test.database);
      secrets = new WebhookSecretStore(test.database);
    });
    afterAll(async () => test?.dispose());

    const stored = async (organizationId: string) =>
      (await test.database.query<{ webhook_secret: string | null }>("SELECT webhook_secret FROM organizations WHERE id = $1", [organizationId]))[0]!.webhook_secret;

    it("makes the secret on first need and keeps it", async () => {
      const organization = await organizations.create("Hooks");
      expect(await stored(organization.id)).toBeNull();
      const secret = await secrets.webhookSecretOf(organization.id);
      expect(secret).toMatch(/^whsec_[A-Za-z0-9+/=]{32,}$/);
      expect(await stored(organization.id)).toBe(secret);
      expect(await secrets.webhookSecretOf(organization.id)).toBe(secret);
    });

    it("reads a secret it has without writing the organization's row (no lock taken per callback)", async () => {
      const organization = await organizations.create("Read only");
      await secrets.webhookSecretOf(organization.id);
      const version = async () => (await test.database.query<{ xmin: string }>("SELECT xmin::text AS xmin FROM organizations WHERE id = $1", [organization.id]))[0]!.xmin;
      const before = await version();
      await secrets.webhookSecretOf(organization.id);
      expect(await version()).toBe(before);
    });

    it("gives concurrent first callers one secret", async () => {
      const organization = await organizations.create("Racing");
      const answers = await Promise.all(Array.from({ length: 12 }, () => secrets.webhookSecretOf(organization.id)));
      expect(new Set(answers).size).toBe(1);
      expect(await stored(organization.id)).toBe(answers[0]);
    });

    it("works inside a transaction", async () => {
      const organization = await organizations.create("In a transaction");
      const secret = await test.database.transaction((tx) => new WebhookSecretStore(tx).webhookSecretOf(organization.id));
      expect(await secrets.webhookSecretOf(organization.id)).toBe(secret);
    });

    it("rotates to a new secret", async () => {
      const organization = await organizations.create("Rotating");
      const first = await secrets.webhookSecretOf(organization.id);
      const second = await secrets.rotateWebhookSecret(organization.id);
      expect(second).not.toBe(first);
      expect(second).toMatch(/^whsec_/);
      expect(await secrets.webhookSecretOf(organization.id)).toBe(second);
    });

    it("makes the service-wide secret once, in the database, and gives concurrent first callers that one", async () => {
      const stored = async () => (await test.database.query<{ value: string }>("SELECT value FROM service_settings WHERE name = 'webhook_secret'"))[0]?.value;
      const initially = await stored();
      const answers = await Promise.all(Array.from({ length: 8 }, () => serviceWebhookSecret(test.database)));
      expect(new Set(answers).size).toBe(1);
      expect(answers[0]).toMatch(/^whsec_[A-Za-z0-9+/=]{32,}$/);
      expect(await stored()).toBe(answers[0]);
      if (initially !== undefined) expect(answers[0]).toBe(initially);
      expect(await serviceWebhookSecret(test.database)).toBe(answers[0]);
    });

    it("names organizationId for an unknown or malformed organization", async () => {
      // Each call starts only when awaited: a second promise made up front rejects unobserved while the first is awaited.
      for (const call of [() => secrets.webhookSecretOf("org_missing"), () => secrets.rotateWebhookSecret("org_missing")]) {
        const error = await call().then(() => undefined, (e: unknown) => e);
        expect(error).toBeInstanceOf(PlatformInputError);
        expect(error).toMatchObject({ field: "organizationId", notFound: true });
      }
      await expect(secrets.webhookSecretOf("")).rejects.toMatchObject({ field: "organizationId" });
      await expect(secrets.rotateWebhookSecret("")).rejects.toMatchObject({ field: "organizationId" });
      await expect(secrets.webhookSecretOf("org_missing")).rejects.toThrow("no organization org_missing");
    });
  });
}
