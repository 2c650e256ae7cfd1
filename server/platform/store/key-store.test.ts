// KeyStore on PGlite and PostgreSQL: secrets minted once and stored only as digests, lookups, lists without secrets,
// revocation scoped to the organization, name rules, and last use recorded in one statement.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { failIfMissing, skipOutsideCi, titled } from "../../../engine/testing/fixtures.js";
import { PlatformInputError } from "../contract.js";
import { TEST_BACKENDS, type TestDatabase } from "../testing/test-databases.js";
import { digestKey } from "./key-secret.js";
import { KeyStore } from "./key-store.js";
import { OrganizationStore } from "./organization-store.js";

for (const backend of TEST_BACKENDS) {
  describe.skipIf(skipOutsideCi(backend.reason))(titled(`KeyStore on ${backend.name}`, backend.reason), () => {
    let test: TestDatabase;
    let keys: KeyStore;
    let organizations: OrganizationStore;
    beforeAll(async () => {
      failIfMissing(backend.reason);
      test = await backend.open();
      keys = new KeyStore(test.database);
      organizations = new OrganizationStore(test.database);
    });
    afterAll(async () => test?.dispose());

    it("mints keys with at least 32 random bytes of secret and a prefix that shows 6 of its characters", async () => {
      const organization = await organizations.create("Minting");
      const inference = await keys.create(organization.id, "inference", "ci");
      const management = await keys.create(organization.id, "management", "admin");
      const secret = inference.key.slice("sk-gw-".length);
      expect(inference.key).toMatch(/^sk-gw-[A-Za-z0-9_-]{43}$/);
      expect(Buffer.from(secret, "base64url").length).toBeGreaterThanOrEqual(32);
      expect(management.key).toMatch(/^sk-mgmt-[A-Za-z0-9_-]{43}$/);
      expect(inference.record.keyPrefix).toBe(inference.key.slice(0, "sk-gw-".length + 6));
      expect(management.record.keyPrefix).toBe(management.key.slice(0, "sk-mgmt-".length + 6));
      expect(inference.record).toMatchObject({ organizationId: organization.id, kind: "inference", name: "ci", isActive: true, lastUsedAt: null, limits: {}, allowedModels: null });
      expect(inference.record.id).toMatch(/^key_[0-9a-f]{24}$/);
      const again = await keys.create(organization.id, "inference", "ci");
      expect(again.key).not.toBe(inference.key);
    });

    it("stores only the SHA-256 digest: no column of the table holds the secret or any long piece of it", async () => {
      const organization = await organizations.create("Digests");
      const { key, record } = await keys.create(organization.id, "inference", "stored");
      const rows = await test.database.query("SELECT * FROM api_keys WHERE id = $1", [record.id]);
      const stored = JSON.stringify(rows);
      const secret = key.slice("sk-gw-".length);
      expect(stored).not.toContain(key);
      expect(stored).not.toContain(secret.slice(6, 18));
      expect(stored).not.toContain(secret.slice(-12));
      expect(rows[0]!.key_digest).toBe(digestKey(key));
    });

    it("finds a key by digest or by value, active or not, and nothing for unknown or malformed keys", async () => {
      const organization = await organizations.create("Lookup");
      const { key, record } = await keys.create(organization.id, "management", "lookup");
      expect(await keys.findByDigest(digestKey(key))).toEqual(record);
      expect(await keys.findByKey(key)).toEqual(record);
      expect(await keys.findByKey(`${key}x`)).toBeUndefined();
      expect(await keys.findByKey("not-a-key")).toBeUndefined();
      // The same secret behind the other kind's prefix is another key.
      expect(await keys.findByKey(`sk-gw-${key.slice("sk-mgmt-".length)}`)).toBeUndefined();
      await keys.revoke(organization.id, record.id);
      expect(await keys.findByKey(key)).toMatchObject({ id: record.id, isActive: false });
    });

    it("lists an organization's keys oldest first, by kind on request, never with a digest or a secret", async () => {
      const organization = await organizations.create("Listing");
      const other = await organizations.create("Other");
      const a = await keys.create(organization.id, "inference", "a");
      const b = await keys.create(organization.id, "management", "b");
      await keys.create(other.id, "inference", "theirs");
      const listed = await keys.list(organization.id);
      expect(listed.map((record) => record.id)).toEqual([a.record.id, b.record.id]);
      expect((await keys.list(organization.id, "inference")).map((record) => record.id)).toEqual([a.record.id]);
      const text = JSON.stringify(listed);
      expect(text).not.toContain(a.key);
      expect(text).not.toContain(b.key);
      expect(text).not.toContain(digestKey(a.key));
      expect(Object.keys(listed[0]!).sort()).toEqual(
        ["allowedModels", "createdAt", "id", "isActive", "keyPrefix", "kind", "lastUsedAt", "limits", "name", "organizationId"],
      );
    });

    it("revokes only within the key's own organization", async () => {
      const mine = await organizations.create("Mine");
      const theirs = await organizations.create("Theirs");
      const { record } = await keys.create(mine.id, "inference", "target");
      expect(await keys.revoke(theirs.id, record.id)).toBe(false);
      expect((await keys.get(mine.id, record.id))?.isActive).toBe(true);
      expect(await keys.get(theirs.id, record.id)).toBeUndefined();
      expect(await keys.revoke(mine.id, record.id)).toBe(true);
      expect((await keys.get(mine.id, record.id))?.isActive).toBe(false);
      expect(await keys.revoke(mine.id, "key_missing")).toBe(false);
    });

    it("checks names: 1 to 255 characters, not blank", async () => {
      const organization = await organizations.create("Names");
      for (const bad of ["", "   ", "\t\n", "x".repeat(256)]) {
        const error = await keys.create(organization.id, "inference", bad).then(() => undefined, (e: unknown) => e);
        expect(error, JSON.stringify(bad)).toBeInstanceOf(PlatformInputError);
        expect((error as PlatformInputError).field).toBe("name");
      }
      expect((await keys.create(organization.id, "inference", "x".repeat(255))).record.name).toHaveLength(255);
      // 255 characters outside the BMP are 510 UTF-16 units: still 255 characters.
      expect((await keys.create(organization.id, "inference", "🔑".repeat(255))).record.name).toBe("🔑".repeat(255));
      expect(await keys.list(organization.id)).toHaveLength(2);
    });

    it("refuses an unknown organization, a bad kind and bad options, naming the field", async () => {
      const organization = await organizations.create("Options");
      await expect(keys.create("org_missing", "inference", "x")).rejects.toMatchObject({ field: "organizationId", notFound: true });
      await expect(keys.create(organization.id, "admin" as never, "x")).rejects.toMatchObject({ field: "kind" });
      await expect(keys.create(organization.id, "inference", "x", { limits: { requestsPerMinute: 0 } })).rejects.toMatchObject({ field: "limits.requestsPerMinute" });
      await expect(keys.create(organization.id, "inference", "x", { allowedModels: [] })).rejects.toMatchObject({ field: "allowedModels" });
      await expect(keys.create(organization.id, "inference", "x", { allowedModels: ["ok", ""] })).rejects.toMatchObject({ field: "allowedModels[1]" });
      const limited = await keys.create(organization.id, "inference", "limited", { limits: { tokensPerMinute: 500 }, allowedModels: ["smollm2-135m"] });
      expect(limited.record).toMatchObject({ limits: { tokensPerMinute: 500 }, allowedModels: ["smollm2-135m"] });
      expect(await keys.list(organization.id)).toHaveLength(1);
    });

    it("records last use of many keys in one statement and never moves it back", async () => {
      const organization = await organizations.create("Touch");
      const a = await keys.create(organization.id, "inference", "a");
      const b = await keys.create(organization.id, "inference", "b");
      const early = new Date("2030-01-01T00:00:00.000Z");
      const late = new Date("2030-01-02T00:00:00.000Z");
      await keys.touch(new Map([[a.record.id, late], [b.record.id, early]]));
      await keys.touch(new Map([[a.record.id, early]]));
      expect((await keys.get(organization.id, a.record.id))?.lastUsedAt).toEqual(late);
      expect((await keys.get(organization.id, b.record.id))?.lastUsedAt).toEqual(early);
    });
  });
}
