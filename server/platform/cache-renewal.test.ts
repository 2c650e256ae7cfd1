// On a real platform (PGlite and PostgreSQL): a key and organization in steady use have their cached records renewed
// by their own requests' usage commits, so they are not read again while requests keep coming, and what a commit
// reads back (a key revoked by another process) applies at once.
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { failIfMissing, skipOutsideCi, titled } from "../../engine/testing/fixtures.js";
import type { AdmissionRequest } from "../http/accounting.js";
import { ProtocolError } from "../protocol/internal.js";
import type { KeyPrincipal } from "./keys/key-authenticator.js";
import { type Platform, openPlatform } from "./platform.js";
import { type FreshPlatform, TEST_BACKENDS, freshPlatform } from "./testing/test-databases.js";

// Long enough that a request on a loaded machine (commit included) takes far less than half of it.
const CACHE_MS = 1500;
const USED = { promptTokens: 10, cachedTokens: 0, completionTokens: 5 };
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

for (const backend of TEST_BACKENDS) {
  describe.skipIf(skipOutsideCi(backend.reason))(titled(`cached keys and organizations renewed by usage commits on ${backend.name}`, backend.reason), () => {
    let fresh: FreshPlatform;
    let platform: Platform;

    beforeAll(async () => {
      failIfMissing(backend.reason);
      fresh = await freshPlatform(backend);
      platform = await openPlatform({ ...fresh.options, cacheMs: CACHE_MS });
    }, 60_000);
    afterAll(async () => {
      vi.restoreAllMocks();
      await platform?.close();
      await fresh?.remove();
    });

    /** Authenticates `key` as a request does, then admits and settles one request of it (its usage committed). */
    async function oneRequest(key: string): Promise<KeyPrincipal | ProtocolError> {
      const principal = await platform.inferenceKeys.authenticate({ authorization: `Bearer ${key}` }, "openai");
      if (principal instanceof ProtocolError) return principal;
      const request: AdmissionRequest = { principal, format: "openai", model: "m", inputTokens: async () => 10, maxOutputTokens: () => 20 };
      const admission = await platform.accountant.admit(request);
      await admission.settleWith(USED, async () => "record");
      return principal;
    }

    it("reads a key and its organization once while requests keep coming, and takes a revocation a commit read back", async () => {
      const organization = await platform.stores.organizations.create("steady");
      const { key, record } = await platform.stores.keys.create(organization.id, "inference", "steady");
      const keyReads = vi.spyOn(platform.stores.keys, "findByDigest");
      const organizationReads = vi.spyOn(platform.stores.organizations, "get");
      // Two cache lives of requests 50 ms apart: without renewal, each life would read both again past its half.
      const until = Date.now() + 2 * CACHE_MS;
      while (Date.now() < until) {
        expect(await oneRequest(key)).toMatchObject({ keyId: record.id });
        await pause(50);
      }
      expect(keyReads).toHaveBeenCalledTimes(1);
      expect(organizationReads).toHaveBeenCalledTimes(1);

      // Revoked by another process (no forget() here): the next commit reads it back, and the request after is refused
      // without a read of its own, well before the cached record would have expired.
      expect(await platform.stores.keys.revoke(organization.id, record.id)).toBe(true);
      expect(await oneRequest(key)).toMatchObject({ keyId: record.id });
      expect(await oneRequest(key)).toBeInstanceOf(ProtocolError);
      expect(keyReads).toHaveBeenCalledTimes(1);
    });
  });
}
