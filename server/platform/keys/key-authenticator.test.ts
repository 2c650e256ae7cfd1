// KeyAuthenticator: refusals without a lookup for keys of the wrong form or kind, one lookup per digest shared by
// concurrent requests, a cache whose lifetime bounds how long a revocation takes, and a bound on cached digests.
import { afterEach, describe, expect, it, vi } from "vitest";
import { ProtocolError } from "../../protocol/internal.js";
import type { KeyRecord } from "../contract.js";
import { digestKey as keyDigest } from "../store/key-secret.js";
import { KeyAuthenticator } from "./key-authenticator.js";

const INFERENCE_KEY = `sk-gw-${"a".repeat(43)}`;
const record = (patch: Partial<KeyRecord> = {}): KeyRecord => ({
  id: "key_1", organizationId: "org_1", kind: "inference", name: "k", keyPrefix: "sk-gw-aaaaaa", isActive: true,
  createdAt: new Date(), lastUsedAt: null, limits: {}, allowedModels: null, ...patch,
});

/** Bearer credentials for `key`. */
const bearer = (key: string) => ({ authorization: `Bearer ${key}` });
const inferenceKey = (name: string) => `sk-gw-${name.padEnd(43, "x")}`;

/** A lookup whose reads wait until the test releases them, one by one, counting calls. */
function gatedTable(records: Map<string, KeyRecord>) {
  const waiting: Array<() => void> = [];
  let calls = 0;
  return {
    calls: () => calls,
    releaseNext: () => waiting.shift()!(),
    lookup: async (digest: string) => {
      calls++;
      await new Promise<void>((resolve) => waiting.push(resolve));
      return records.get(digest);
    },
  };
}

/** A lookup over a mutable table, counting calls. */
function table(records: Map<string, KeyRecord>) {
  const calls: string[] = [];
  return { calls, lookup: async (digest: string) => { calls.push(digest); return records.get(digest); } };
}

describe("KeyAuthenticator", () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it("refuses a missing key, a key of another form and a management key without a lookup", () => {
    const { calls, lookup } = table(new Map());
    const keys = new KeyAuthenticator(lookup, "inference");
    expect((keys.authenticate({}, "openai") as ProtocolError).message).toMatch(/missing API key: send an Authorization: Bearer/);
    expect((keys.authenticate({ xApiKey: INFERENCE_KEY }, "openai") as ProtocolError).message).toMatch(/missing API key/);
    expect((keys.authenticate({ authorization: "Bearer sk-other" }, "openai") as ProtocolError).message).toBe("invalid API key");
    expect((keys.authenticate({ authorization: `Bearer sk-mgmt-${"b".repeat(43)}` }, "openai") as ProtocolError).message).toMatch(/takes inference keys/);
    expect(calls).toEqual([]);
  });

  it("admits an active key of its kind, found by the SHA-256 digest, and shares one lookup among concurrent requests", async () => {
    const { calls, lookup } = table(new Map([[keyDigest(INFERENCE_KEY), record()]]));
    const keys = new KeyAuthenticator(lookup, "inference");
    const answers = await Promise.all(Array.from({ length: 20 }, () => keys.authenticate({ xApiKey: INFERENCE_KEY }, "anthropic")));
    for (const answer of answers) expect(answer).toMatchObject({ keyId: "key_1", organizationId: "org_1" });
    expect(calls).toEqual([keyDigest(INFERENCE_KEY)]);
    // Cached: the next answer is immediate, not a promise.
    expect(keys.authenticate({ authorization: `Bearer ${INFERENCE_KEY}` }, "openai")).toMatchObject({ keyId: "key_1" });
  });

  it("stops admitting a revoked key once its cache entry expires (ttl), and at once after forget()", async () => {
    const records = new Map([[keyDigest(INFERENCE_KEY), record()]]);
    const { lookup } = table(records);
    const keys = new KeyAuthenticator(lookup, "inference", 50);
    expect(await keys.authenticate({ authorization: `Bearer ${INFERENCE_KEY}` }, "openai")).toMatchObject({ keyId: "key_1" });
    records.set(keyDigest(INFERENCE_KEY), record({ isActive: false }));
    expect(keys.authenticate({ authorization: `Bearer ${INFERENCE_KEY}` }, "openai")).toMatchObject({ keyId: "key_1" });
    await new Promise((resolve) => setTimeout(resolve, 60));
    expect(((await keys.authenticate({ authorization: `Bearer ${INFERENCE_KEY}` }, "openai")) as ProtocolError).message).toMatch(/unknown or revoked/);
    records.set(keyDigest(INFERENCE_KEY), record());
    const long = new KeyAuthenticator(lookup, "inference", 60_000);
    await long.authenticate({ authorization: `Bearer ${INFERENCE_KEY}` }, "openai");
    records.set(keyDigest(INFERENCE_KEY), record({ isActive: false }));
    long.forget();
    expect(await long.authenticate({ authorization: `Bearer ${INFERENCE_KEY}` }, "openai")).toBeInstanceOf(ProtocolError);
  });

  it("reads a key in steady use again in the background past half its cache life, answering at once meanwhile", async () => {
    const records = new Map([[keyDigest(INFERENCE_KEY), record()]]);
    const { calls, lookup } = table(records);
    const keys = new KeyAuthenticator(lookup, "inference", 200);
    await keys.authenticate({ authorization: `Bearer ${INFERENCE_KEY}` }, "openai");
    records.set(keyDigest(INFERENCE_KEY), record({ isActive: false }));
    await new Promise((resolve) => setTimeout(resolve, 120));
    // Past half its life: still answered from the cache (not a promise), while a read starts behind it.
    expect(keys.authenticate({ authorization: `Bearer ${INFERENCE_KEY}` }, "openai")).toMatchObject({ keyId: "key_1" });
    expect(calls.length).toBe(2);
    await new Promise((resolve) => setTimeout(resolve, 10));
    // The background read found it revoked: refused at once, before the old entry's expiry.
    expect(keys.authenticate({ authorization: `Bearer ${INFERENCE_KEY}` }, "openai")).toBeInstanceOf(ProtocolError);
  });

  it("does not cache a read that began before forget() (it may predate the revocation)", async () => {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => { release = resolve; });
    const keys = new KeyAuthenticator(async () => { await gate; return record(); }, "inference", 60_000);
    const pending = keys.authenticate({ authorization: `Bearer ${INFERENCE_KEY}` }, "openai");
    keys.forget();
    release();
    await pending;
    // Not cached: the next call looks the key up again (a promise), instead of trusting the old read for a minute.
    expect(keys.authenticate({ authorization: `Bearer ${INFERENCE_KEY}` }, "openai")).toBeInstanceOf(Promise);
  });

  it("refuses a key of the other kind found in the table, and answers a failed lookup with a 502", async () => {
    const { lookup } = table(new Map([[keyDigest(INFERENCE_KEY), record({ kind: "management" })]]));
    expect(await new KeyAuthenticator(lookup, "inference").authenticate({ authorization: `Bearer ${INFERENCE_KEY}` }, "openai")).toBeInstanceOf(ProtocolError);
    const failing = new KeyAuthenticator(async () => { throw new Error("connection refused"); }, "inference");
    const answer = (await failing.authenticate({ authorization: `Bearer ${INFERENCE_KEY}` }, "openai")) as ProtocolError;
    expect(answer.status).toBe(502);
    // The driver's words are the log's: they can name the database's host and port.
    expect(answer.message).toBe("the key could not be checked: the platform database did not answer");
  });

  it("keeps at most maxEntries digests, unknown keys included", async () => {
    const { lookup } = table(new Map());
    const keys = new KeyAuthenticator(lookup, "inference", 60_000, 10);
    for (let i = 0; i < 100; i++) await keys.authenticate({ authorization: `Bearer sk-gw-${String(i).padStart(43, "x")}` }, "openai");
    expect((keys as unknown as { cache: Map<string, unknown> }).cache.size).toBeLessThanOrEqual(10);
  });

  it("answers every refusal as a 401 authentication error, naming how to send a key in each format", async () => {
    const { lookup } = table(new Map([[keyDigest(INFERENCE_KEY), record({ isActive: false })]]));
    const keys = new KeyAuthenticator(lookup, "inference");
    const refusals = [
      keys.authenticate({}, "openai"),
      keys.authenticate({}, "anthropic"),
      keys.authenticate(bearer("sk-other"), "openai"),
      keys.authenticate(bearer(`sk-mgmt-${"b".repeat(43)}`), "openai"),
      await keys.authenticate(bearer(INFERENCE_KEY), "openai"),
    ] as ProtocolError[];
    for (const refusal of refusals) {
      expect(refusal).toBeInstanceOf(ProtocolError);
      expect([refusal.kind, refusal.status]).toEqual(["authentication", 401]);
    }
    expect(refusals[0]!.message).toBe("missing API key: send an Authorization: Bearer <key> header");
    expect(refusals[1]!.message).toBe("missing API key: send an x-api-key header or Authorization: Bearer <key>");
    expect(refusals[3]!.message).toBe("invalid API key: this route takes inference keys (sk-gw-...), not management keys");
    expect(refusals[4]!.message).toBe("invalid API key (unknown or revoked)");
  });

  it("as the management routes' authenticator, refuses an inference key by name and admits a management key", async () => {
    const managementKey = `sk-mgmt-${"m".repeat(43)}`;
    const { calls, lookup } = table(new Map([[keyDigest(managementKey), record({ id: "key_m", kind: "management" })]]));
    const keys = new KeyAuthenticator(lookup, "management");
    const refusal = keys.authenticate(bearer(INFERENCE_KEY), "openai") as ProtocolError;
    expect([refusal.kind, refusal.message]).toEqual(["authentication", "invalid API key: this route takes management keys (sk-mgmt-...), not inference keys"]);
    expect((keys.authenticate(bearer("sk-other"), "openai") as ProtocolError).message).toBe("invalid API key");
    expect(calls).toEqual([]);
    expect(await keys.authenticate(bearer(managementKey), "openai")).toMatchObject({ keyId: "key_m" });
  });

  it("trusts a cache entry until, not at, its expiry, and reads it again only in the second half of its life", async () => {
    vi.useFakeTimers({ toFake: ["Date"], now: 1_000_000 });
    const { calls, lookup } = table(new Map([[keyDigest(INFERENCE_KEY), record()]]));
    const keys = new KeyAuthenticator(lookup, "inference", 100);
    await keys.authenticate(bearer(INFERENCE_KEY), "openai");
    // In the first half of its life (and at exactly half), answered from the cache with no read behind it.
    for (const at of [1_000_001, 1_000_049, 1_000_050]) {
      vi.setSystemTime(at);
      expect(keys.authenticate(bearer(INFERENCE_KEY), "openai"), String(at)).toMatchObject({ keyId: "key_1" });
    }
    expect(calls.length).toBe(1);
    vi.setSystemTime(1_000_051);
    expect(keys.authenticate(bearer(INFERENCE_KEY), "openai")).toMatchObject({ keyId: "key_1" });
    expect(calls.length).toBe(2);
    await Promise.resolve();
    // The background read (begun at 1_000_051) is trusted until 1_000_151, not at that instant.
    vi.setSystemTime(1_000_150);
    expect(keys.authenticate(bearer(INFERENCE_KEY), "openai")).not.toBeInstanceOf(Promise);
    vi.setSystemTime(1_000_151);
    expect(keys.authenticate(bearer(INFERENCE_KEY), "openai")).toBeInstanceOf(Promise);
  });

  it("renews a cached key from a record read elsewhere, only to trust it longer, never an uncached one or one read before forget()", async () => {
    vi.useFakeTimers({ toFake: ["Date"], now: 1_000_000 });
    const [used, other] = [inferenceKey("used"), inferenceKey("other")];
    const { calls, lookup } = table(new Map([[keyDigest(used), record()], [keyDigest(other), record({ id: "key_2" })]]));
    const keys = new KeyAuthenticator(lookup, "inference", 100);
    await keys.authenticate(bearer(used), "openai");
    // A commit read the key at 1_000_040 and found it revoked: the entry now says so, trusted until 1_000_140.
    keys.renew(keyDigest(used), record({ isActive: false }), 1_000_040);
    vi.setSystemTime(1_000_090);
    expect(keys.authenticate(bearer(used), "openai")).toBeInstanceOf(ProtocolError);
    expect(calls.length).toBe(1); // in the first half of the renewed life: no read of its own
    // An older read does not replace a newer entry.
    keys.renew(keyDigest(used), record(), 1_000_030);
    expect(keys.authenticate(bearer(used), "openai")).toBeInstanceOf(ProtocolError);
    // A read begun before forget() (the revocation may be newer) is not taken; one begun after is.
    vi.setSystemTime(1_000_200);
    await keys.authenticate(bearer(used), "openai");
    keys.forget(keyDigest(other));
    keys.renew(keyDigest(used), record({ isActive: false }), 1_000_200);
    expect(keys.authenticate(bearer(used), "openai")).toMatchObject({ keyId: "key_1" });
    keys.renew(keyDigest(used), record({ isActive: false }), 1_000_201);
    expect(keys.authenticate(bearer(used), "openai")).toBeInstanceOf(ProtocolError);
    // A key not cached here is not added.
    keys.renew(keyDigest(other), record({ id: "key_2" }), 1_000_201);
    expect(keys.authenticate(bearer(other), "openai")).toBeInstanceOf(Promise);
  });

  it("forgets one key without forgetting the others", async () => {
    const [first, second] = [inferenceKey("first"), inferenceKey("second")];
    const { lookup } = table(new Map([[keyDigest(first), record({ id: "key_a" })], [keyDigest(second), record({ id: "key_b" })]]));
    const keys = new KeyAuthenticator(lookup, "inference", 60_000);
    await keys.authenticate(bearer(first), "openai");
    await keys.authenticate(bearer(second), "openai");
    keys.forget(keyDigest(first));
    expect(keys.authenticate(bearer(first), "openai")).toBeInstanceOf(Promise);
    expect(keys.authenticate(bearer(second), "openai")).toMatchObject({ keyId: "key_b" });
  });

  it("shares the read begun after forget() even when the read forget() abandoned ends first", async () => {
    const gated = gatedTable(new Map([[keyDigest(INFERENCE_KEY), record()]]));
    const keys = new KeyAuthenticator(gated.lookup, "inference", 60_000);
    const abandoned = keys.authenticate(bearer(INFERENCE_KEY), "openai");
    keys.forget();
    const current = keys.authenticate(bearer(INFERENCE_KEY), "openai");
    gated.releaseNext();
    await abandoned;
    // Still one read in flight (the second): a third request waits for it rather than reading again.
    const third = keys.authenticate(bearer(INFERENCE_KEY), "openai");
    expect(gated.calls()).toBe(2);
    gated.releaseNext();
    expect(await current).toMatchObject({ keyId: "key_1" });
    expect(await third).toMatchObject({ keyId: "key_1" });
  });

  it("at its bound, drops expired entries before the oldest live ones, and never holds more than maxEntries", async () => {
    vi.useFakeTimers({ toFake: ["Date"], now: 0 });
    const [old, expiring, fresh, latest] = [inferenceKey("old"), inferenceKey("expiring"), inferenceKey("fresh"), inferenceKey("latest")];
    const { lookup } = table(new Map([old, expiring, fresh, latest].map((key, index) => [keyDigest(key), record({ id: `key_${index}` })])));
    const keys = new KeyAuthenticator(lookup, "inference", 100, 3);
    const cacheSize = () => (keys as unknown as { cache: Map<string, unknown> }).cache.size;
    await keys.authenticate(bearer(old), "openai");
    vi.setSystemTime(50);
    await keys.authenticate(bearer(expiring), "openai");
    // `old` expires at 100 and is read again (its entry keeps its place, first): trusted until 200.
    vi.setSystemTime(100);
    await keys.authenticate(bearer(old), "openai");
    vi.setSystemTime(120);
    await keys.authenticate(bearer(fresh), "openai");
    // At 150, full: `expiring` is expired (at exactly its expiry) and goes; `old`, older but live, stays.
    vi.setSystemTime(150);
    await keys.authenticate(bearer(latest), "openai");
    expect(cacheSize()).toBe(3);
    expect(keys.authenticate(bearer(old), "openai")).toMatchObject({ keyId: "key_0" });
    expect(keys.authenticate(bearer(fresh), "openai")).toMatchObject({ keyId: "key_2" });
    expect(keys.authenticate(bearer(latest), "openai")).toMatchObject({ keyId: "key_3" });
    // With every entry live, the oldest goes; the cache never grows past its bound, one key after another.
    const bounded = new KeyAuthenticator(table(new Map()).lookup, "inference", 60_000, 3);
    for (let i = 0; i < 10; i++) {
      await bounded.authenticate(bearer(inferenceKey(`k${i}`)), "openai");
      expect((bounded as unknown as { cache: Map<string, unknown> }).cache.size).toBe(Math.min(i + 1, 3));
    }
  });
});
