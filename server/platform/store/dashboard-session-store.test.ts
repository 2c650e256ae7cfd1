// DashboardSessionStore on PGlite and PostgreSQL: tokens whose digests alone are kept, sessions that end at their
// expiry, on sign-out, or with the management key or operator token they signed in with, CSRF tokens derived from the
// session token and checked in constant time, and the cleanup of ended sessions.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { failIfMissing, skipOutsideCi, titled } from "../../../engine/testing/fixtures.js";
import { PlatformInputError } from "../contract.js";
import { TEST_BACKENDS, type TestDatabase } from "../testing/test-databases.js";
import { DashboardSessionCleanup } from "./dashboard-session-cleanup.js";
import { DashboardSessionStore, MAX_SESSION_MS, SESSION_TOKEN_PREFIX, csrfTokenOf } from "./dashboard-session-store.js";
import { digestKey } from "./key-secret.js";
import { KeyStore } from "./key-store.js";
import { OperatorTokenStore } from "./operator-token-store.js";
import { OrganizationStore } from "./organization-store.js";

const HOUR = 3600 * 1000;

for (const backend of TEST_BACKENDS) {
  describe.skipIf(skipOutsideCi(backend.reason))(titled(`DashboardSessionStore on ${backend.name}`, backend.reason), () => {
    let test: TestDatabase;
    let keys: KeyStore;
    let organizationId: string;
    let keyId: string;
    let tokens: OperatorTokenStore;
    let operator: { kind: "operator"; operatorTokenId: string };
    let clock = new Date("2030-01-01T00:00:00Z");
    let sessions: DashboardSessionStore;

    beforeAll(async () => {
      failIfMissing(backend.reason);
      test = await backend.open();
      keys = new KeyStore(test.database);
      organizationId = (await new OrganizationStore(test.database).create("Dashboard")).id;
      keyId = (await keys.create(organizationId, "management", "dashboard")).record.id;
      sessions = new DashboardSessionStore(test.database, () => clock);
      tokens = new OperatorTokenStore(test.database, () => clock);
      operator = { kind: "operator", operatorTokenId: (await tokens.create("dashboard")).record.id };
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

    it("checks the CSRF token: the session's own only, derived again from the session token", async () => {
      const created = await sessions.create(operator, HOUR);
      const other = await sessions.create(operator, HOUR);
      expect(created.csrfToken).toBe(csrfTokenOf(created.token));
      expect(created.csrfToken).toMatch(/^[A-Za-z0-9_-]{43}$/);
      expect(other.csrfToken).not.toBe(created.csrfToken);
      expect(await sessions.find(created.token, created.csrfToken)).toMatchObject(operator);
      expect(await sessions.find(created.token, csrfTokenOf(created.token))).toMatchObject(operator);
      expect(await sessions.find(created.token, other.csrfToken)).toBeUndefined();
      expect(await sessions.find(created.token, "")).toBeUndefined();
      expect(await sessions.find(created.token, created.token)).toBeUndefined();
    });

    it("keeps the CSRF digest it was made with: a row whose stored digest differs refuses the derived token", async () => {
      const created = await sessions.create(operator, HOUR);
      await test.database.query("UPDATE dashboard_sessions SET csrf_digest = $2 WHERE digest = $1", [digestKey(created.token), digestKey("another")]);
      expect(await sessions.find(created.token)).toMatchObject(operator);
      expect(await sessions.find(created.token, created.csrfToken)).toBeUndefined();
    });

    it("ends an operator's sessions when its token is revoked, and only that token's", async () => {
      const doomed = (await tokens.create("doomed")).record.id;
      const first = await sessions.create({ kind: "operator", operatorTokenId: doomed }, HOUR);
      const second = await sessions.create({ kind: "operator", operatorTokenId: doomed }, HOUR);
      const bystander = await sessions.create(operator, HOUR);
      expect(await tokens.revoke(doomed)).toBe(true);
      expect(await sessions.find(first.token)).toBeUndefined();
      expect(await sessions.find(second.token)).toBeUndefined();
      expect(await sessions.find(bystander.token)).toMatchObject(operator);
      // Ended in the table too, so the cleanup removes them.
      const [{ count }] = await test.database.query<{ count: number }>("SELECT count(*)::int AS count FROM dashboard_sessions WHERE operator_token_id = $1 AND revoked_at IS NOT NULL", [doomed]);
      expect(count).toBe(2);
    });

    it("refuses an operator session without its token, or of a token that does not exist", async () => {
      await expect(sessions.create({ kind: "operator" } as never, HOUR)).rejects.toMatchObject({ field: "operatorTokenId" });
      await expect(sessions.create({ kind: "operator", operatorTokenId: "opt_missing" }, HOUR)).rejects.toThrow();
      await expect(test.database.query(
        "INSERT INTO dashboard_sessions (digest, kind, csrf_digest, created_at, expires_at) VALUES ('x', 'operator', 'y', now(), now())",
      )).rejects.toThrow();
    });

    it("ends a session at its expiry, on sign-out, and when its key is revoked", async () => {
      const expiring = await sessions.create(operator, HOUR);
      clock = new Date(clock.getTime() + HOUR);
      expect(await sessions.find(expiring.token)).toBeUndefined();
      expect(await sessions.revoke(expiring.token)).toBe(false);

      const signedOut = await sessions.create(operator, HOUR);
      expect(await sessions.revoke(signedOut.token)).toBe(true);
      expect(await sessions.find(signedOut.token)).toBeUndefined();
      expect(await sessions.revoke(signedOut.token)).toBe(false);

      const ownKey = (await keys.create(organizationId, "management", "to revoke")).record.id;
      const keyed = await sessions.create({ kind: "organization", organizationId, keyId: ownKey }, HOUR);
      expect(await sessions.find(keyed.token)).toMatchObject({ kind: "organization", organizationId, keyId: ownKey });
      await keys.revoke(organizationId, ownKey);
      expect(await sessions.find(keyed.token)).toBeUndefined();
    });

    it("finds nothing for tokens it did not make", async () => {
      for (const token of ["", "ds_", "ds_unknown", "sk-mgmt-abc", `ds_${"x".repeat(1000)}`]) expect(await sessions.find(token)).toBeUndefined();
    });

    it("refuses a malformed session, and an unknown organization or key", async () => {
      await expect(sessions.create(operator, 0)).rejects.toThrow(PlatformInputError);
      await expect(sessions.create(operator, MAX_SESSION_MS + 1)).rejects.toThrow(/at most/);
      await expect(sessions.create({ kind: "organization", organizationId: "", keyId }, HOUR)).rejects.toThrow(PlatformInputError);
      await expect(sessions.create({ kind: "organization", organizationId: "org_missing", keyId }, HOUR)).rejects.toThrow();
    });

    it("deletes ended sessions in batches, and keeps live ones", async () => {
      const live = await sessions.create(operator, 10 * HOUR);
      const before = new Date(clock.getTime() + 2 * HOUR);
      let deleted = 0;
      for (let batch = await sessions.deleteEnded(before, 2); batch > 0; batch = await sessions.deleteEnded(before, 2)) {
        expect(batch).toBeLessThanOrEqual(2);
        deleted += batch;
      }
      expect(deleted).toBeGreaterThan(2);
      expect(await sessions.find(live.token)).toMatchObject({ ...operator, expiresAt: new Date(clock.getTime() + 10 * HOUR) });
      const [{ count }] = await test.database.query<{ count: number }>("SELECT count(*)::int AS count FROM dashboard_sessions WHERE expires_at <= $1 OR revoked_at <= $1", [before]);
      expect(count).toBe(0);
    });

    it("DashboardSessionCleanup deletes ended sessions batch after batch by its clock, and keeps live ones", async () => {
      const live = await sessions.create(operator, 10 * HOUR);
      const ended = await Promise.all([1, 2, 3, 4, 5].map(() => sessions.create(operator, HOUR)));
      await sessions.revoke(ended[0]!.token);
      const batches: number[] = [];
      const counting = { deleteEnded: async (now: Date, limit: number) => {
        const deleted = await sessions.deleteEnded(now, limit);
        batches.push(deleted);
        return deleted;
      } };
      // By the clock of now, only the signed-out one has ended.
      expect(await new DashboardSessionCleanup(counting, { batch: 2, now: () => clock }).runOnce()).toBe(1);
      const later = new Date(clock.getTime() + 2 * HOUR);
      batches.length = 0;
      expect(await new DashboardSessionCleanup(counting, { batch: 2, now: () => later }).runOnce()).toBe(4);
      expect(batches).toEqual([2, 2, 0]);
      expect(await sessions.find(live.token)).toMatchObject({ ...operator, expiresAt: new Date(clock.getTime() + 10 * HOUR) });
      const digests = ended.map((session) => digestKey(session.token));
      const [{ count }] = await test.database.query<{ count: number }>("SELECT count(*)::int AS count FROM dashboard_sessions WHERE digest = ANY($1)", [digests]);
      expect(count).toBe(0);
    });
  });
}
