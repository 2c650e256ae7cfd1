// Which secret signs a callback: the run's organization's own (made on first need), else the service-wide one given
// as a secret or as how to read it, and a refusal naming the run when there is none.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { failIfMissing, skipOutsideCi, titled } from "../../../engine/testing/fixtures.js";
import { OrganizationStore } from "../../platform/store/organization-store.js";
import { newWebhookSecret, WebhookSecretStore } from "../../platform/store/webhook-secret-store.js";
import { TEST_BACKENDS, type TestDatabase } from "../../platform/testing/test-databases.js";
import { organizationSecretResolver } from "./callback-secrets.js";

const backend = TEST_BACKENDS.find((candidate) => candidate.name === "PGlite")!;

describe.skipIf(skipOutsideCi(backend.reason))(titled("organizationSecretResolver", backend.reason), () => {
  let test: TestDatabase;
  beforeAll(async () => {
    failIfMissing(backend.reason);
    test = await backend.open();
  });
  afterAll(async () => test?.dispose());

  it("signs an organization's run with the organization's own secret, made on first need", async () => {
    const organization = await new OrganizationStore(test.database).create("Signing");
    const service = newWebhookSecret();
    const secret = await organizationSecretResolver(test.database, service)({ runId: "run_1", organizationId: organization.id });
    expect(secret).not.toBe(service);
    expect(secret).toBe(await new WebhookSecretStore(test.database).webhookSecretOf(organization.id));
  });

  it("signs a run without organization with the service secret, given or read, and refuses one when there is none", async () => {
    const service = newWebhookSecret();
    expect(await organizationSecretResolver(test.database, service)({ runId: "run_2", organizationId: null })).toBe(service);
    let reads = 0;
    const read = async () => (reads++, service);
    const resolver = organizationSecretResolver(test.database, read);
    expect(await resolver({ runId: "run_3", organizationId: null })).toBe(service);
    expect(await resolver({ runId: "run_4", organizationId: null })).toBe(service);
    expect(reads).toBe(2);
    await expect(organizationSecretResolver(test.database)({ runId: "run_5", organizationId: null })).rejects.toThrow(
      new Error("run run_5 has no organization and no service-wide webhook secret is configured"),
    );
  });
});
