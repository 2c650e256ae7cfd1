// runAdminCommand and answerAdminRequest on PGlite and PostgreSQL: every command's JSON result, every field checked
// and named when wrong, and the HTTP answer's statuses.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { failIfMissing, skipOutsideCi, titled } from "../../../engine/testing/fixtures.js";
import { PlatformInputError } from "../contract.js";
import { createPlatformStores, type PlatformStores } from "../store/platform-stores.js";
import { UsageWriter } from "../store/usage-writer.js";
import { TEST_BACKENDS, type TestDatabase } from "../testing/test-databases.js";
import { answerAdminRequest } from "./admin-request.js";
import { type CreatedOperatorTokenJson, type KeyJson, type OperatorTokenJson, type OrganizationJson, type OrganizationWithSecretJson, type UsageJson, type WebhookSecretJson, runAdminCommand } from "./run-admin-command.js";

for (const backend of TEST_BACKENDS) {
  describe.skipIf(skipOutsideCi(backend.reason))(titled(`runAdminCommand on ${backend.name}`, backend.reason), () => {
    let test: TestDatabase;
    let stores: PlatformStores;
    beforeAll(async () => {
      failIfMissing(backend.reason);
      test = await backend.open();
      stores = createPlatformStores(test.database);
    });
    afterAll(async () => test?.dispose());

    /** The field named by the PlatformInputError a command fails with. */
    async function refusedField(command: unknown): Promise<string> {
      const error = await runAdminCommand(stores, command).then(() => undefined, (e: unknown) => e);
      expect(error, JSON.stringify(command)).toBeInstanceOf(PlatformInputError);
      return (error as PlatformInputError).field;
    }

    it("creates, shows, sets and lists organizations as JSON", async () => {
      const created = (await runAdminCommand(stores, { command: "org.create", name: "Acme", fields: { closedBeta: true } })) as OrganizationJson;
      expect(created).toMatchObject({ name: "Acme", closedBeta: true, limits: { requestsPerMinute: 100, tokensPerMinute: 1_000_000, tokensPerDay: 10_000_000 } });
      expect(typeof created.createdAt).toBe("string");
      expect(JSON.parse(JSON.stringify(created))).toEqual(created);
      expect(await runAdminCommand(stores, { command: "org.show", organizationId: created.id })).toEqual({ ...created, webhookSecret: expect.stringMatching(/^whsec_/) });
      const set = (await runAdminCommand(stores, {
        command: "org.set", organizationId: created.id, patch: { billingMode: "prepaid", creditBalanceDollars: 5, prices: { m: { inputPerMillion: 1, outputPerMillion: 2 } } },
      })) as OrganizationJson;
      expect(set).toMatchObject({ billingMode: "prepaid", creditBalanceDollars: 5, prices: { m: { inputPerMillion: 1, outputPerMillion: 2 } } });
      const { organizations } = (await runAdminCommand(stores, { command: "org.list" })) as { organizations: OrganizationJson[] };
      expect(organizations.map((organization) => organization.id)).toContain(created.id);
    });

    it("creates, lists and revokes keys; the secret appears only in the create result", async () => {
      const organization = (await runAdminCommand(stores, { command: "org.create", name: "Keys" })) as OrganizationJson;
      const created = (await runAdminCommand(stores, { command: "key.create", organizationId: organization.id, kind: "inference", name: "ci" })) as KeyJson & { key: string };
      expect(created.key).toMatch(/^sk-gw-/);
      expect(created).toMatchObject({ organizationId: organization.id, kind: "inference", name: "ci", isActive: true, lastUsedAt: null });
      const { keys } = (await runAdminCommand(stores, { command: "key.list", organizationId: organization.id })) as { keys: KeyJson[] };
      expect(keys).toHaveLength(1);
      expect(JSON.stringify(keys)).not.toContain(created.key);
      expect(keys[0]).not.toHaveProperty("key");
      expect(await runAdminCommand(stores, { command: "key.revoke", organizationId: organization.id, keyId: created.id })).toEqual(
        { id: created.id, organizationId: organization.id, isActive: false },
      );
      const other = (await runAdminCommand(stores, { command: "org.create", name: "Other" })) as OrganizationJson;
      const refusal = await runAdminCommand(stores, { command: "key.revoke", organizationId: other.id, keyId: created.id }).then(() => undefined, (e: unknown) => e);
      expect(refusal).toMatchObject({ field: "keyId", notFound: true });
    });

    it("reports usage rows and totals, of one day or all", async () => {
      const organization = (await runAdminCommand(stores, { command: "org.create", name: "Usage" })) as OrganizationJson;
      const key = (await runAdminCommand(stores, { command: "key.create", organizationId: organization.id, kind: "inference", name: "k" })) as KeyJson;
      const writer = new UsageWriter(test.database);
      const base = { organizationId: organization.id, keyId: key.id, model: "m", requests: 1, inputTokens: 10, cachedInputTokens: 4, outputTokens: 5, spendDollars: 0 };
      await Promise.all([writer.record({ ...base, day: "2031-01-01" }), writer.record({ ...base, day: "2031-01-02" }), writer.record({ ...base, day: "2031-01-02" })]);
      const all = (await runAdminCommand(stores, { command: "usage", organizationId: organization.id })) as UsageJson;
      expect(all.day).toBeNull();
      expect(all.rows.map((row) => [row.day, row.requests])).toEqual([["2031-01-01", 1], ["2031-01-02", 2]]);
      expect(all.totals).toEqual({ requests: 3, inputTokens: 30, cachedInputTokens: 12, outputTokens: 15, spendDollars: 0 });
      const one = (await runAdminCommand(stores, { command: "usage", organizationId: organization.id, day: "2031-01-02" })) as UsageJson;
      expect(one.totals.requests).toBe(2);
    });

    it("shows the webhook secret (made once) and rotates it", async () => {
      const organization = (await runAdminCommand(stores, { command: "org.create", name: "Hooks" })) as OrganizationJson;
      expect(organization).not.toHaveProperty("webhookSecret");
      const shown = (await runAdminCommand(stores, { command: "org.show", organizationId: organization.id })) as OrganizationWithSecretJson;
      expect(shown.webhookSecret).toMatch(/^whsec_[A-Za-z0-9+/=]{32,}$/);
      expect(await stores.webhookSecrets.webhookSecretOf(organization.id)).toBe(shown.webhookSecret);
      expect(((await runAdminCommand(stores, { command: "org.show", organizationId: organization.id })) as OrganizationWithSecretJson).webhookSecret).toBe(shown.webhookSecret);
      const { organizations } = (await runAdminCommand(stores, { command: "org.list" })) as { organizations: OrganizationJson[] };
      expect(JSON.stringify(organizations)).not.toContain(shown.webhookSecret);
      const rotated = (await runAdminCommand(stores, { command: "org.rotate-webhook-secret", organizationId: organization.id })) as WebhookSecretJson;
      expect(rotated).toEqual({ organizationId: organization.id, webhookSecret: expect.stringMatching(/^whsec_/) });
      expect(rotated.webhookSecret).not.toBe(shown.webhookSecret);
      expect(await stores.webhookSecrets.webhookSecretOf(organization.id)).toBe(rotated.webhookSecret);
      expect(await refusedField({ command: "org.rotate-webhook-secret", organizationId: "org_missing" })).toBe("organizationId");
      expect(await refusedField({ command: "org.rotate-webhook-secret", organizationId: organization.id, secret: "x" })).toBe("secret");
    });

    it("mints, lists and revokes operator tokens; the token appears only in the create result", async () => {
      const created = (await runAdminCommand(stores, { command: "operator-token.create", name: "laptop" })) as CreatedOperatorTokenJson;
      expect(created).toEqual({ id: expect.stringMatching(/^opt_/), name: "laptop", createdAt: expect.any(String), lastUsedAt: null, revokedAt: null, token: expect.stringMatching(/^lop_[A-Za-z0-9_-]{43}$/) });
      expect(await stores.operatorTokens.find(created.token)).toMatchObject({ id: created.id });
      const { operatorTokens } = (await runAdminCommand(stores, { command: "operator-token.list" })) as { operatorTokens: OperatorTokenJson[] };
      expect(operatorTokens.find((token) => token.id === created.id)).toMatchObject({ name: "laptop", revokedAt: null });
      expect(JSON.stringify(operatorTokens)).not.toContain(created.token);
      expect(await runAdminCommand(stores, { command: "operator-token.revoke", tokenId: created.id })).toEqual({ id: created.id, revoked: true });
      expect(await stores.operatorTokens.find(created.token)).toBeUndefined();
      const again = await runAdminCommand(stores, { command: "operator-token.revoke", tokenId: created.id }).then(() => undefined, (e: unknown) => e);
      expect(again).toMatchObject({ field: "tokenId", notFound: true });
      expect(await refusedField({ command: "operator-token.create" })).toBe("name");
      expect(await refusedField({ command: "operator-token.create", name: "x", kind: "root" })).toBe("kind");
      expect(await refusedField({ command: "operator-token.revoke", tokenId: "" })).toBe("tokenId");
      expect(await refusedField({ command: "operator-token.list", all: true })).toBe("all");
    });

    it("names the bad field of every malformed command", async () => {
      const organization = (await runAdminCommand(stores, { command: "org.create", name: "Fields" })) as OrganizationJson;
      const id = organization.id;
      expect(await refusedField(null)).toBe("command");
      expect(await refusedField({ command: "org.delete" })).toBe("command");
      expect(await refusedField({ command: "org.list", verbose: true })).toBe("verbose");
      expect(await refusedField({ command: "org.create" })).toBe("name");
      expect(await refusedField({ command: "org.create", name: "x", fields: { rpm: 5 } })).toBe("rpm");
      expect(await refusedField({ command: "org.show", organizationId: "" })).toBe("organizationId");
      expect(await refusedField({ command: "org.show", organizationId: "org_missing" })).toBe("organizationId");
      expect(await refusedField({ command: "org.set", organizationId: id })).toBe("patch");
      expect(await refusedField({ command: "org.set", organizationId: id, patch: { tokensPerDay: -5 } })).toBe("tokensPerDay");
      expect(await refusedField({ command: "key.create", organizationId: id, kind: "root", name: "x" })).toBe("kind");
      expect(await refusedField({ command: "key.create", organizationId: id, kind: "inference", name: " " })).toBe("name");
      expect(await refusedField({ command: "key.create", organizationId: id, kind: "inference", name: "x".repeat(256) })).toBe("name");
      expect(await refusedField({ command: "key.create", organizationId: "org_missing", kind: "inference", name: "x" })).toBe("organizationId");
      expect(await refusedField({ command: "key.create", organizationId: id, kind: "inference", name: "x", options: { limits: { tokensPerDay: 0 } } })).toBe("limits.tokensPerDay");
      expect(await refusedField({ command: "key.list", organizationId: "org_missing" })).toBe("organizationId");
      expect(await refusedField({ command: "key.list", organizationId: id, kind: "all" })).toBe("kind");
      expect(await refusedField({ command: "key.revoke", organizationId: id })).toBe("keyId");
      expect(await refusedField({ command: "usage", organizationId: id, day: "2031-1-2" })).toBe("day");
      expect(await refusedField({ command: "usage", organizationId: "org_missing" })).toBe("organizationId");
      // None of the refused commands left anything behind.
      expect(await stores.keys.list(id)).toEqual([]);
    });

    it("answers HTTP admin requests: 401 without the token, 400 naming the field, 200 with the result", async () => {
      const token = "test-token";
      const ask = (authorization: string | undefined, body: string) => answerAdminRequest({ stores, token, authorization, body });
      expect((await ask(undefined, '{"command":"org.list"}')).status).toBe(401);
      expect((await ask("Bearer wrong", '{"command":"org.list"}')).status).toBe(401);
      expect(await ask(`Bearer ${token}`, "{not json")).toMatchObject({ status: 400, body: { field: "body" } });
      expect(await ask(`Bearer ${token}`, '{"command":"org.create","name":""}')).toMatchObject({ status: 400, body: { field: "name" } });
      const created = await ask(`Bearer ${token}`, '{"command":"org.create","name":"Over HTTP"}');
      expect(created).toMatchObject({ status: 200, body: { result: { name: "Over HTTP" } } });
    });
  });
}
