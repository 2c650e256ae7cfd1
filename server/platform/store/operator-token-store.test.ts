// OperatorTokenStore on PGlite and PostgreSQL: tokens shown once and kept only as digests, found while live (their use
// recorded), listed without secrets, and revoked for good.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { failIfMissing, skipOutsideCi, titled } from "../../../engine/testing/fixtures.js";
import { PlatformInputError } from "../contract.js";
import { TEST_BACKENDS, type TestDatabase } from "../testing/test-databases.js";
import { digestKey } from "./key-secret.js";
import { OPERATOR_TOKEN_PREFIX, OperatorTokenStore } from "./operator-token-store.js";

for (const backend of TEST_BACKENDS) {
  describe.skipIf(skipOutsideCi(backend.reason))(titled(`OperatorTokenStore on ${backend.name}`, backend.reason), () => {
    let test: TestDatabase;
    let clock = new Date("2030-01-01T00:00:00Z");
    let tokens: OperatorTokenStore;

    beforeAll(async () => {
      failIfMissing(backend.reason);
      test = await backend.open();
      tokens = new OperatorTokenStore(test.database, () => clock);
    });
    afterAll(async () => test?.dispose());

    it("mints lop_ tokens of 32 random bytes and keeps only their SHA-256 digest", async () => {
      const { record, token } = await tokens.create("laptop");
      expect(token).toMatch(/^lop_[A-Za-z0-9_-]{43}$/);
      expect(token.startsWith(OPERATOR_TOKEN_PREFIX)).toBe(true);
      expect(record).toEqual({ id: expect.stringMatching(/^opt_[0-9a-f]{24}$/), name: "laptop", createdAt: clock, lastUsedAt: null, revokedAt: null });
      const rows = await test.database.query<Record<string, unknown>>("SELECT * FROM operator_tokens WHERE id = $1", [record.id]);
      expect(rows[0]!.digest).toBe(digestKey(token));
      expect(JSON.stringify(rows)).not.toContain(token.slice(OPERATOR_TOKEN_PREFIX.length));
      expect((await tokens.create("laptop")).token).not.toBe(token);
    });

    it("finds a live token and records its use; nothing for tokens it did not make", async () => {
      const { record, token } = await tokens.create("ci");
      clock = new Date(clock.getTime() + 60_000);
      expect(await tokens.find(token)).toEqual({ ...record, lastUsedAt: clock });
      // Written at most once a minute: a use 30 s later leaves it, one a minute later moves it.
      const firstUse = clock;
      clock = new Date(clock.getTime() + 30_000);
      expect((await tokens.find(token))!.lastUsedAt).toEqual(firstUse);
      expect((await tokens.list()).find((listed) => listed.id === record.id)!.lastUsedAt).toEqual(firstUse);
      clock = new Date(clock.getTime() + 30_000);
      expect((await tokens.find(token))!.lastUsedAt).toEqual(clock);
      for (const other of ["", "lop_", `${token}x`, token.slice(0, -1), `lop_${"a".repeat(43)}`, token.replace("lop_", "sk-mgmt-"), `lop_${"é".repeat(43)}`]) {
        expect(await tokens.find(other)).toBeUndefined();
      }
    });

    it("lists every token newest first, revoked ones included, never a secret or digest", async () => {
      const older = await tokens.create("older");
      clock = new Date(clock.getTime() + 1000);
      const newer = await tokens.create("newer");
      await tokens.revoke(older.record.id);
      const listed = await tokens.list();
      const ids = listed.map((entry) => entry.id);
      expect(ids.indexOf(newer.record.id)).toBeLessThan(ids.indexOf(older.record.id));
      expect(listed.find((entry) => entry.id === older.record.id)!.revokedAt).toEqual(clock);
      expect(Object.keys(listed[0]!).sort()).toEqual(["createdAt", "id", "lastUsedAt", "name", "revokedAt"]);
      expect(JSON.stringify(listed)).not.toContain(newer.token.slice(OPERATOR_TOKEN_PREFIX.length));
    });

    it("revokes once: the token is found no more, and a second revoke or an unknown id is false", async () => {
      const { record, token } = await tokens.create("to revoke");
      expect(await tokens.revoke(record.id)).toBe(true);
      expect(await tokens.find(token)).toBeUndefined();
      expect(await tokens.revoke(record.id)).toBe(false);
      expect(await tokens.revoke("opt_missing")).toBe(false);
    });

    it("refuses a bad name or id, naming the field", async () => {
      for (const name of ["", "   ", "x".repeat(256), 5 as unknown as string]) {
        await expect(tokens.create(name)).rejects.toMatchObject({ field: "name" });
      }
      await expect(tokens.revoke("")).rejects.toThrow(PlatformInputError);
      await expect(tokens.revoke("")).rejects.toMatchObject({ field: "tokenId" });
    });
  });
}
