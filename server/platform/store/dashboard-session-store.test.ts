// DashboardSessionStore on PGlite and PostgreSQL: tokens whose digests alone are kept, sessions that end at their
// expiry, on sign-out, or with the management key they signed in with, CSRF tokens checked in constant time, and the
// cleanup of ended sessions.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { failIfMissing, skipOutsideCi, titled } from "../../../engine/testing/fixtures.js";
import { PlatformInputError } from "../contract.js";
import { TEST_BACKENDS, type TestDatabase } from "../testing/test-databases.js";
import { DashboardSessionStore, MAX_SESSION_MS, SESSION_TOKEN_PREFIX } from "./dashboard-session-store.js";
import { digestKey } from "./key-secret.js";
import { KeyStore } from "./key-store.js";
import { OrganizationStore } from "./organization-store.js";

const HOUR = 3600 * 1000;

for (const backend of TEST_BACKENDS) {
  describe.skipIf(skipOutsideCi(backend.reason))(titled(`DashboardSessionStore on ${backend.name}`, backend.reason), () => {
    let test: TestDatabase;
    let keys: KeyStore;
    let organizationId: string;
    let keyId: string;
    let clock = new Date("2030-01-01T00:00:00Z");
    let sessions: DashboardSessionStore;

    beforeAll(async () => {
      failIfMissing(backend.reason);
      test = await backend.open();
      keys = new KeyStore(test.database);
      organizationId = (await new OrganizationStore(test.database).create("Dashboard")).id;
      keyId = (await keys.create(organizationId, "management", "dashboard")).record.id;
      sessions = new DashboardSessionStore(test.database, () => clock);
    });
    afterAll(async () => test?.dispose());

    it("hands out the tokens once and keeps only their digests", async () => {
      const created = await sessions.create({ kind: "organization", organizationId, keyId }, HOUR);
      expect(created.token.startsWith(SESSION_TOKEN_PREFIX)).toBe(true);
      expect(created.token.length).toBeGreaterThan(40);
      expect(created.csrfToken).not.toBe(created.token);
      const rows = await test.database.query<Record<string, unknown>>("SELECT * FROM dashboard_sessions WHERE digest = $1", [digestKey(created.token)]);
      expect(rows).toHaveLength(1);
      expect(JSON.stringify(rows[0])).not.toContain(created.token.slice(SESSION_TOKEN_PREFIX.length));
      expect(JSON.stringify(rows[0])).not.toContain(created.csrfToken);
      expect(await sessions.find(created.token)).toMatchObject({ kind: "organization", organizationId, keyId, expiresAt: new Date(clock.getTime() + HOUR) });
    });

    it("checks the CSRF token: the session's own only", async () => {
      const created = await sessions.create({ kind: "operator" }, HOUR);
      const other = await sessions.create({ kind: "operator" }, HOUR);
      expect(await sessions.find(created.token, created.csrfToken)).toMatchObject({ kind: "operator" });
      expect(await sessions.find(created.token, other.csrfToken)).toBeUndefined();
      expect(await sessions.find(created.token, "")).toBeUndefined();
    });

    it("ends a session at its expiry, on sign-out, and when its key is revoked", async () => {
      const expiring = await sessions.create({ kind: "operator" }, HOUR);
      clock = new Date(clock.getTime() + HOUR);
      expect(await sessions.find(expiring.token)).toBeUndefined();
      expect(await sessions.revoke(expiring.token)).toBe(false);

      const signedOut = await sessions.create({ kind: "operator" }, HOUR);
      expect(await sessions.revoke(signedOut.token)).toBe(true);
      expect(await sessions.find(signedOut.token)).toBeUndefined();
      expect(await sessions.revoke(signedOut.token)).toBe(false);

      const ownKey = (await keys.create(organizationId, "management", "to revoke")).record.id;
      const keyed = await sessions.create({ kind: "organization", organizationId, keyId: ownKey }, HOUR);
      expect(await sessions.find(keyed.token)).toBeDefined();
      await keys.revoke(organizationId, ownKey);
      expect(await sessions.find(keyed.token)).toBeUndefined();
    });

    it("finds nothing for tokens it did not make", async () => {
      for (const token of ["", "ds_", "ds_unknown", "sk-mgmt-abc", `ds_${"x".repeat(1000)}`]) expect(await sessions.find(token)).toBeUndefined();
    });

    it("refuses a malformed session, and an unknown organization or key", async () => {
      await expect(sessions.create({ kind: "operator" }, 0)).rejects.toThrow(PlatformInputError);
      await expect(sessions.create({ kind: "operator" }, MAX_SESSION_MS + 1)).rejects.toThrow(/at most/);
      await expect(sessions.create({ kind: "organization", organizationId: "", keyId }, HOUR)).rejects.toThrow(PlatformInputError);
      await expect(sessions.create({ kind: "organization", organizationId: "org_missing", keyId }, HOUR)).rejects.toThrow();
    });

    it("deletes ended sessions in batches, and keeps live ones", async () => {
      const live = await sessions.create({ kind: "operator" }, 10 * HOUR);
      const before = new Date(clock.getTime() + 2 * HOUR);
      let deleted = 0;
      for (let batch = await sessions.deleteEnded(before, 2); batch > 0; batch = await sessions.deleteEnded(before, 2)) {
        expect(batch).toBeLessThanOrEqual(2);
        deleted += batch;
      }
      expect(deleted).toBeGreaterThan(2);
      expect(await sessions.find(live.token)).toBeDefined();
      const [{ count }] = await test.database.query<{ count: number }>("SELECT count(*)::int AS count FROM dashboard_sessions WHERE expires_at <= $1 OR revoked_at <= $1", [before]);
      expect(count).toBe(0);
    });
  });
}
